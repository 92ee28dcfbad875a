"""One block function's statements: the block's instructions, masked.

`_BlockBody` writes the body of one block function of a program
(transpiler/emit/program.py): `active = state.pc == BLOCK`, the block's
inputs read from the state, one statement per instruction with the source
line it came from, the checks of subscripts that differ per example; its
end (stacks, calls, returns, the state update) is block_end.py's.
"""

from __future__ import annotations

import ast
import copy
from typing import Dict, List

from autobatch_runtime import python_errors
from autobatch_runtime.common import NEGATIVE_POWER
from transpiler import types as T
from transpiler.emit.block_end import BlockEnd
from transpiler.emit.syntax import (  # the emitters' shared builders
    _EXPRESSION_HELPERS,
    _attr,
    _call,
    _function_of,
    _helper,
    _index,
    _index_check,
    _negative_power,
    _python_errors,
    _leaf_paths,
    _name,
    _put_of,
    _ragged_take,
    _runtime,
    _safe,
    _short,
    _target,
)
from transpiler.emit.template import comment
from transpiler.ir import instructions as ir
from transpiler.passes import liveness


class _BlockBody(BlockEnd):
    """The statements of one block function."""

    def __init__(self, emitter, index: int, block: ir.Block):  # a _ProgramEmitter
        self.e = emitter
        self.index = index
        self.block = block
        self.out: List[ast.stmt] = []
        self.locals: Dict[str, str] = {}
        self.taken = set()
        self.stack_written: List[str] = []  # stacks this block writes (one write each)
        self.write_keywords: List[ast.keyword] = []  # rt.stack_writes's: returns=..., **saved_1
        self.return_moved = False  # whether it pushed or popped a return address
        self.overflows: List[str] = []
        self.overflow_name = "overflow"  # the [batch] bool of examples that overflowed (finish_terminator)
        self.faults: List[tuple] = []  # (local [batch] bool: examples indexing out of range, INDEX_LINES entry)
        self.written: List[str] = []
        self.going_mask = None  # the mask of examples going on, in a ReturnIf block
        self.masked: Dict[str, str] = {}  # written variable -> its field, masked early (early_masks)
        self.row_puts: Dict[int, str] = {}  # position -> variable whose put masks its rows (masked_puts)
        self.position = None  # of the instruction being emitted

    def local(self, var):
        if var not in self.locals:
            own = _function_of(var) == self.block.function and _short(var) != "return"
            base = _short(var) if own else var.replace(".", "_")
            name = _safe(base, self.taken)
            self.taken.add(name)
            self.locals[var] = name
        return self.locals[var]

    def statements(self):
        b = self.block
        if b.origin is not None:
            self.out.append(comment(f"{b.origin}  {b.origin.text}"))
        self.out.append(
            ast.Assign(
                [_name("active", True)],
                ast.Compare(_attr("state", "pc"), [ast.Eq()], [ast.Constant(self.index)]),
            )
        )
        self.load_inputs()
        line = b.origin.line if b.origin else None
        self.row_puts = self.masked_puts()
        early = self.early_masks()
        for position, ins in enumerate(b.instructions + (b.terminator,)):
            self.position = position
            origin = ins.origin
            if origin is not None and origin.line != line and not isinstance(
                ins, (ir.Pop, ir.Peek, ir.Move, ir.Push)
            ):
                # A new source line: quote it, so readers (and error notes) can map back.
                self.out.append(comment(f"{origin}  {origin.text}"))
                line = origin.line
            self.origin = origin or b.origin
            if ins is b.terminator:
                self.terminator(ins)
            else:
                self.instruction(ins)
            for var in early.get(position, ()):
                self.mask(var)
        self.out.append(self.updates())
        return self.out

    def early_masks(self):
        """Written variables that later instructions read, by the position of
        their last definition (instruction index in the block).

        Such a variable is masked where it is last defined rather than in the
        state update: the instructions after it then read the value the state
        will hold, which is the same for the examples at this block.  Masked at
        the end, XLA computed it twice per run, once masked for the state and
        once unmasked for the reader: Collatz's `x != 1` after `x = ...` (its
        loop trip took 1.5x as long).  Copies and constants stay unmasked:
        they cost nothing to read twice, and a constant folds into its reader.
        (Other examples' values are the state's junk, zeros among them: an
        integer divisor that differs per example is `divisor_or_one(d)`,
        passes/broadcast.py.)
        """
        body = self.block.instructions + (self.block.terminator,)
        last_def = {}  # var -> position of its last definition, if that computes it
        for position, ins in enumerate(body):
            computed = isinstance(ins, (ir.PrimOp, ir.Select)) and bool(ins.vars_in)
            for var in liveness.defs(ins):
                if computed:
                    last_def[var] = position
                else:
                    last_def.pop(var, None)  # a copy or a constant: nothing to compute twice
        early: Dict[int, List[str]] = {}
        for var, position in last_def.items():
            if var in self.row_puts.values():
                continue  # masked row by row in its put (masked_puts)
            if self.masked_write(var) is not None and any(
                var in liveness.uses(ins) for ins in body[position + 1 :]
            ):
                early.setdefault(position, []).append(var)
        return early

    def masked_puts(self):
        """Item assignments masked by the row they write: {position: var}.

        `v = put(v, items, x)`, the only definition of `v` in this block (so
        it reads the state's `v` and is what the state keeps), becomes
        `v = put(v, items, select(active, x, take(v, items)))`: an example
        not at this block writes its own row back (its junk index is
        clipped, as every read's), so `v` needs no `select` over the whole
        array.  For a buffer that a chain fills a row at a time
        (`draws[t] = x`, [batch, rows, dims]) the `select` would read and
        write every row of every example each time the block runs; the
        masked put touches [batch, dims].
        """
        body = self.block.instructions + (self.block.terminator,)
        definitions: Dict[str, List[int]] = {}
        for position, ins in enumerate(body):
            for var in liveness.defs(ins):
                definitions.setdefault(var, []).append(position)
        puts = {}
        for var, positions in definitions.items():
            ins = body[positions[0]]
            if (
                len(positions) == 1
                and isinstance(ins, ir.PrimOp)
                and ins.vars_out == var
                and not ins.cast_to
                and self.masked_write(var) is not None
                and _put_of(ins.expr, _short(var))
            ):
                puts[positions[0]] = var
        return puts

    def masked_write(self, var):
        """The state field of a one-leaf variable this block writes with a
        `select`, or None (a temporary, a tuple, a dead vector)."""
        leaves = self.e.fields.get(var, [])
        if len(leaves) != 1 or leaves[0][0] != ():
            return None
        _, leaf, field = leaves[0]
        if var not in self.e.live_out[self.block.name] and leaf.shape:
            return None
        return field

    def mask(self, var):
        """`var = select(active, var, state.<field>)`: from here on it holds its
        new value at this block's examples and the state's elsewhere."""
        field = self.masked_write(var)
        self.out.append(
            ast.Assign(
                [_name(self.local(var), True)],
                _call("select", _name("active"), _name(self.local(var)), _attr("state", field)),
            )
        )
        self.masked[var] = field

    def load_inputs(self):
        written = set()
        for ins in self.block.instructions + (self.block.terminator,):
            for v in liveness.uses(ins):
                if v not in written and v not in self.locals:
                    self.out.append(ast.Assign([_name(self.local(v), True)], self.load(v)))
            written.update(liveness.defs(ins))

    def load(self, var):
        if var in self.e.properties:
            return _attr("state", self.e.properties[var])
        pattern = self.e.types[var]
        leaves = [_attr("state", field) for _, _, field in self.e.fields.get(var, [])]
        return self.e.rebuild(pattern, leaves)

    def defined(self, var):
        if var not in self.written:
            self.written.append(var)

    def target(self, pattern):
        if isinstance(pattern, str) and pattern.startswith("*"):
            return ast.Starred(self.target(pattern[1:]), ast.Store())
        if isinstance(pattern, str):
            self.defined(pattern)
            return _name(self.local(pattern), True)
        return ast.Tuple([self.target(p) for p in pattern], ast.Store())

    def rename(self, expr, vars_in):
        tree = ast.parse(expr, mode="eval").body
        mapping = {_short(v): self.local(v) for v in vars_in}
        free = self.e.free_names

        class Renamer(ast.NodeTransformer):
            def visit_Name(self, node):
                if node.id in mapping:
                    return ast.copy_location(ast.Name(mapping[node.id], node.ctx), node)
                if node.id in free:
                    return ast.copy_location(ast.Name(free[node.id], node.ctx), node)
                if node.id in _EXPRESSION_HELPERS:
                    return ast.copy_location(_runtime(node.id), node)
                return node

        return Renamer().visit(tree)

    def instruction(self, ins):
        if isinstance(ins, ir.PrimOp):
            value = self.rename(ins.expr, ins.vars_in)
            self.check_indices(value)
            if ins.cast_to:
                value = _call("cast", value, ins.cast_to)
            if self.position in self.row_puts:
                array, items, new = value.args
                old = _call("take", copy.deepcopy(array), copy.deepcopy(items))
                value.args[2] = _call("select", _name("active"), new, old)
                self.masked[ins.vars_out] = self.masked_write(ins.vars_out)
            if ins.vars_out is None and _helper(value.func if isinstance(value, ast.Call) else None) == "py_bound":
                return  # only its fault flag (check_indices): passes/unbound.py
            if ins.vars_out is None:
                self.out.append(ast.Expr(value))
            else:
                self.out.append(ast.Assign([self.target(ins.vars_out)], value))
        elif isinstance(ins, ir.Select):
            sides = [self.rename(e, ins.vars_in) for e in (ins.if_true, ins.if_false)]
            if ins.cast_to:
                sides = [_call("cast", side, ins.cast_to) for side in sides]
            condition = self.rename(ins.condition, ins.vars_in)
            pattern = self.e.types.get(ins.vars_out)
            if isinstance(pattern, T.TupleType):
                self.tuple_select(ins.vars_out, pattern, condition, sides)
                return
            self.out.append(
                ast.Assign([self.target(ins.vars_out)], _call("where", condition, *sides))
            )
        elif isinstance(ins, ir.Call):
            self.direct_call(ins)
        elif isinstance(ins, ir.Move):
            values = []
            for out, v in zip(ins.vars_out, ins.vars_in):
                value = _name(self.local(v))
                source, target = self.e.types.get(v), self.e.types.get(out)
                if (
                    isinstance(source, T.TensorType)
                    and isinstance(target, T.TensorType)
                    and source.dtype != target.dtype
                ):  # a literal's type met a stronger one: convert, as Python would
                    value = _call("cast", value, target.dtype.name)
                values.append(value)
            targets = [self.target(p) for p in ins.vars_out]
            pairs = [
                (t, v)
                for t, v in zip(targets, values)
                if not (isinstance(t, ast.Name) and isinstance(v, ast.Name) and t.id == v.id)
            ]
            read_later = [
                {n.id for v in values[k + 1 :] for n in ast.walk(v) if isinstance(n, ast.Name)}
                for k in range(len(values))
            ]
            together = ast.Assign(
                [_target(targets)],
                values[0] if len(values) == 1 else ast.Tuple(values, ast.Load()),
            )
            # black's lines for it: one, or the targets one a line and more
            text = ast.unparse(ast.fix_missing_locations(copy.deepcopy(together)))
            lines = 1 if len(text) <= 80 else len(targets) + 2
            if (
                len(pairs) < lines
                and all(isinstance(t, ast.Name) for t in targets)
                and all(t.id not in read_later[targets.index(t)] for t, _ in pairs)
            ):
                # one assignment a line, in order (none reads a name set before
                # it), less those of a name to itself
                self.out.extend(ast.Assign([t], v) for t, v in pairs)
                return
            self.out.append(together)
        elif isinstance(ins, ir.Push):
            values = {}
            for var in ins.variables:
                value = _name(self.local(var))
                for path, _, field in self.e.fields[var]:
                    values[field] = _index(value, path)
            self.save_all(values, self.going() if ins.going_only else None)
        elif isinstance(ins, (ir.Pop, ir.Peek)):
            for var in ins.variables:
                self.restore(var)
        else:
            raise TypeError(f"unexpected instruction {ins!r}")

    def new_fault(self, kind=""):
        """A new fault flag of this block (`fault_<k>`), with the line the
        entry names when an example raises there (after `kind`, which tells
        the runtime which error it is: common.NEGATIVE_POWER, or a subscript)."""
        flag = f"fault_{len(self.faults) + 1}"
        self.faults.append((flag, len(self.e.index_lines)))
        origin = self.origin
        self.e.index_lines.append(
            kind
            + (f"in {self.block.function} at {origin}: {origin.text}" if origin else f"in {self.block.function}")
        )
        return flag

    def check_indices(self, value):
        """`fault_1 = index_fault(active, v, (i,))` for each `take`, `lookup`
        and `put` in `value` that indexes by a per-example value: the active
        examples whose index is out of range stop at this block, and the
        entry raises IndexError (as each would on its own); and
        `fault_2 = python_error(active, "ZeroDivisionError", "divide", d)`
        for each error Python may raise at a division, `math` function,
        power or int conversion of per-example numbers (python_errors.py).
        The operands are repeated (cheap, pure; XLA computes them once)."""
        for node in _evaluation_order(value):
            raises = _python_errors(node)
            if raises is not None:
                operation, operands, errors = raises
                for error, message, *check in errors:
                    flag = self.new_fault(python_errors.line_entry(error, message, ""))
                    test = check[0] if check else operation
                    arguments = [_name("active"), ast.Constant(error), ast.Constant(test)]
                    arguments += [copy.deepcopy(o) for o in operands]
                    self.out.append(
                        ast.Assign([_name(flag, True)], ast.Call(_runtime("python_error"), arguments, []))
                    )
            if _negative_power(node):
                flag = self.new_fault(NEGATIVE_POWER)
                arguments = [_name("active"), copy.deepcopy(node.args[0])]
                self.out.append(ast.Assign([_name(flag, True)], ast.Call(_runtime("negative_power"), arguments, [])))
            if _ragged_take(node):
                flag = self.new_fault()
                arguments = [_name("active"), copy.deepcopy(node.args[0]), copy.deepcopy(node.args[1])]
                self.out.append(ast.Assign([_name(flag, True)], ast.Call(_runtime("ragged_fault"), arguments, [])))
            if _index_check(node):
                flag = self.new_fault()
                arguments = [_name("active"), copy.deepcopy(node.args[0]), copy.deepcopy(node.args[1])]
                keywords = [ast.keyword("batched", ast.Constant(False))] if _helper(node.func) == "lookup" else []
                self.out.append(
                    ast.Assign([_name(flag, True)], ast.Call(_runtime("index_fault"), arguments, keywords))
                )

    def tuple_select(self, var, pattern, condition, sides):
        """A per-example choice between two tuples: one `where` per leaf."""
        names = []
        for label, value in zip(("chosen", "when_true", "when_false"), (condition, *sides)):
            if isinstance(value, ast.Name):
                names.append(value)
                continue
            name = _safe(label, self.taken)
            self.taken.add(name)
            self.out.append(ast.Assign([_name(name, True)], value))
            names.append(_name(name))
        chosen, when_true, when_false = names
        leaves = [
            _call("where", chosen, _index(when_true, path), _index(when_false, path))
            for path, _, _ in _leaf_paths(pattern)
        ]
        self.out.append(ast.Assign([self.target(var)], self.e.rebuild(pattern, leaves)))

    def direct_call(self, call):
        """Stackless: run the callee's own loop now, for the examples at this block."""
        callee = self.e.stackless[0][call.function]
        arguments = []
        for var, pattern in zip(call.vars_in, callee.params):
            value = _name(self.local(var))
            arguments += [_index(value, path) for path, _, _ in _leaf_paths(pattern)]
        arguments.append(_name("active"))
        result = _safe(f"{call.function}_result", self.taken)
        self.taken.add(result)
        self.out.append(ast.Assign([_name(result, True)], ast.Call(_name(callee.program), list(arguments), [])))
        if call.vars_out is None:
            return
        leaves = _leaf_paths(callee.result)
        value = self.e.rebuild(
            callee.result,
            [ast.Subscript(_name(result), ast.Constant(k), ast.Load()) for k in range(len(leaves))],
        )
        target_type = self.e.types.get(call.vars_out) if isinstance(call.vars_out, str) else None
        if (
            isinstance(target_type, T.TensorType)
            and isinstance(callee.result, T.TensorType)
            and target_type.dtype != callee.result.dtype
        ):
            value = _call("cast", value, target_type.dtype.name)
        self.out.append(ast.Assign([self.target(call.vars_out)], value))


def _evaluation_order(node):
    """`node` and the nodes inside it in the order Python evaluates them
    (operands before the operation, left to right), so that an example
    that would fail twice is reported at the first (`a % b, math.fmod(a, b)`
    with b == 0: ZeroDivisionError)."""
    for child in ast.iter_child_nodes(node):
        yield from _evaluation_order(child)
    yield node
