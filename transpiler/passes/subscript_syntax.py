"""The syntax of subscripts: literal indices, static slices and helper calls.

Small AST tests and builders for passes/subscripts.py's rewrite: whether an
index or a slice is a literal (the same for every example, so kept as a
subscript of the batch), `slice(...)` and `take(...)` calls as the builder
and the runtime write them, and the shape queries (`len`, `np.shape`, ...)
whose per-example answer is a constant.  Nothing here evaluates anything.
"""

from __future__ import annotations

import ast
import builtins
from typing import Optional

import numpy as np


def _static_int(node) -> Optional[int]:
    """A literal integer (`3`, `-1`), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    return None


def _static_slice(node: ast.Slice) -> bool:
    parts = (node.lower, node.upper, node.step)
    return all(p is None or _static_int(p) is not None or (isinstance(p, ast.Constant) and p.value is None) for p in parts)


def _ragged_slice(item) -> bool:
    """A slice whose bounds differ per example (not literals): its result's
    length differs per example."""
    return isinstance(item, ast.Slice) and not _static_slice(item)


def _slice_call(node: ast.Slice) -> ast.expr:
    """`slice(lower, upper[, step])`; never `slice(x)`, which means `:x`."""
    parts = [p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)]
    if node.step is None:
        parts.pop()
    return ast.Call(ast.Name("slice", ast.Load()), parts, [])


def _items(node: ast.Subscript):
    index = node.slice
    return list(index.elts) if isinstance(index, ast.Tuple) else [index]


def _shape_constant(query, shape) -> ast.expr:
    """The per-example answer to a shape query: static, so a constant."""
    if query == "shape":
        return ast.Tuple([ast.Constant(d) for d in shape], ast.Load())
    if query == "ndim":
        return ast.Constant(len(shape))
    return ast.Constant(int(np.prod(shape, dtype=np.int64)))


def _shape_queries():
    """Functions whose per-example answer is a static shape: {id: query}.

    On the batch they would answer for the whole batch (`np.shape(v)` is
    (batch, n)), so each is replaced by its per-example constant.
    """
    queries = {id(builtins.len): "len"}
    for fn, query in ((np.shape, "shape"), (np.ndim, "ndim"), (np.size, "size")):
        queries[id(fn)] = query
    try:  # TensorFlow only when it is installed and already imported
        import sys

        tf = sys.modules.get("tensorflow")
        if tf is not None:
            for fn, query in ((tf.shape, "shape"), (tf.rank, "ndim"), (tf.size, "size")):
                queries[id(fn)] = query
    except Exception:  # noqa: BLE001 - a partial TensorFlow: no TF queries
        pass
    return queries


def _as_slice(item):
    """The builder writes slices of assignment targets as `slice(a, b, c)`."""
    if isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and item.func.id == "slice":
        parts = list(item.args) + [None] * (3 - len(item.args))
        parts = [None if isinstance(p, ast.Constant) and p.value is None else p for p in parts]
        return ast.Slice(*parts)
    return item


def _slice_of(node: ast.Slice) -> slice:
    def value(p):
        return None if p is None else _static_int(p) if _static_int(p) is not None else None

    return slice(value(node.lower), value(node.upper), value(node.step))


def _helper(name, array, items, *rest):
    index = ast.Tuple(list(items), ast.Load())
    return ast.Call(ast.Name(name, ast.Load()), [array, index, *rest], [])
