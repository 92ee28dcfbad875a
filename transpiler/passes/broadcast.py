"""Per-example broadcasting for operators between values of different rank.

Per example, `eps * grad` multiplies a scalar by a vector.  On the batch,
`eps` is [batch] and `grad` is [batch, dims]; NumPy and TensorFlow align
shapes from the right, so they refuse the product (or, when dims happens to
equal the batch size, silently pair the wrong elements).  The per-example
meaning needs the scalar's batch axis kept first: `eps[:, None] * grad`.

`align` rewrites an expression so that every binary operator and comparison
sees operands of equal per-example rank, inserting `[:, None, ...]` right
after the batch axis of the lower-rank side.  It also converts an integer
operand met by a floating one (`accept / leapfrogs`), as Python would:
TensorFlow refuses to mix them.  Operands that are not batched
(literals, module constants) are left alone: they broadcast from the right
per example and on the batch alike.  The rewrite is visible in the generated
code, where a reader sees exactly which value was expanded.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional, Tuple

import numpy as np

# describe(expression text) -> (per-example rank, dtype) of its value; rank
# None for a Python float (no batch, but a float); None when the value is
# another constant or cannot be evaluated.
Describe = Callable[[str], Optional[Tuple[int, np.dtype]]]


def align(expr: str, describe: Describe) -> str:
    """`expr` with operands brought to a common per-example rank and kind."""
    tree = ast.parse(expr, mode="eval")
    aligner = _Aligner(describe)
    new = aligner.visit(tree)
    if not aligner.changed:
        return expr
    return ast.unparse(ast.fix_missing_locations(new))


def expand(node: ast.expr, axes: int) -> ast.expr:
    """`node[:, None, ...]` with `axes` new axes after the batch axis."""
    index = [ast.Slice()] + [ast.Constant(None)] * axes
    return ast.Subscript(value=node, slice=ast.Tuple(index, ast.Load()), ctx=ast.Load())


def convert(node: ast.expr, dtype: np.dtype) -> ast.expr:
    """`cast(node, "float64")`: the generated module's `cast` helper."""
    return ast.Call(ast.Name("cast", ast.Load()), [node, ast.Constant(dtype.name)], [])


class _Aligner(ast.NodeTransformer):
    def __init__(self, describe: Describe):
        self.describe = describe
        self.changed = False

    def info(self, node: ast.expr):
        if isinstance(node, ast.Constant):
            # A Python float is no batch but still a float (`n * 1.5`).
            return (None, np.dtype(np.float64)) if isinstance(node.value, float) else None
        return self.describe(ast.unparse(node))

    def aligned(self, operands):
        """The operands, expanded to the highest rank and converted to float if any is."""
        infos = [self.info(o) for o in operands]
        floats = [i[1] for i in infos if i is not None and i[1].kind == "f"]
        # Batched operands; a Python float (rank None) only lends its kind.
        known = [i for i in infos if i is not None and i[0] is not None]
        infos = [i if i is not None and i[0] is not None else None for i in infos]
        if not known or (len(known) < 2 and not floats):
            return operands
        top = max(rank for rank, _ in known)
        out = []
        for operand, info in zip(operands, infos):
            if info is not None:
                rank, dtype = info
                if floats and dtype.kind in "iu":
                    operand = convert(operand, floats[0])
                    self.changed = True
                if rank < top:
                    operand = expand(operand, top - rank)
                    self.changed = True
            out.append(operand)
        return out

    def visit_BinOp(self, node):
        self.generic_visit(node)
        node.left, node.right = self.aligned([node.left, node.right])
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        first, *rest = self.aligned([node.left, *node.comparators])
        node.left, node.comparators = first, rest
        return node

    # Arguments of calls are aligned inside (their arithmetic is per example
    # too), but never across: a helper receives the values it was given.
