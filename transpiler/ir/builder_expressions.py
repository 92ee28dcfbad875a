"""The IR builder's expressions: A-normal form and per-example logic.

Part of the builder (ir/builder.py), whose `_FunctionBuilder` these methods
belong to.  `flatten` hoists every call of a batched function out of its
expression into a `Call` on variables, and what is left becomes one
`PrimOp`; `and`, `or`, `not`, chained comparisons and `x if c else y`
become `Select`s (each example taking its own side), or branches where a
side calls a batched function or indexes by a value, so that it runs only
for the examples that reach it.  A list comprehension of a length known
when the program is built becomes `repeat(x, n)` or a loop that fills an
array.
"""

from __future__ import annotations

import builtins
import copy
import math

import gast

from autobatch_runtime import python_errors
from transpiler.errors import UnsupportedSyntaxError
from transpiler.frontend import comprehensions, narrowing
from transpiler.frontend.iterables import target_names
from transpiler.frontend.source import origin_of
from transpiler.frontend.static_lengths import static_count
from transpiler.ir import builder_ranges
from transpiler.ir import instructions as ir
from transpiler.ir.builder_support import NO_DEFAULT, RANGE_STEP, REPEAT, SET_ITEM, is_literal_int, load, unparse
from transpiler.markers import truthy


class Expressions:
    """Expressions (a base of `_FunctionBuilder`)."""

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
        reduced = comprehensions.reduction(expr, self.source, self.locals)
        if reduced is not None:
            return self.comprehension_reduction(expr, reduced, origin)
        if self.is_batched_call(expr):
            result = self.fresh(expr.func.id)
            self.call(expr, result, origin_of(expr, origin))
            return load(result)
        if self.is_list_of_range(expr):
            expr = self.range_as_comprehension(expr)
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

    def comprehension_reduction(self, expr, name, origin):
        """`sum(E for x in v if c)`, `any(...)`, `all(...)`, `max(...)`,
        `min(...)` of a comprehension: the loop Python runs
        (frontend/comprehensions.py), its result in a variable.  A `max` or
        `min` without `default=` reads it through `py_nonempty`, which stops
        the examples whose comprehension was empty (Python's ValueError)."""
        loop = comprehensions.as_loop(expr, name, self.fresh)
        for statement in loop.first + [loop.loop]:
            self.statement(statement)
        if loop.found is None:
            return load(loop.result)
        checked = self.fresh(name)
        self.primop_text(checked, f"{comprehensions.NONEMPTY}({loop.found}, {loop.result}, {name!r})", origin)
        return load(checked)

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
        if isinstance(expr.generators[0].iter, gast.Name):
            expr = self.over_positions(expr)
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
            return gast.Call(func=load(REPEAT), args=[value, count], keywords=[])
        items = self.fresh("items")
        first = _substitute(copy.deepcopy(expr.elt), variable, gast.Constant(0, None))
        shape = gast.Call(func=load(REPEAT), args=[self.flatten(first, origin), copy.deepcopy(count)], keywords=[])
        self.primop(items, shape, origin)
        index = self.fresh(variable if variable != "_" else "index")
        element = _substitute(copy.deepcopy(expr.elt), variable, load(index))
        fill = gast.Assign(
            targets=[gast.Subscript(value=load(items), slice=load(index), ctx=gast.Store())],
            value=element,
            type_comment=None,
        )
        loop = gast.For(
            target=gast.Name(index, gast.Store(), None, None),
            iter=gast.Call(func=load("range"), args=[count], keywords=[]),
            body=[fill],
            orelse=[],
            type_comment=None,
        )
        fill.origin = loop.origin = origin_of(expr, origin)
        self.for_statement(loop, origin_of(expr, origin))
        return load(items)

    def over_positions(self, expr):
        """`[f(x) for x in v]` as `[f(v[k]) for k in range(len(v))]`: the
        same list (Python reads v's items in order, and a comprehension
        cannot rebind v), built as a counted fill."""
        generator = expr.generators[0]
        sequence, variable = generator.iter.id, generator.target.id
        position = self.fresh(f"{variable}_position")
        item = gast.Subscript(value=load(sequence), slice=load(position), ctx=gast.Load())
        element = _substitute(copy.deepcopy(expr.elt), variable, item)
        counted = gast.comprehension(
            target=gast.Name(position, gast.Store(), None, None),
            iter=gast.Call(
                func=load("range"),
                args=[gast.Call(func=load("len"), args=[load(sequence)], keywords=[])],
                keywords=[],
            ),
            ifs=[],
            is_async=0,
        )
        return gast.copy_location(gast.ListComp(elt=element, generators=[counted]), expr)

    def is_list_of_range(self, expr) -> bool:
        return builder_ranges.is_list_of_range(self, expr)

    def range_as_comprehension(self, expr):
        return builder_ranges.range_as_comprehension(self, expr)

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
                out[k] = load(self.operand(operand, origin, "before_call"))
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
        return load(result)

    def has_batched_call(self, expr) -> bool:
        """Whether `expr` must run only for the examples that reach it: it calls
        a batched function, or it indexes by a value (which may be out of
        range where Python would not evaluate it: `i < n and v[i] > 0`), or
        it raises to a power that is not a literal (an int's negative power
        stops the example: `k >= 0 and 2 ** k > n`), or it reads a local that
        may be None outside a None-guard (`found and r > 2`: a None used as a
        number stops the example)."""
        if self.maybe_none and narrowing.unmarked_reads(expr) & self.maybe_none:
            return True
        return any(
            self.is_batched_call(n)
            or (isinstance(n, gast.Subscript) and _indexes_by_value(n))
            or _power_by_value(n)
            or _divides_by_value(n)
            or _shifts_by_value(n)
            or self.may_raise_call(n)
            for n in gast.walk(expr)
        )

    def may_raise_call(self, node) -> bool:
        """Whether `node` calls a builtin or `math` function that raises on
        some numbers (`math.sqrt(-1.0)`, `int(nan)`): those examples stop
        (autobatch_runtime/python_errors.py), so it must not run where
        Python would not evaluate it (`math.sqrt(x) if x >= 0 else 0.0`)."""
        if not isinstance(node, gast.Call):
            return False
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "index" and len(node.args) == 1:
            return True  # `items.index(x)`: ValueError where x is not in the list
        if isinstance(func, gast.Name) and func.id not in self.locals:
            value = self.namespace.get(func.id, getattr(builtins, func.id, None))
        elif (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.value.id not in self.locals
            and self.namespace.get(func.value.id) is math
        ):
            value = getattr(math, func.attr, None)
        else:
            return False
        return any(value is known for known in _RAISING_BUILTINS) or any(
            value is getattr(math, name) for name in _RAISING_MATH
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
            return load(result)
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
        return load(result)

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
        return load(result)

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
            comparison = gast.Compare(load(left), [op], [load(right)])
            name = self.fresh("compare")
            self.primop(name, comparison, origin)
            if result is None:
                result = name
            else:
                result = self.select("compare", result, name, result, origin).id
        return load(result)

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
            self.primop(result, gast.Compare(load(left), [op], [load(right)]), origin)
            left = right
        self.finish_short_circuit(deciding, origin, go_on_when=True)
        return load(result)

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
        expr = unparse(residual)
        self.emit(ir.PrimOp(tuple(vars_in), vars_out, expr, origin=origin, namespace=self.namespace))

    def note_free_name(self, node, origin):
        name = node.id
        if name in self.free_names or name in (SET_ITEM, REPEAT, RANGE_STEP, comprehensions.NONEMPTY, narrowing.PRESENT):
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


def _indexes_by_value(node) -> bool:
    """Whether a subscript may be out of range on some example: an index
    that is not a literal, or a literal one of a name (`v[0]` of a vector
    whose length differs per example, autobatch_runtime/ragged.py, is out
    of range where it is empty: `len(v) == 0 or v[0] == x`)."""
    index = node.slice
    elements = index.elts if isinstance(index, gast.Tuple) else [index]
    if isinstance(node.value, gast.Name) and any(is_literal_int(e) for e in elements):
        return True
    return not all(is_literal_int(e) or isinstance(e, gast.Slice) for e in elements)


# Builtins and `math` functions that raise for some per-example numbers.
_RAISING_BUILTINS = (int, round, divmod, pow)
_RAISING_MATH = tuple(
    sorted(
        python_errors.DOMAIN
        | python_errors.OVERFLOWING
        | python_errors.INT_CONVERSIONS
        | python_errors.COUNTING
    )
)


def _divides_by_value(node) -> bool:
    """Whether `node` divides by something other than a nonzero literal:
    an example whose divisor is zero stops (ZeroDivisionError), so it must
    not run where Python would not evaluate it (`d != 0 and n % d == 0`)."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Div, gast.FloorDiv, gast.Mod))):
        return False
    divisor = node.right
    return not (
        isinstance(divisor, gast.Constant)
        and type(divisor.value) in (int, float)
        and divisor.value != 0
    )


def _shifts_by_value(node) -> bool:
    """Whether `node` shifts by something other than a literal: a negative
    count stops the example (ValueError), so it must not run where Python
    would not evaluate it (`k >= 0 and (1 << k) > n`)."""
    return (
        isinstance(node, gast.BinOp)
        and isinstance(node.op, (gast.LShift, gast.RShift))
        and not (isinstance(node.right, gast.Constant) and type(node.right.value) is int)
    )


def _power_by_value(node) -> bool:
    """Whether `node` is a power of something other than literals: an int
    to a negative int power stops the example (its Python value is a
    float), and a float power may overflow or go complex, which stops it
    too, so it must not run where Python would not evaluate it
    (`k >= 0 and 2 ** k > n`, `x ** 0.5 if x >= 0 else 0.0`)."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow)):
        return False
    return not all(_literal_number(side) for side in (node.left, node.right))


def _literal_number(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant)
