"""Stages 3-4: canonicalize the fenced AST and build a control-flow graph.

One walk over the statements does both jobs:

- *A-normal form*: every call of a batched function is hoisted out of its
  expression into a `Call` whose arguments are variables and whose result is
  a fresh variable; what is left of the expression becomes one `PrimOp`.
  `return fib(n - 1) + fib(n - 2)` becomes

      fib_1_n = n - 1          PrimOp
      fib_1 = fib(fib_1_n)     Call
      fib_2_n = n - 2          PrimOp
      fib_2 = fib(fib_2_n)     Call
      result_1 = fib_1 + fib_2 PrimOp
      return result_1          Return

- *Structured control flow to a CFG*: `if`, `while`, `break`, `continue` and
  early `return` become blocks joined by `Goto`/`Branch`/`Return`, so no
  rewrite of early exits into flags is needed.

- *Python's statements in canonical form*: item assignments inside tuple
  targets and chained assignments run in Python's order
  (`assign_in_order`); `for` over arrays, `enumerate`, `zip` and `reversed`
  becomes a counted loop reading elements by subscript (`for_each`); a list
  comprehension of a length known when the program is built becomes
  `repeat(x, n)` or a loop that fills an array (`list_comprehension`).

Variables are mutable registers of the function, so rebinding (`x = x + 1`)
and swaps (`a, b = b, a`, evaluated as one tuple assignment) need no renaming.
Fresh names come from source names plus a counter and never collide with the
user's names.
"""

from __future__ import annotations

import builtins
import copy
from typing import Dict, List, Sequence

import gast

from transpiler.errors import UnsupportedSyntaxError
from transpiler.frontend import narrowing
from transpiler.frontend.fence import local_names
from transpiler.frontend.iterables import item_roots, is_range_call, iterable, stores, target_names
from transpiler.frontend.static_lengths import static_count
from transpiler.frontend.source import FunctionSource, origin_of
from transpiler.ir import instructions as ir
from transpiler.markers import truthy


def build(
    source: FunctionSource, batched_params: Dict[str, Sequence[str]]
) -> ir.Function:
    """Builds the IR function of one fenced source.

    `batched_params` maps every batched function of the context to its
    parameters, [(name, default value or NO_DEFAULT)]: calls may use keywords
    and leave out parameters that have (literal) defaults.
    """
    return _FunctionBuilder(source, batched_params).build()


class _PendingBlock:
    def __init__(self, name, origin):
        self.name = name
        self.origin = origin
        self.instructions: List = []
        self.terminator = None


class _FunctionBuilder:
    def __init__(self, source: FunctionSource, batched_params):
        self.source = source
        # Reads that a None-guard has made safe are marked (frontend/narrowing.py)
        self.fn = narrowing.narrow(source.node)
        self.batched_params = batched_params
        self.locals = local_names(self.fn)
        self.namespace = {**source.globals, **source.closure}
        self.used_names = set(self.locals)
        self.counters: Dict[str, int] = {}
        self.blocks: List[_PendingBlock] = []
        self.loops: List[tuple] = []  # (continue_target, break_target)
        self.free_names: List[str] = []
        self.last_origin = None  # of the latest statement built (implicit returns)
        self.current = self.new_block(None)  # takes its first statement's origin

    # ---- blocks ----------------------------------------------------------

    def new_block(self, origin) -> _PendingBlock:
        block = _PendingBlock(f"{self.source.name}_{len(self.blocks)}", origin)
        self.blocks.append(block)
        return block

    def emit(self, instruction):
        if self.current.origin is None:
            self.current.origin = instruction.origin
        self.current.instructions.append(instruction)

    def terminate(self, terminator):
        if self.current.terminator is None:
            self.current.terminator = terminator

    def start(self, block):
        self.current = block

    # ---- names -----------------------------------------------------------

    def fresh(self, base: str, exact_first: bool = False) -> str:
        if exact_first and base not in self.used_names:
            self.used_names.add(base)
            return base
        while True:
            k = self.counters.get(base, 0) + 1
            self.counters[base] = k
            name = f"{base}_{k}"
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def is_batched_call(self, node) -> bool:
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id in self.batched_params
            and node.func.id not in self.locals
        )

    # ---- the walk --------------------------------------------------------

    def build(self) -> ir.Function:
        for stmt in self.fn.body:
            self.statement(stmt)
        # Falling off the end returns None; an error about it names the last
        # statement the example ran, not the `def`.
        self.terminate(ir.Return(None, self.last_origin or origin_of(self.fn)))
        blocks = self.reachable_blocks()
        return ir.Function(
            name=self.source.name,
            params=tuple(a.id for a in self.fn.args.args),
            blocks=blocks,
            origin=origin_of(self.fn),
            free_names=tuple(self.free_names),
        )

    def reachable_blocks(self):
        by_name = {b.name: b for b in self.blocks}
        seen, order = set(), []
        stack = [self.blocks[0].name]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            order.append(name)
            t = by_name[name].terminator
            if isinstance(t, ir.Goto):
                stack.append(t.target)
            elif isinstance(t, ir.Branch):
                stack.extend([t.false_target, t.true_target])
        kept = [b for b in self.blocks if b.name in seen]  # source order
        return tuple(
            ir.Block(
                b.name,
                tuple(b.instructions),
                b.terminator,
                b.origin or b.terminator.origin,
                self.source.name,
            )
            for b in kept
        )

    def statements(self, body):
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt):
        origin = origin_of(stmt)
        self.last_origin = origin
        if self.current.terminator is not None:
            # Code after return/break/continue: unreachable, built and dropped.
            self.start(self.new_block(origin))
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Subscript)
        ):
            self.assign_item(stmt.targets[0], stmt.value, origin)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            self.augment_item(stmt, origin)
        elif isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value, origin)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value, origin)
        elif isinstance(stmt, gast.AugAssign):
            value = gast.BinOp(
                left=gast.Name(stmt.target.id, gast.Load(), None, None),
                op=stmt.op,
                right=stmt.value,
            )
            self.assign([stmt.target], value, origin)
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return  # a docstring or a bare literal
            if self.is_batched_call(stmt.value):
                self.call(stmt.value, None, origin)
            else:
                self.primop(None, self.flatten(stmt.value, origin), origin)
        elif isinstance(stmt, gast.If):
            self.if_statement(stmt, origin)
        elif isinstance(stmt, gast.While):
            self.while_statement(stmt, origin)
        elif isinstance(stmt, gast.For):
            if is_range_call(stmt.iter, self.source, self.locals):
                self.for_statement(stmt, origin)
            else:
                self.for_each(stmt, origin)
        elif isinstance(stmt, gast.Break):
            self.terminate(ir.Goto(self.loops[-1][1], origin))
        elif isinstance(stmt, gast.Continue):
            self.terminate(ir.Goto(self.loops[-1][0], origin))
        elif isinstance(stmt, gast.Return):
            self.return_statement(stmt, origin)
        elif isinstance(stmt, gast.Pass):
            pass
        else:  # the fence lets nothing else through
            raise AssertionError(f"unfenced statement {type(stmt).__name__}")

    def assign(self, targets, value, origin):
        simple = not any(item_roots(t) for t in targets) and (
            len(targets) == 1 or isinstance(targets[0], gast.Name)
        )
        if not simple:
            self.assign_in_order(targets, value, origin)
            return
        patterns = [self.pattern(t) for t in targets]
        first = patterns[0]
        self.evaluate_into(first, value, origin)
        for other in patterns[1:]:  # a = b = value
            self.primop(other, gast.Name(_single(first), gast.Load(), None, None), origin)

    def evaluate_into(self, pattern, value, origin):
        """`pattern = value`: one Call, or one PrimOp of the flattened value."""
        if self.is_batched_call(value):
            self.call(value, pattern, origin)
        else:
            self.primop(pattern, self.flatten(value, origin), origin)

    def assign_in_order(self, targets, value, origin):
        """Targets with items (`v[i], v[j] = v[j], v[i]`), and chained
        assignments of tuples (`a, b = c, d = t`), as Python runs them: the
        whole value first, then each target from left to right, each item's
        subscripts evaluated when its turn comes (after the targets before
        it were assigned: `i, v[i] = 1, x` sets v[1]).

        The value goes into fresh variables shaped like the target (one
        unpacking, starred parts too), which are then stored one by one.
        """
        if len(targets) == 1:
            pattern, leaves = self.temporaries(targets[0])
            self.evaluate_into(pattern, value, origin)
            for target, temporary in leaves:
                self.store(target, temporary, origin)
            return
        temporary = self.fresh("value")
        self.evaluate_into(temporary, value, origin)
        for target in targets:  # a[i] = b[j] = 0: left to right
            self.store(target, temporary, origin)

    def temporaries(self, target):
        """(a pattern of fresh names shaped like `target`, [(leaf target,
        its fresh name)] in Python's assignment order)."""
        leaves = []

        def walk(node):
            if isinstance(node, gast.Starred):
                return "*" + walk(node.value)
            if isinstance(node, (gast.Tuple, gast.List)):
                return tuple(walk(e) for e in node.elts)
            name = self.fresh(_root_name(node) if isinstance(node, gast.Subscript) else node.id)
            leaves.append((node, name))
            return name

        return walk(target), leaves

    def store(self, target, temporary, origin):
        """`target = temporary` for one target of `assign_in_order`."""
        if isinstance(target, gast.Subscript):
            self.assign_item(target, _load(temporary), origin)
        elif isinstance(target, gast.Name):
            self.primop_text(target.id, temporary, origin)
        elif not item_roots(target):
            self.primop(self.pattern(target), _load(temporary), origin)
        else:
            pattern, leaves = self.temporaries(target)
            self.primop(pattern, _load(temporary), origin)
            for leaf, name in leaves:
                self.store(leaf, name, origin)

    # ---- item assignment -------------------------------------------------

    def assign_item(self, target, value, origin, items=None):
        """`v[i] = x` (and `m[i][j] = x`): a functional update of the root name.

        Python evaluates the value first, then the subscripts; both are
        hoisted into variables, so `v[f(i)] = g(x)` calls each function once.
        The update is `v = __setitem__(v, (i,), x)`, which type inference
        turns into the runtime's `put` (passes/subscripts.py).
        """
        value_name = self.operand(value, origin, "value")
        chain = items or self.subscript_chain(target, origin)
        root = _root_name(target)
        expr = value_name
        for depth in reversed(range(len(chain))):
            base = root + "".join(f"[{_read_items(c)}]" for c in chain[:depth])
            expr = f"{SET_ITEM}({base}, ({_set_items(chain[depth])}), {expr})"
        self.primop_text(root, expr, origin)

    def augment_item(self, stmt, origin):
        """`v[i] += x`: the subscripts are evaluated once, as in Python."""
        chain = self.subscript_chain(stmt.target, origin)
        root = _root_name(stmt.target)
        read = gast.parse(
            root + "".join(f"[{_read_items(c)}]" for c in chain), mode="eval"
        ).body
        value = gast.BinOp(left=read, op=stmt.op, right=stmt.value)
        self.assign_item(stmt.target, value, origin, items=chain)

    def subscript_chain(self, target, origin):
        """The items of `root[a][b, c]` as [[a], [b, c]], each item's text,
        with per-example indices hoisted into variables (literals and
        slices stay as written: they are static)."""
        chain = []
        node = target
        while isinstance(node, gast.Subscript):
            index = node.slice
            elements = index.elts if isinstance(index, gast.Tuple) else [index]
            chain.append(elements)
            node = node.value
        out = []
        for elements in reversed(chain):
            items = []
            for element in elements:
                if isinstance(element, gast.Slice):
                    parts = [
                        None if p is None else _unparse(self.flatten(p, origin))
                        for p in (element.lower, element.upper, element.step)
                    ]
                    items.append(("slice", parts))
                elif _is_literal_int(element):
                    items.append(("index", _unparse(element)))
                else:
                    items.append(("index", self.operand(element, origin, "index")))
            out.append(items)
        return out

    def pattern(self, target) -> ir.Pattern:
        if isinstance(target, gast.Name):
            return target.id
        if isinstance(target, gast.Starred):
            return "*" + target.value.id
        return tuple(self.pattern(e) for e in target.elts)

    def if_statement(self, stmt, origin):
        condition = self.condition(stmt.test, origin)
        then_block = self.new_block(origin_of(stmt.body[0], origin))
        else_block = (
            self.new_block(origin_of(stmt.orelse[0], origin)) if stmt.orelse else None
        )
        join_block = _PendingBlock(None, None)
        self.terminate(
            ir.Branch(
                condition,
                then_block.name,
                (else_block or join_block).name or "",
                origin,
            )
        )
        branch_block = self.current
        exits = []
        self.start(then_block)
        self.statements(stmt.body)
        exits.append(self.current)
        if else_block is not None:
            self.start(else_block)
            self.statements(stmt.orelse)
            exits.append(self.current)
        falls_through = [b for b in exits if b.terminator is None]
        if else_block is None or falls_through:
            join = self.new_block(None)
            for b in falls_through:
                b.terminator = ir.Goto(join.name, origin)
            if else_block is None:
                t = branch_block.terminator
                branch_block.terminator = ir.Branch(
                    t.condition, t.true_target, join.name, t.origin
                )
            self.start(join)
        else:
            # Both arms left (return/break/continue): what follows is unreachable.
            self.start(self.new_block(origin))
            self.current.terminator = ir.Return(None, origin)

    def while_statement(self, stmt, origin):
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        if isinstance(stmt.test, gast.Constant) and stmt.test.value:
            # `while True:` leaves only by `break` or `return`: no test, and
            # with no `break` the code after it (an implicit `return None`
            # too) is unreachable.
            self.loop(stmt, None, header.name, origin, before_body=None)
            return
        condition = self.condition(stmt.test, origin)
        self.loop(stmt, condition, header.name, origin, before_body=None)

    def for_statement(self, stmt, origin):
        """`for i in range(a, b, s)` as a counted `while` (per-example bounds).

        The counter is advanced before the body runs, so `continue` can jump
        straight back to the test; `i` keeps its last value after the loop.
        """
        args = [self.operand(a, origin, "range") for a in stmt.iter.args]
        if len(args) == 1:
            start, stop, step = "0", args[0], "1"
        else:
            start, stop = args[0], args[1]
            step = args[2] if len(args) == 3 else "1"
        target = stmt.target.id
        counter = self.fresh(f"{target if target != '_' else 'loop'}_next")
        self.primop_text(counter, start, origin)
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        condition = self.fresh("in_range")
        self.primop_text(
            condition,
            f"(({step}) > 0) & ({counter} < ({stop})) | (({step}) < 0) & ({counter} > ({stop}))",
            origin,
        )

        def advance():
            self.primop_text(target, counter, origin)
            self.primop_text(counter, f"{counter} + ({step})", origin)

        self.loop(stmt, condition, header.name, origin, before_body=advance)

    def for_each(self, stmt, origin):
        """`for` over anything but `range(...)` (frontend/iterables.py), as a counted
        loop that reads each element by a subscript:

            for i, x in enumerate(v, 1):        x_index = 0
                body                            while x_index < len(v):
                                                    i, x = (x_index + 1, v[x_index])
                                                    x_index = x_index + 1
                                                    body

        Per-example lengths are fixed, so `len(v)` is a constant (type
        inference).  Python iterates the object the loop started with: a
        local array the body never rebinds is read as it is, so item
        assignments to it show (`v[k + 1] += x`), as in NumPy; anything else
        (an expression, an array the body rebinds, range bounds, enumerate's
        start) is evaluated once, into fresh variables, before the loop.
        `zip` stops at its shortest part; `reversed` reads from the end.
        """
        spec = iterable(stmt.iter, self.source, self.locals)
        rebound = stores(stmt.body)[0]
        prepared = self.prepare_iterable(spec, rebound, origin)
        names = target_names(stmt.target)
        counter = self.fresh(f"{names[0] if names and names[0] != '_' else 'loop'}_index")
        self.primop_text(counter, "0", origin)
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        condition = self.fresh("in_range")
        self.primop_text(condition, _has_element(prepared, counter), origin)

        def advance():
            element = gast.parse(_element(prepared, counter), mode="eval").body
            self.assign([stmt.target], element, origin)
            self.primop_text(counter, f"{counter} + 1", origin)

        self.loop(stmt, condition, header.name, origin, before_body=advance)

    def prepare_iterable(self, spec, rebound, origin):
        """`spec` with its parts evaluated (see `for_each`), as a tree of
        ("sequence", text, length text), ("range", start, step, count),
        ("enumerate", inner, start), ("zip", parts) and ("reversed", inner)."""
        kind = spec.kind
        if kind == "value":
            node = spec.node
            if isinstance(node, gast.Name) and node.id in self.locals and node.id not in rebound:
                return ("sequence", node.id, f"len({node.id})")
            name = self.fresh(f"{node.id if isinstance(node, gast.Name) else 'loop'}_items")
            self.evaluate_into(name, node, origin)
            return ("sequence", name, f"len({name})")
        if kind == "table":
            return ("sequence", spec.node.id, f"len({spec.node.id})")
        if kind == "constant":
            elements = [_unparse(e) for e in spec.node.elts]
            return ("sequence", "(" + "".join(e + ", " for e in elements) + ")", str(len(elements)))
        if kind == "range":
            args = [self.evaluated_once(a, origin, "range") for a in spec.node.args]
            start, stop, step = ("0", args[0], "1") if len(args) == 1 else (args + ["1"])[:3]
            count = self.fresh("range_length")
            s = int(step)  # a literal (the fence)
            if s == 1:
                self.primop_text(count, f"{stop} - {start}", origin)
            else:  # len(range(start, stop, s)) where positive
                rounding = s - 1 if s > 0 else s + 1
                self.primop_text(count, f"({stop} - {start} + ({rounding})) // ({s})", origin)
            return ("range", start, step, count)
        if kind == "enumerate":
            inner = self.prepare_iterable(spec.parts[0], rebound, origin)
            start = "0" if spec.start is None else self.evaluated_once(spec.start, origin, "start")
            return ("enumerate", inner, start)
        if kind == "zip":
            return ("zip", tuple(self.prepare_iterable(p, rebound, origin) for p in spec.parts))
        return ("reversed", self.prepare_iterable(spec.parts[0], rebound, origin))

    def evaluated_once(self, node, origin, base) -> str:
        """An integer literal's text, or a fresh variable holding `node`'s value
        (a copy: the loop's body may rebind the names `node` reads)."""
        if _is_literal_int(node):
            return _unparse(node)
        name = self.fresh(base)
        self.evaluate_into(name, node, origin)
        return name

    def loop(self, stmt, condition, header, origin, before_body):
        body = self.new_block(origin_of(stmt.body[0], origin))
        # `else:` runs when the test fails, so never after `while True:`.
        has_else = stmt.orelse and condition is not None
        orelse = self.new_block(origin_of(stmt.orelse[0], origin)) if has_else else None
        exit_block = self.new_block(None)
        if condition is None:
            self.terminate(ir.Goto(body.name, origin))
        else:
            self.terminate(ir.Branch(condition, body.name, (orelse or exit_block).name, origin))
        self.loops.append((header, exit_block.name))
        self.start(body)
        if before_body is not None:
            before_body()
        self.statements(stmt.body)
        self.terminate(ir.Goto(header, origin))
        self.loops.pop()
        if orelse is not None:  # runs when the test fails, not after `break`
            self.blocks.remove(orelse)
            self.blocks.append(orelse)
            self.start(orelse)
            self.statements(stmt.orelse)
            self.terminate(ir.Goto(exit_block.name, origin))
        # Keep blocks in source order: the exit comes after the body.
        self.blocks.remove(exit_block)
        self.blocks.append(exit_block)
        self.start(exit_block)

    def return_statement(self, stmt, origin):
        if stmt.value is None:
            self.terminate(ir.Return(None, origin))
            return
        if self.is_batched_call(stmt.value):
            result = self.fresh(stmt.value.func.id)
            self.call(stmt.value, result, origin)
            self.terminate(ir.Return(result, origin))
            return
        residual = self.flatten(stmt.value, origin)
        if isinstance(residual, gast.Name) and residual.id in self.locals:
            self.terminate(ir.Return(residual.id, origin))
            return
        result = self.fresh("result")
        self.primop(result, residual, origin)
        self.terminate(ir.Return(result, origin))

    def condition(self, test, origin) -> str:
        residual = self.flatten(test, origin)
        if isinstance(residual, gast.Name) and residual.id in self.used_names:
            return residual.id
        name = self.fresh("cond")
        self.primop(name, residual, origin)
        return name

    # ---- expressions -----------------------------------------------------

    def call(self, node, vars_out, origin):
        """A batched call: arguments (positional, keyword, defaults) into variables."""
        callee = node.func.id
        params = self.batched_params[callee]  # [(name, default or NO_DEFAULT)]
        names = [p for p, _ in params]
        where = origin_of(node, origin)
        if len(node.args) > len(names):
            raise UnsupportedSyntaxError(
                f"{callee!r} takes {len(names)} argument(s), this call passes {len(node.args)}",
                where,
                "pass one value per parameter",
            )
        given = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names:
                raise UnsupportedSyntaxError(
                    f"{callee!r} has no parameter {kw.arg!r} (in batched function {self.source.name!r})",
                    where,
                    f"its parameters: {names}",
                )
            if kw.arg in given:
                raise UnsupportedSyntaxError(
                    f"{callee!r} gets two values for {kw.arg!r}", where, "pass it once"
                )
            given[kw.arg] = kw.value
        prefix = vars_out if isinstance(vars_out, str) else callee
        values = {}
        for param, arg in given.items():  # in source order, as Python evaluates them
            residual = self.flatten(arg, origin)
            if isinstance(residual, gast.Name) and residual.id in self.used_names:
                values[param] = residual.id
            else:
                name = self.fresh(f"{prefix}_{param}", exact_first=True)
                self.primop(name, residual, origin)
                values[param] = name
        args = []
        for param, default in params:
            if param not in values:
                if default is NO_DEFAULT:
                    raise UnsupportedSyntaxError(
                        f"this call of {callee!r} gives no value for {param!r}",
                        where,
                        "pass every parameter that has no default",
                    )
                name = self.fresh(f"{prefix}_{param}", exact_first=True)
                self.primop_text(name, repr(default), origin)
                values[param] = name
            args.append(values[param])
        self.emit(ir.Call(callee, tuple(args), vars_out, origin))

    def flatten(self, expr, origin):
        """Hoists batched calls and per-example logic out of `expr`.

        Returns the residual expression.  `and`/`or`, `not`, chained
        comparisons and `x if c else y` become `Select`s (elementwise, each
        example taking its own side) or, when a side calls a batched function,
        branches, so that the call runs only for the examples that need it.
        """
        if self.is_batched_call(expr):
            result = self.fresh(expr.func.id)
            self.call(expr, result, origin_of(expr, origin))
            return _load(result)
        if isinstance(expr, gast.ListComp):
            return self.list_comprehension(expr, origin)
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Mult):
            self.static_list_length(expr)
        if self.is_truthy_call(expr):
            # `truthy(c)` makes a batch-of-one condition a Python bool in a dry
            # run; batched, conditions are per example already.
            return self.flatten(expr.args[0], origin)
        if isinstance(expr, gast.BoolOp):
            return self.bool_op(expr, origin)
        if isinstance(expr, gast.IfExp):
            return self.if_expression(expr, origin)
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.Not):
            operand = self.operand(expr.operand, origin, "not")
            return self.select("not_", operand, "False", "True", origin)
        if isinstance(expr, gast.Compare) and len(expr.ops) > 1:
            return self.chained_compare(expr, origin)
        if isinstance(expr, gast.BinOp):
            expr.left, expr.right = self.read_before_calls([expr.left, expr.right], origin)
        elif isinstance(expr, gast.Compare):
            expr.left, *expr.comparators = self.read_before_calls([expr.left, *expr.comparators], origin)
        elif isinstance(expr, (gast.Tuple, gast.List)):
            expr.elts = self.read_before_calls(expr.elts, origin)
        for field, value in gast.iter_fields(expr):
            if isinstance(value, gast.AST):
                setattr(expr, field, self.flatten(value, origin))
            elif isinstance(value, list):
                setattr(
                    expr,
                    field,
                    [self.flatten(v, origin) if isinstance(v, gast.AST) else v for v in value],
                )
        return expr

    def list_comprehension(self, expr, origin):
        """`[x for _ in range(n)]` (n known when the program is built: see
        frontend/static_lengths.py) as an array of n elements, per example
        [n, *shape of x].

        When `x` does not read the loop variable it is evaluated once and
        repeated, `repeat(x, n)` (a runtime helper; Python evaluates `x` n
        times, which gives equal values for anything without side effects):
        `[[0 for _ in range(len(b) + 1)] for _ in range(len(a) + 1)]` is
        `repeat(repeat(0, len(b) + 1), len(a) + 1)`, a table `dp[i][j]`
        reads and assigns.  When it does (`[i * i for i in range(n)]`), an
        array shaped by the first element is filled in a counted loop:

            items = repeat(0 * 0, n)
            for i_1 in range(n):
                items[i_1] = i_1 * i_1
        """
        generator = expr.generators[0]
        count = static_count(generator.iter.args[0], self.source, self.locals)
        if any(
            isinstance(n, gast.Name) and n.id == REPEAT and n.id not in self.locals
            for n in gast.walk(self.fn)
            if isinstance(getattr(n, "ctx", None), gast.Load)
        ):
            raise UnsupportedSyntaxError(
                f"a list comprehension becomes a call of the runtime helper `{REPEAT}`, "
                f"a name this function already reads (in batched function {self.source.name!r})",
                origin_of(expr, origin),
                f"rename your `{REPEAT}`",
            )
        variable = generator.target.id
        if not _reads(expr.elt, variable):
            value = self.flatten(expr.elt, origin)
            return gast.Call(func=_load(REPEAT), args=[value, count], keywords=[])
        items = self.fresh("items")
        first = _substitute(copy.deepcopy(expr.elt), variable, gast.Constant(0, None))
        shape = gast.Call(func=_load(REPEAT), args=[self.flatten(first, origin), copy.deepcopy(count)], keywords=[])
        self.primop(items, shape, origin)
        index = self.fresh(variable if variable != "_" else "index")
        element = _substitute(copy.deepcopy(expr.elt), variable, _load(index))
        fill = gast.Assign(
            targets=[gast.Subscript(value=_load(items), slice=_load(index), ctx=gast.Store())],
            value=element,
            type_comment=None,
        )
        loop = gast.For(
            target=gast.Name(index, gast.Store(), None, None),
            iter=gast.Call(func=_load("range"), args=[count], keywords=[]),
            body=[fill],
            orelse=[],
            type_comment=None,
        )
        fill.origin = loop.origin = origin_of(expr, origin)
        self.for_statement(loop, origin_of(expr, origin))
        return _load(items)

    def static_list_length(self, expr):
        """`[0] * (m + 1)` after `n, m = len(a), len(b)`: the length is
        written as its definition, `[0] * (len(b) + 1)`, so that type
        inference sees a number, not the per-example variable `m`
        (passes/python_builtins.py makes the list `repeat(0, ...)`)."""
        for items, count in (("left", "right"), ("right", "left")):
            if isinstance(getattr(expr, items), gast.List):
                static = static_count(getattr(expr, count), self.source, self.locals)
                if static is not None:
                    setattr(expr, count, static)
                return

    def read_before_calls(self, operands, origin):
        """Python evaluates operands left to right: in `v[k] + f(v, k + 1)`
        it reads `v[k]` before `f` runs, and `f` may assign items of `v`
        (passes/inplace.py hands them back).  The call is hoisted out of the
        expression, so an earlier operand that reads an array the call gets
        is evaluated into a variable first (a bare name is not: Python reads
        the object, whose items the call changes for it too)."""
        out = list(operands)
        for k, operand in enumerate(operands):
            if isinstance(operand, (gast.Name, gast.Constant)):
                continue
            passed = {
                arg.id
                for later in operands[k + 1 :]
                for node in gast.walk(later)
                if self.is_batched_call(node)
                for arg in list(node.args) + [kw.value for kw in node.keywords]
                if isinstance(arg, gast.Name)
            }
            reads = {n.id for n in gast.walk(operand) if isinstance(n, gast.Name)}
            if passed & reads:
                out[k] = _load(self.operand(operand, origin, "before_call"))
        return out

    def is_truthy_call(self, expr) -> bool:
        return (
            isinstance(expr, gast.Call)
            and isinstance(expr.func, gast.Name)
            and expr.func.id not in self.locals
            and self.namespace.get(expr.func.id) is truthy
            and len(expr.args) == 1
            and not expr.keywords
        )

    def operand(self, expr, origin, base) -> str:
        """`expr` flattened into a variable name (a temporary when needed)."""
        residual = self.flatten(expr, origin)
        if isinstance(residual, gast.Name) and residual.id in self.used_names:
            return residual.id
        name = self.fresh(base)
        self.primop(name, residual, origin)
        return name

    def select(self, base, condition, if_true, if_false, origin) -> gast.Name:
        result = self.fresh(base)
        names = [condition, if_true, if_false]
        vars_in = []
        for text in names:
            for node in gast.walk(gast.parse(text, mode="eval")):
                if isinstance(node, gast.Name) and node.id in self.used_names:
                    if node.id not in vars_in:
                        vars_in.append(node.id)
        self.emit(ir.Select(tuple(vars_in), result, condition, if_true, if_false, origin))
        return _load(result)

    def has_batched_call(self, expr) -> bool:
        """Whether `expr` must run only for the examples that reach it: it calls
        a batched function, or it indexes by a value (which may be out of
        range where Python would not evaluate it: `i < n and v[i] > 0`)."""
        return any(
            self.is_batched_call(n) or (isinstance(n, gast.Subscript) and _indexes_by_value(n))
            for n in gast.walk(expr)
        )

    def bool_op(self, expr, origin):
        is_and = isinstance(expr.op, gast.And)
        base = "and_" if is_and else "or_"
        if not any(self.has_batched_call(v) for v in expr.values[1:]):
            result = self.operand(expr.values[0], origin, base)
            for value in expr.values[1:]:
                right = self.operand(value, origin, base)
                if is_and:  # per example: `right` where `result` holds, else `result`
                    result = self.select(base, result, right, result, origin).id
                else:
                    result = self.select(base, result, result, right, origin).id
            return _load(result)
        # A batched call on the right: real branches, so it runs only where needed.
        result = self.fresh(base)
        self.primop_text(result, self.operand(expr.values[0], origin, base), origin)
        deciding = []  # blocks whose branch skips to the end once `result` decides
        for value in expr.values[1:]:
            evaluate = self.new_block(origin)
            deciding.append(self.current)
            self.terminate(ir.Branch(result, evaluate.name, "", origin))
            self.start(evaluate)
            self.primop_text(result, self.operand(value, origin, base), origin)
        # and: true evaluates the next operand, false is done; or: the reverse
        self.finish_short_circuit(deciding, origin, go_on_when=is_and)
        return _load(result)

    def if_expression(self, expr, origin):
        if not (self.has_batched_call(expr.body) or self.has_batched_call(expr.orelse)):
            condition = self.operand(expr.test, origin, "cond")
            body = self.operand(expr.body, origin, "if_true")
            orelse = self.operand(expr.orelse, origin, "if_false")
            return self.select("choice", condition, body, orelse, origin)
        result = self.fresh("choice")
        condition = self.operand(expr.test, origin, "cond")
        then_block, else_block = self.new_block(origin), self.new_block(origin)
        end = self.new_block(None)
        self.terminate(ir.Branch(condition, then_block.name, else_block.name, origin))
        for block, value in ((then_block, expr.body), (else_block, expr.orelse)):
            self.start(block)
            self.primop_text(result, self.operand(value, origin, "choice"), origin)
            self.terminate(ir.Goto(end.name, origin))
        self.blocks.remove(end)
        self.blocks.append(end)
        self.start(end)
        return _load(result)

    def chained_compare(self, expr, origin):
        """`a < b <= c` is `(a < b) and (b <= c)`, with `b` evaluated once.

        Python evaluates `c` only where `a < b` holds; when a later operand
        calls a batched function or indexes by a value, it gets a block that
        only those examples enter, as the right side of `and` does.
        """
        if any(self.has_batched_call(c) for c in expr.comparators[1:]):
            return self.short_circuit_compare(expr, origin)
        operands = [self.operand(expr.left, origin, "operand")]
        operands += [self.operand(c, origin, "operand") for c in expr.comparators]
        result = None
        for op, left, right in zip(expr.ops, operands, operands[1:]):
            comparison = gast.Compare(_load(left), [op], [_load(right)])
            name = self.fresh("compare")
            self.primop(name, comparison, origin)
            if result is None:
                result = name
            else:
                result = self.select("compare", result, name, result, origin).id
        return _load(result)

    def short_circuit_compare(self, expr, origin):
        """A chained comparison as branches: each later link is evaluated only
        by the examples whose earlier links all hold."""
        result = self.fresh("compare")
        left = self.operand(expr.left, origin, "operand")
        deciding = []  # blocks whose branch skips to the end where `result` is False
        for index, (op, comparator) in enumerate(zip(expr.ops, expr.comparators)):
            if index:
                evaluate = self.new_block(origin)
                deciding.append(self.current)
                self.terminate(ir.Branch(result, evaluate.name, "", origin))
                self.start(evaluate)
            right = self.operand(comparator, origin, "operand")
            self.primop(result, gast.Compare(_load(left), [op], [_load(right)]), origin)
            left = right
        self.finish_short_circuit(deciding, origin, go_on_when=True)
        return _load(result)

    def finish_short_circuit(self, deciding, origin, go_on_when):
        """Ends a short-circuit chain: a block after it, which each deciding
        block (ending `Branch(result, next operand's block, "")`) reaches
        directly where `result` is not `go_on_when`."""
        end = self.new_block(None)
        self.terminate(ir.Goto(end.name, origin))
        for block in deciding:
            t = block.terminator
            if go_on_when:
                block.terminator = ir.Branch(t.condition, t.true_target, end.name, t.origin)
            else:
                block.terminator = ir.Branch(t.condition, end.name, t.true_target, t.origin)
        self.start(end)

    def primop_text(self, vars_out, text, origin):
        """A primitive from Python source text (names resolve as in `primop`)."""
        self.primop(vars_out, gast.parse(text, mode="eval").body, origin)

    def primop(self, vars_out, residual, origin):
        vars_in = []
        for node in gast.walk(residual):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                if node.id in self.used_names:
                    if node.id not in vars_in:
                        vars_in.append(node.id)
                else:
                    self.note_free_name(node, origin)
        expr = _unparse(residual)
        self.emit(ir.PrimOp(tuple(vars_in), vars_out, expr, origin=origin, namespace=self.namespace))

    def note_free_name(self, node, origin):
        name = node.id
        if name in self.free_names or name in (SET_ITEM, REPEAT, narrowing.PRESENT):
            # SET_ITEM: item assignment, given its meaning by type inference;
            # REPEAT: a list comprehension, the runtime's helper; PRESENT: a
            # read a None-guard made safe, given its meaning by type inference
            return
        known = (
            name in self.source.closure
            or name in self.source.globals
            or hasattr(builtins, name)
        )
        if not known:
            raise UnsupportedSyntaxError(
                f"name {name!r} is not defined (in batched function {self.source.name!r})",
                origin_of(node, origin),
                "define it at module level before the first call, "
                "or assign it in the function",
            )
        self.free_names.append(name)


SET_ITEM = "__setitem__"  # see passes/subscripts.py
REPEAT = "repeat"  # `[x for _ in range(n)]`: the runtime's repeat(x, n)


def _element(prepared, index) -> str:
    """The text of the element at `index` (a text) of a prepared iterable."""
    kind = prepared[0]
    if kind == "sequence":
        return f"{prepared[1]}[{index}]"
    if kind == "range":
        _, start, step, _ = prepared
        offset = index if step == "1" else f"({index}) * ({step})"
        return offset if start == "0" else f"{start} + {offset}"
    if kind == "enumerate":
        _, inner, start = prepared
        number = index if start == "0" else f"{index} + {start}"
        return f"({number}, {_element(inner, index)})"
    if kind == "zip":
        return "(" + "".join(_element(p, index) + ", " for p in prepared[1]) + ")"
    inner = prepared[1]  # reversed
    return _element(inner, f"{_length(inner)} - 1 - {index}")


def _length(prepared) -> str:
    kind = prepared[0]
    if kind == "sequence":
        return prepared[2]
    if kind == "range":
        return prepared[3]
    return _length(prepared[1])  # enumerate, reversed


def _has_element(prepared, index) -> str:
    """The text of `index < length` (of every part of a zip: the shortest)."""
    if prepared[0] == "zip":
        return " & ".join(f"({_has_element(p, index)})" for p in prepared[1])
    return f"{index} < {_length(prepared)}"


def _comprehension_binds(node, variable) -> bool:
    return isinstance(node, gast.ListComp) and any(
        variable in target_names(g.target) for g in node.generators
    )


def _reads(node, variable) -> bool:
    """Whether `node` reads `variable` (not a nested comprehension's own)."""
    if isinstance(node, gast.Name) and node.id == variable and isinstance(node.ctx, gast.Load):
        return True
    if _comprehension_binds(node, variable):
        return any(_reads(g.iter, variable) for g in node.generators)
    return any(_reads(child, variable) for child in gast.iter_child_nodes(node))


def _substitute(node, variable, replacement):
    """`node` with its reads of `variable` replaced (in place where possible)."""
    if isinstance(node, gast.Name) and node.id == variable and isinstance(node.ctx, gast.Load):
        return copy.deepcopy(replacement)
    if _comprehension_binds(node, variable):
        for g in node.generators:
            g.iter = _substitute(g.iter, variable, replacement)
        return node
    for field, value in gast.iter_fields(node):
        if isinstance(value, gast.AST):
            setattr(node, field, _substitute(value, variable, replacement))
        elif isinstance(value, list):
            setattr(node, field, [_substitute(v, variable, replacement) if isinstance(v, gast.AST) else v for v in value])
    return node


def _root_name(target) -> str:
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id


def _is_literal_int(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int


def _indexes_by_value(node) -> bool:
    index = node.slice
    elements = index.elts if isinstance(index, gast.Tuple) else [index]
    return not all(_is_literal_int(e) or isinstance(e, gast.Slice) for e in elements)


def _read_items(items) -> str:
    """`i, 1:3` (a subscript's text)."""

    def text(kind, value):
        if kind != "slice":
            return value
        lower, upper, step = ("" if p is None else p for p in value)
        return f"{lower}:{upper}" + (f":{step}" if step else "")

    return ", ".join(text(kind, value) for kind, value in items)


def _set_items(items) -> str:
    """`i, slice(1, 3, None),` (a tuple display's text: slices as calls)."""
    return "".join(
        (f"slice({', '.join('None' if p is None else p for p in value)})" if kind == "slice" else value)
        + ", "
        for kind, value in items
    )


class _NoDefault:
    def __repr__(self):
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()  # a parameter without a default value


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _single(pattern):
    if isinstance(pattern, str):
        return pattern
    raise UnsupportedSyntaxError("chained assignment to a tuple pattern")


def _unparse(node) -> str:
    import ast

    tree = gast.gast_to_ast(gast.Expression(body=node))
    return ast.unparse(ast.fix_missing_locations(tree))
