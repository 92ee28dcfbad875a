"""List lengths known when the program is built (`static_count`).

A list comprehension `[x for _ in range(n)]` and a repeated list `[0] * n`
become arrays of n elements per example, so n must be the same number for
every example and known to type inference.  The fence (frontend/fence.py)
refuses a length this module cannot express; the builder
(ir/builder_expressions.py) writes the length as the expression found here,
a local variable replaced by its single definition.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

import gast
import numpy as np

from transpiler.frontend.iterables import builtin_call, constant_value


_STATIC_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def static_count(node, source, locals_) -> Optional[Any]:
    """`node` as an expression whose value type inference knows (a number,
    not a value per example), or None.

    A literal; a module-level or closure integer (read when the program
    runs, never frozen); `len(x)`, `x.shape[k]`, `x.size`, `x.ndim` (the
    per-example shape is fixed); `+ - * // %` of those; and a local
    variable assigned once, from one of those, which is replaced by its
    definition (`n = len(a)` ... `range(n + 1)` -> `range(len(a) + 1)`).
    """
    definitions = _single_definitions(source.node)
    params = {a.id for a in source.node.args.args}

    def static(node, seen):
        if isinstance(node, gast.Constant):
            return copy.deepcopy(node) if type(node.value) is int else None
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            operand = static(node.operand, seen)
            return None if operand is None else gast.UnaryOp(op=node.op, operand=operand)
        if isinstance(node, gast.BinOp) and isinstance(node.op, _STATIC_OPERATORS):
            left, right = static(node.left, seen), static(node.right, seen)
            if left is None or right is None:
                return None
            return gast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node, gast.Name):
            if node.id in params:
                return None
            if node.id in locals_:
                definition = definitions.get(node.id)
                if definition is None or node.id in seen:
                    return None
                return static(definition, seen | {node.id})
            value = constant_value(node.id, source)
            if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
                return copy.deepcopy(node)
            return None
        if builtin_call(node, "len", source, locals_) and len(node.args) == 1 and not node.keywords:
            return copy.deepcopy(node)
        if isinstance(node, gast.Attribute) and node.attr in ("size", "ndim"):
            return copy.deepcopy(node)
        if (
            isinstance(node, gast.Subscript)
            and isinstance(node.value, gast.Attribute)
            and node.value.attr == "shape"
            and _is_int(node.slice)
        ):
            return copy.deepcopy(node)
        return None

    return static(node, frozenset())


def _is_int(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int


def _single_definitions(fn):
    """{name: value} of the locals assigned exactly once, by `name = value`
    or `a, b = x, y` (a tuple display of the same length)."""
    counts, values = {}, {}
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        if isinstance(node, (gast.Assign, gast.AnnAssign)) and getattr(node, "value", None) is not None:
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, gast.Name):
                    values[target.id] = node.value
                elif (
                    isinstance(target, (gast.Tuple, gast.List))
                    and isinstance(node.value, (gast.Tuple, gast.List))
                    and len(target.elts) == len(node.value.elts)
                    and not any(isinstance(e, gast.Starred) for e in target.elts + node.value.elts)
                ):
                    for element, value in zip(target.elts, node.value.elts):
                        if isinstance(element, gast.Name):
                            values[element.id] = value
    return {name: value for name, value in values.items() if counts.get(name) == 1}
