"""Fewer loop iterations: blocks that do the work of several.

One iteration of the batched loop runs one block, so a `while` whose body
holds an `if` costs four iterations per trip (test, branch, arm, join).  Two
classic rewrites bring it to one, and two more apply the same idea to calls
and returns:

- `if_convert`: a branch whose arms are short, straight and *safe* (plain
  arithmetic and comparisons: nothing that can raise or that costs much)
  runs both arms for every example into fresh variables and picks per
  example with `Select`s.  Every example computes both arms, which is why
  only cheap, non-raising arms qualify (`x // 2` does; `n // d` does not).
- `rotate_loops`: a short block that ends in a branch (a loop test) is
  copied onto the end of every block that jumps to it, so a loop body ends
  by testing and jumping back to itself.  A test that must stay (a
  function's entry) is copied only onto blocks it leads to: a tail call
  back to the entry (gcd) then loops in one block.
- `thread_entry_tests`: the same for calls.  A function whose entry block
  only tests its arguments (`if n <= 1:`, `if depth == 0:`) would spend one
  iteration per call on the test; each call site runs the test itself and
  jumps straight to the arm (`PushBranch`).  Recursive fib then takes two
  iterations per call instead of three.
- `return_at_call_sites`: a call site whose entry test leads into a block
  that only returns (`return 1`) runs that block itself; those examples
  skip the call, the others push the return address and go in.
- `merge_early_returns`: a branch between a block that only returns (`if not
  tree.ok: return tree`) and a block that goes on (here: the next call)
  becomes one block that does both, each example keeping its own path: the
  returning examples pop their return address, the others push and jump.

All keep every example's sequence of effects: only the grouping into blocks
changes.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List

from transpiler import types as T
from transpiler.ir import instructions as ir
from transpiler.passes import fusion, liveness

MAX_ARM = 8  # instructions per arm that if-conversion accepts
MAX_TEST = 6  # instructions of a loop test that rotation copies
MAX_RETURN = 4  # instructions of a returning arm that merge_early_returns takes

_SAFE_OPS = (
    ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor,
    ast.USub, ast.UAdd, ast.Not, ast.Invert,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)
_SAFE_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Name, ast.Load, ast.Constant,
    ast.Tuple,
    # A field of a namedtuple (`tree.minus`) reads no data: it cannot fail on junk.
    ast.Attribute,
) + _SAFE_OPS


def nonzero_constant(node) -> bool:
    """A literal divisor that cannot be zero: dividing by it never raises."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
        and node.value != 0
    )


def _safe_expr(text: str) -> bool:
    """Cheap and cannot raise on junk: arithmetic, comparisons, constants."""
    for node in ast.walk(ast.parse(text, mode="eval")):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            if not nonzero_constant(node.right):
                return False
            continue
        if isinstance(node, (ast.Div, ast.FloorDiv, ast.Mod)):
            continue
        if _is_spread(node):
            continue  # a constant given the batch axis (type_inference.spread)
        if not isinstance(node, _SAFE_NODES):
            return False
    return True


def _is_spread(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "spread"


def _safe(ins) -> bool:
    if isinstance(ins, ir.PrimOp):
        return isinstance(ins.vars_out, str) and _safe_expr(ins.expr)
    if isinstance(ins, ir.Select):
        return all(_safe_expr(t) for t in (ins.condition, ins.if_true, ins.if_false))
    if isinstance(ins, ir.Move):
        return all(isinstance(p, str) for p in ins.vars_out)
    return False


def _short(var):
    return var.split(".", 1)[1]


def _rename_expr(text: str, mapping: Dict[str, str]) -> str:
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
    return ast.unparse(tree)


class _Fresh:
    def __init__(self, program):
        self.taken = {name for name, _ in program.types}
        self.types = dict(program.types)

    def __call__(self, var, suffix):
        k = 1
        while f"{var}_{suffix}{k}" in self.taken:
            k += 1
        name = f"{var}_{suffix}{k}"
        self.taken.add(name)
        self.types[name] = self.types[var]
        return name


def if_convert(program: ir.LoweredProgram) -> ir.LoweredProgram:
    fresh = _Fresh(program)
    blocks = list(program.blocks)
    changed = True
    while changed:
        changed = False
        by_name = {b.name: b for b in blocks}
        preds, pinned = fusion.predecessors(blocks), fusion.pinned(blocks)
        for i, block in enumerate(blocks):
            t = block.terminator
            if not isinstance(t, ir.Branch) or t.true_target == t.false_target:
                continue
            arms = _arms(t, by_name, preds, pinned, fresh.types)
            if arms is None:
                continue
            then_arm, else_arm, join = arms
            merged = _merge(block, t, then_arm, else_arm, fresh)
            blocks[i] = dataclasses.replace(
                block,
                instructions=block.instructions + tuple(merged),
                terminator=ir.Goto(join, t.origin),
            )
            for arm in (then_arm, else_arm):
                if arm is not None:
                    blocks.remove(arm)
            changed = True
            break
    return dataclasses.replace(
        program, blocks=tuple(blocks), types=tuple(sorted(fresh.types.items()))
    )


def _convertible_arm(name, join, by_name, preds, pinned, types):
    """The block `name` if it is a short safe arm that falls through to `join`."""
    arm = by_name[name]
    if name in pinned or preds[name] != 1:
        return None
    if not isinstance(arm.terminator, ir.Goto) or arm.terminator.target != join:
        return None
    if len(arm.instructions) > MAX_ARM or not all(_safe(i) for i in arm.instructions):
        return None
    for ins in arm.instructions:
        for var in liveness.defs(ins):
            if not _selectable(types.get(var)):
                return None
    return arm


def _selectable(pattern) -> bool:
    """A value a Select can choose per example: tensors, tuples of tensors."""
    if isinstance(pattern, T.TupleType):
        return bool(pattern.elements) and all(_selectable(e) for e in pattern.elements)
    return isinstance(pattern, T.TensorType)


def _arms(t, by_name, preds, pinned, types):
    """(then arm or None, else arm or None, join) for a diamond or a triangle."""
    true_block, false_block = by_name[t.true_target], by_name[t.false_target]
    # diamond: both arms jump to the same join
    if isinstance(true_block.terminator, ir.Goto) and isinstance(false_block.terminator, ir.Goto):
        join = true_block.terminator.target
        if false_block.terminator.target == join and join not in (t.true_target, t.false_target):
            a = _convertible_arm(t.true_target, join, by_name, preds, pinned, types)
            b = _convertible_arm(t.false_target, join, by_name, preds, pinned, types)
            if a is not None and b is not None:
                return a, b, join
    # triangle: one arm, then the other target is the join
    if isinstance(true_block.terminator, ir.Goto) and true_block.terminator.target == t.false_target:
        a = _convertible_arm(t.true_target, t.false_target, by_name, preds, pinned, types)
        if a is not None:
            return a, None, t.false_target
    if isinstance(false_block.terminator, ir.Goto) and false_block.terminator.target == t.true_target:
        b = _convertible_arm(t.false_target, t.true_target, by_name, preds, pinned, types)
        if b is not None:
            return None, b, t.true_target
    return None


def _merge(block, t, then_arm, else_arm, fresh) -> List:
    """Both arms into fresh variables, then one Select per variable they write."""
    out = []
    condition = fresh(t.condition, "test")
    out.append(ir.Move((condition,), (t.condition,), t.origin))
    results = []
    for arm in (then_arm, else_arm):
        mapping: Dict[str, str] = {}  # variable -> its fresh name in this arm
        for ins in arm.instructions if arm is not None else ():
            short_map = {_short(v): _short(mapping[v]) for v in ins.vars_in if v in mapping}
            vars_in = tuple(mapping.get(v, v) for v in ins.vars_in)
            if isinstance(ins, ir.Move):
                outs = []
                for p in ins.vars_out:
                    mapping[p] = fresh(p, "arm")
                    outs.append(mapping[p])
                out.append(dataclasses.replace(ins, vars_out=tuple(outs), vars_in=vars_in))
                continue
            renamed = {}
            for v in liveness.defs(ins):
                renamed[v] = fresh(v, "arm")
            if isinstance(ins, ir.PrimOp):
                new = dataclasses.replace(
                    ins,
                    vars_in=vars_in,
                    vars_out=renamed[ins.vars_out],
                    expr=_rename_expr(ins.expr, short_map),
                )
            else:  # Select
                new = dataclasses.replace(
                    ins,
                    vars_in=vars_in,
                    vars_out=renamed[ins.vars_out],
                    condition=_rename_expr(ins.condition, short_map),
                    if_true=_rename_expr(ins.if_true, short_map),
                    if_false=_rename_expr(ins.if_false, short_map),
                )
            mapping.update(renamed)
            out.append(new)
        results.append(mapping)
    then_map, else_map = results
    written = list(dict.fromkeys(list(then_map) + list(else_map)))
    for var in written:
        a, b = then_map.get(var, var), else_map.get(var, var)
        out.append(
            ir.Select(
                tuple(dict.fromkeys((condition, a, b))),
                var,
                _short(condition),
                _short(a),
                _short(b),
                t.origin,
            )
        )
    return out


def rotate_loops(program: ir.LoweredProgram) -> ir.LoweredProgram:
    """Copies short safe branch blocks (loop tests) onto the blocks that jump to them."""
    blocks = list(program.blocks)
    pinned = fusion.pinned(blocks)
    for test in list(blocks):
        t = test.terminator
        if not _short_test(test):
            continue
        jumped = False
        for i, block in enumerate(blocks):
            if isinstance(block.terminator, ir.Goto) and block.terminator.target == test.name:
                if block.name == test.name:
                    continue
                if test.name in pinned and block.name not in (t.true_target, t.false_target):
                    continue  # the test stays anyway: copy it only where that closes a loop
                blocks[i] = dataclasses.replace(
                    block, instructions=block.instructions + test.instructions, terminator=t
                )
                jumped = True
        # A pinned test (a function's entry, main's first block) stays for the
        # examples that enter it other than by a jump; it is copied only onto
        # a block it leads to, which then loops by itself: gcd's tail call
        # tests `if a == b:` and subtracts again in one block.
        if jumped and test.name not in pinned and fusion.predecessors(blocks)[test.name] == 0:
            blocks = [b for b in blocks if b.name != test.name]
    return dataclasses.replace(program, blocks=tuple(blocks))


def _short_test(block) -> bool:
    """A block worth copying to its predecessors: a few instructions and a branch.

    Unlike an if-converted arm, a copied test runs for the same examples
    that would have run it one iteration later, on the same values, so it
    need not be safe on values it would never see: a primitive call
    (`while abs(x * x - a) > tol:`) rotates like an operator.  Junk lanes
    compute it either way (every block runs for the whole batch).  Only
    plain assignments qualify (no tuple targets, no calls of batched
    functions, which are not `PrimOp`s).
    """
    t = block.terminator
    return (
        isinstance(t, ir.Branch)
        and block.name not in (t.true_target, t.false_target)
        and len(block.instructions) <= MAX_TEST
        and all(_copyable(i) for i in block.instructions)
    )


def _copyable(ins) -> bool:
    """An instruction a loop test may hold and rotation may copy: it defines
    named variables and has no effect but its value."""
    if isinstance(ins, ir.PrimOp):
        return isinstance(ins.vars_out, str)
    return _safe(ins)


def thread_entry_tests(program: ir.LoweredProgram) -> ir.LoweredProgram:
    """Calls to an entry block that only tests (see `_short_test`) test at the call site.

    The copied instructions read the callee's parameter registers, which the
    call has just written, so every example computes the same test on the
    same values one iteration earlier.  An entry no call reaches any more is
    dropped (main's entry stays: the driver starts there).
    """
    blocks = list(program.blocks)
    by_name = {b.name: b for b in blocks}
    for i, block in enumerate(blocks):
        t = block.terminator
        if not isinstance(t, ir.PushGoto) or not _short_test(by_name[t.target]):
            continue
        entry = by_name[t.target]
        test = entry.terminator
        blocks[i] = dataclasses.replace(
            block,
            instructions=block.instructions + entry.instructions,
            terminator=ir.PushBranch(
                t.return_block,
                test.condition,
                test.true_target,
                test.false_target,
                t.caller,
                t.origin,
            ),
        )
    entered = fusion.pinned(blocks) | set(fusion.predecessors(blocks))
    blocks = [b for b in blocks if b.name in entered]
    return dataclasses.replace(program, blocks=tuple(blocks))


def return_at_call_sites(program: ir.LoweredProgram) -> ir.LoweredProgram:
    """A callee that returns at once does so at the call site.

    After `thread_entry_tests`, fib's call sites branch on the callee's
    `n <= 1` straight into `return 1`: half of all calls (the leaves) spent
    an iteration only setting the return value and popping the address the
    call had just pushed.  Such a call site now runs that short returning
    block itself, and its examples go straight to the return block; only the
    others push the return address (`PushBranch.returned_when`).  Every
    example of the call site computes the returning block, so it must be
    safe (see `_safe`), write nothing that the other target reads, and leave
    the condition alone.  A `PushGoto` into a block that only returns (a
    trivial callee) becomes a `Goto` to the return block.  Recursive fib then
    takes 1.5 iterations per call instead of 2.
    """
    blocks = list(program.blocks)
    changed = True
    while changed:
        changed = False
        live_in, _ = liveness.block_liveness(dataclasses.replace(program, blocks=tuple(blocks)))
        by_name = {b.name: b for b in blocks}
        for i, block in enumerate(blocks):
            returned = _returned_at_call(block, by_name, live_in)
            if returned is None:
                returned = _continued_at_call(block, by_name, live_in)
            if returned is not None:
                blocks[i] = returned
                changed = True
                break
    entered = fusion.pinned(blocks) | set(fusion.predecessors(blocks))
    blocks = [b for b in blocks if b.name in entered]
    return dataclasses.replace(program, blocks=tuple(blocks))


def _defs(instructions) -> set:
    """Every variable the instructions write."""
    return {v for i in instructions for v in liveness.defs(i)}


def _returns_at_once(block) -> bool:
    """A few safe instructions, then a return."""
    return (
        isinstance(block.terminator, ir.IndirectGoto)
        and len(block.instructions) <= MAX_RETURN
        and all(_safe(i) for i in block.instructions)
    )


def _returned_at_call(block, by_name, live_in):
    """`block` with its callee's immediate return done in place, or None."""
    t = block.terminator
    if isinstance(t, ir.PushGoto) and _returns_at_once(by_name[t.target]):
        return dataclasses.replace(
            block,
            instructions=block.instructions + by_name[t.target].instructions,
            terminator=ir.Goto(t.return_block, t.origin),
        )
    if not isinstance(t, ir.PushBranch) or t.returned_when is not None:
        return None
    for returning, going, when in (
        (t.true_target, t.false_target, True),
        (t.false_target, t.true_target, False),
    ):
        ret = by_name[returning]
        if returning == going or not _returns_at_once(ret):
            continue
        ret_defs = _defs(ret.instructions)
        if t.condition in ret_defs or ret_defs & live_in[going]:
            continue
        true_target, false_target = (t.return_block, going) if when else (going, t.return_block)
        return dataclasses.replace(
            block,
            instructions=block.instructions + ret.instructions,
            terminator=dataclasses.replace(
                t, true_target=true_target, false_target=false_target, returned_when=when
            ),
        )
    return None


def _continued_at_call(block, by_name, live_in):
    """A call site whose returned examples then return themselves: a `ReturnIf`.

    After the first rewrite, fib's second call site sends the examples whose
    callee returned at once to the return block, which only pops `fib_1`,
    adds and returns.  When that block pops exactly what this block pushed
    (and this block wrote none of it after pushing), those examples can run
    it here: the registers still hold the pushed values, so the pops go, the
    pushes (moved after the condition) and the return address are masked to
    the examples that enter the call, and the others return in this
    iteration.  The continuation's other
    instructions must be safe and write nothing the callee's entry reads.
    """
    t = block.terminator
    if not isinstance(t, ir.PushBranch) or t.returned_when is None:
        return None
    going = t.false_target if t.returned_when else t.true_target
    after = by_name[t.return_block]
    if not isinstance(after.terminator, ir.IndirectGoto) or going == t.return_block:
        return None
    pops = [i for i in after.instructions if isinstance(i, ir.Pop)]
    rest = [i for i in after.instructions if not isinstance(i, ir.Pop)]
    if len(rest) > MAX_RETURN or not all(_safe(i) for i in rest):
        return None
    popped = [v for i in pops for v in i.variables]
    pushed = []
    for k, ins in enumerate(block.instructions):
        if isinstance(ins, ir.Push):
            later = _defs(block.instructions[k + 1 :])
            if later & set(ins.variables):
                return None  # the register no longer holds the pushed value
            pushed.extend(ins.variables)
    if sorted(popped) != sorted(pushed) or len(set(pushed)) != len(pushed):
        return None
    rest_defs = _defs(rest)
    if t.condition in rest_defs or rest_defs & live_in[going]:
        return None
    # The pushes move after the condition (the mask of the examples going
    # on needs it); their registers keep the pushed values until then.
    kept = [i for i in block.instructions if not isinstance(i, ir.Push)]
    pushes = [
        dataclasses.replace(i, going_only=True)
        for i in block.instructions
        if isinstance(i, ir.Push)
    ]
    call = ir.PushGoto(t.return_block, going, t.caller, t.origin)
    return dataclasses.replace(
        block,
        instructions=tuple(kept + pushes + rest),
        terminator=ir.ReturnIf(t.condition, call, t.returned_when, t.origin),
    )


def merge_early_returns(program: ir.LoweredProgram) -> ir.LoweredProgram:
    """A branch to a returning arm and a going-on arm becomes one `ReturnIf` block.

    NUTS's `if not tree.ok: return tree` then the second recursive call took
    three loop iterations (test, return or call); merged they take one.
    Every example runs both arms' instructions, so both must be safe (see
    `_safe`) and neither may clobber what the other path reads: the
    returning arm's writes must be dead where the other arm starts, and the
    other arm's writes dead after a return.  The other arm's pushes are
    masked (`Push.going_only`) to the examples that do not return; it may not
    pop (that would move the returning examples' stacks too).
    """
    blocks = list(program.blocks)
    changed = True
    while changed:
        changed = False
        live_in, live_out = liveness.block_liveness(dataclasses.replace(program, blocks=tuple(blocks)))
        by_name = {b.name: b for b in blocks}
        preds, pinned = fusion.predecessors(blocks), fusion.pinned(blocks)
        for i, block in enumerate(blocks):
            t = block.terminator
            if not isinstance(t, ir.Branch) or t.true_target == t.false_target:
                continue
            for returning, going, negate in (
                (t.true_target, t.false_target, False),
                (t.false_target, t.true_target, True),
            ):
                merged = _merged_return(
                    block, by_name, returning, going, negate, preds, pinned, live_in, live_out
                )
                if merged is not None:
                    break
            else:
                continue
            blocks[i] = merged
            blocks.remove(by_name[returning])
            blocks.remove(by_name[going])
            changed = True
            break
    return dataclasses.replace(program, blocks=tuple(blocks))


def _merged_return(block, by_name, returning, going, negate, preds, pinned, live_in, live_out):
    """`block` with both arms merged, or None if the rewrite does not apply."""
    t = block.terminator
    ret, on = by_name[returning], by_name[going]
    if {returning, going} & pinned or preds[returning] != 1 or preds[going] != 1:
        return None
    if not _returns_at_once(ret):
        return None
    if not isinstance(on.terminator, (ir.Goto, ir.Branch, ir.PushGoto, ir.PushBranch)):
        return None
    if block.name in liveness.successors(on.terminator):
        return None  # a loop back into the branch: keep it a loop
    if not all(_safe(i) or isinstance(i, ir.Push) for i in on.instructions):
        return None
    ret_defs, on_defs = _defs(ret.instructions), _defs(on.instructions)
    if ret_defs & live_in[going] or on_defs & live_out[returning]:
        return None
    if t.condition in ret_defs | on_defs:
        return None
    pushed_here = {v for i in block.instructions if isinstance(i, ir.Push) for v in i.variables}
    pushed_on = {v for i in on.instructions if isinstance(i, ir.Push) for v in i.variables}
    if pushed_here & pushed_on:
        return None  # one write per stack and block
    instructions = list(block.instructions) + list(ret.instructions)
    for ins in on.instructions:
        if isinstance(ins, ir.Push):
            ins = dataclasses.replace(ins, going_only=True)
        instructions.append(ins)
    return dataclasses.replace(
        block,
        instructions=tuple(instructions),
        terminator=ir.ReturnIf(t.condition, on.terminator, not negate, t.origin),
    )
