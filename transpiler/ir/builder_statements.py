"""The IR builder's statements: assignments, item assignments, `if`, `return`.

Part of the builder (ir/builder.py), whose `_FunctionBuilder` these methods
belong to: they read its state (the current block, fresh names) and call
its loops (ir/builder_loops.py) and expressions (ir/builder_expressions.py).
Python's statement forms become canonical here: item assignments inside
tuple targets and chained assignments run in Python's order
(`assign_in_order`), and `v[i] = x` becomes the functional update
`v = __setitem__(v, (i,), x)`.
"""

from __future__ import annotations

import gast

from transpiler.errors import UnsupportedSyntaxError
from transpiler.frontend.iterables import item_roots, is_range_call
from transpiler.frontend.source import origin_of
from transpiler.ir import instructions as ir
from transpiler.ir.builder_support import SET_ITEM, PendingBlock, is_literal_int, load, unparse


class Statements:
    """Statements, one method per form (a base of `_FunctionBuilder`)."""

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
            and _position_values(stmt.targets[0], stmt.value) is not None
        ):
            self.assign_positions(stmt.targets[0], stmt.value, origin)
        elif (
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
            self.assign_item(target, load(temporary), origin)
        elif isinstance(target, gast.Name):
            self.primop_text(target.id, temporary, origin)
        elif not item_roots(target):
            self.primop(self.pattern(target), load(temporary), origin)
        else:
            pattern, leaves = self.temporaries(target)
            self.primop(pattern, load(temporary), origin)
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

    def assign_positions(self, target, value, origin):
        """`a[[i, j]] = a[[j, i]]` (NumPy's row swap by lists of positions),
        or `v[[i, j]] = [x, y]`: the values are read first, each a copy (NumPy's
        fancy read copies), then the positions, then each item is assigned in
        turn (a repeated position takes the last value, as in NumPy)."""
        rows = []
        for item in _position_values(target, value):
            if isinstance(item, gast.Subscript):  # a row read from an array: its copy
                item = gast.Call(gast.Attribute(item, "copy", gast.Load()), [], [])
            rows.append(self.operand(item, origin, "row"))
        positions = [
            p if is_literal_int(p) else load(self.operand(p, origin, "index")) for p in target.slice.elts
        ]
        for position, row in zip(positions, rows):
            item = gast.Subscript(value=load(target.value.id), slice=position, ctx=gast.Store())
            self.assign_item(item, load(row), origin)

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
                        None if p is None else unparse(self.flatten(p, origin))
                        for p in (element.lower, element.upper, element.step)
                    ]
                    items.append(("slice", parts))
                elif is_literal_int(element) or isinstance(element, gast.List):
                    # a list of positions stays as written: type inference
                    # refuses it by name (passes/subscripts.py)
                    items.append(("index", unparse(element)))
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
        join_block = PendingBlock(None, None)
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

    def return_statement(self, stmt, origin):
        if stmt.value is None:
            self.terminate(ir.Return(None, origin))
            return
        if isinstance(stmt.value, gast.IfExp) and self.calls_in_tail(stmt.value):
            # `return a if c else f(...)` as `if c: return a` / `else:
            # return f(...)` (what Python runs is the same): the call is then
            # a tail call, a loop that grows no stack, as in the statement
            # form (Euclid's `return b if a == 0 else gcd(b % a, a)`).
            self.if_statement(returns_by_arm(stmt), origin)
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

    def calls_in_tail(self, value) -> bool:
        """Whether an arm of the conditional expression `value` (or of one
        nested in an arm) is a call of a batched function."""
        if isinstance(value, gast.IfExp):
            return self.calls_in_tail(value.body) or self.calls_in_tail(value.orelse)
        return self.is_batched_call(value)

    def condition(self, test, origin) -> str:
        residual = self.flatten(test, origin)
        if isinstance(residual, gast.Name) and residual.id in self.used_names:
            return residual.id
        name = self.fresh("cond")
        self.primop(name, residual, origin)
        return name


def _position_values(target, value):
    """The values `root[[i, j, ...]] = value` assigns, one per position, or
    None where this is not such an assignment: `value` is another read by a
    list of as many positions (`a[[j, i]]`) or a list or tuple display of as
    many items."""
    if not (isinstance(target.value, gast.Name) and isinstance(target.slice, gast.List)):
        return None
    count = len(target.slice.elts)
    if count == 0 or any(isinstance(p, (gast.Starred, gast.Slice)) for p in target.slice.elts):
        return None
    if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.List) and len(value.slice.elts) == count:
        return [gast.Subscript(value=value.value, slice=p, ctx=gast.Load()) for p in value.slice.elts]
    if isinstance(value, (gast.List, gast.Tuple)) and len(value.elts) == count:
        return list(value.elts)
    return None


def _root_name(target) -> str:
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id


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


def _single(pattern):
    if isinstance(pattern, str):
        return pattern
    raise UnsupportedSyntaxError("chained assignment to a tuple pattern")


def returns_by_arm(stmt):
    """`return a if c else b` as the statement `if c: return a` / `else:
    return b`, every new node at the `return`'s line."""
    body, orelse = (
        gast.copy_location(gast.Return(value=arm), stmt)
        for arm in (stmt.value.body, stmt.value.orelse)
    )
    return gast.copy_location(gast.If(test=stmt.value.test, body=[body], orelse=[orelse]), stmt)
