"""`list(range(...))` in the IR builder: a list comprehension of the range's
items (`[start + step * k for k in range(count)]`), which builds the list
as an array of a size known when the program is built."""

from __future__ import annotations

import builtins
import copy

import gast

from transpiler.frontend.static_lengths import static_count
from transpiler.ir.builder_support import load


def is_list_of_range(builder, expr) -> bool:
    """`list(range(n))` (the builtins, n known when the program is built:
    `prev = list(range(m + 1))` in edit distance)."""

    def builtin(node, name):
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id == name
            and node.func.id not in builder.locals
            and builder.namespace.get(name, getattr(builtins, name)) is getattr(builtins, name)
            and len(node.args) == 1
            and not node.keywords
        )

    if not (builtin(expr, "list") and isinstance(expr.args[0], gast.Call)):
        return False
    arguments = expr.args[0].args
    call = expr.args[0]
    if not (
        isinstance(call.func, gast.Name)
        and call.func.id == "range"
        and call.func.id not in builder.locals
        and 1 <= len(arguments) <= 3
        and not call.keywords
    ):
        return False
    if len(arguments) == 3 and literal_int(arguments[2]) in (None, 0):
        return False  # a step known when the program is built
    return all(static_count(a, builder.source, builder.locals) is not None for a in arguments)


def range_as_comprehension(builder, expr):
    """`list(range(start, stop, step))` as the comprehension
    `[start + step * k for k in range(count)]`, count = the number of
    items, `(stop - start + step - 1) // step` (for a step below zero,
    `(start - stop - step - 1) // -step`; below zero for none)."""
    arguments = expr.args[0].args
    literals = [literal_int(a) for a in arguments]
    if None not in literals and not range(*literals):
        return gast.copy_location(gast.List(elts=[], ctx=gast.Load()), expr)  # `list(range(0))`
    start, stop = (gast.Constant(0, None), arguments[0]) if len(arguments) == 1 else arguments[:2]
    step = literal_int(arguments[2]) if len(arguments) == 3 else 1
    if step > 0:
        span = gast.BinOp(left=stop, op=gast.Sub(), right=start)
    else:
        span = gast.BinOp(left=start, op=gast.Sub(), right=stop)
    count = gast.BinOp(
        left=gast.BinOp(left=span, op=gast.Add(), right=gast.Constant(abs(step) - 1, None)),
        op=gast.FloorDiv(),
        right=gast.Constant(abs(step), None),
    )
    if len(arguments) == 1:
        count = arguments[0]
    position = builder.fresh("position")
    counted = gast.comprehension(
        target=gast.Name(position, gast.Store(), None, None),
        iter=gast.Call(func=load("range"), args=[count], keywords=[]),
        ifs=[],
        is_async=0,
    )
    element = load(position)
    if step != 1:
        element = gast.BinOp(left=gast.Constant(step, None), op=gast.Mult(), right=element)
    if len(arguments) > 1:
        element = gast.BinOp(left=copy.deepcopy(start), op=gast.Add(), right=element)
    return gast.copy_location(gast.ListComp(elt=element, generators=[counted]), expr)


def literal_int(node):
    """The int a literal (`2`, `-1`) writes, else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = literal_int(node.operand)
        return None if value is None else -value
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None
