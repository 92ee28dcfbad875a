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
(literals, module constants, `np.ones(3)`) are never expanded: they
broadcast from the right per example and on the batch alike; but their
rank counts, so `d + np.ones(3)` becomes `d[:, None] + np.ones(3)`.  The rewrite is visible in the generated
code, where a reader sees exactly which value was expanded.
"""

from __future__ import annotations

import ast
from typing import Callable, NamedTuple, Optional

import numpy as np

# describe(expression text) -> Operand, or None when the value cannot be
# evaluated (the whole expression reports it).
Describe = Callable[[str], Optional["Operand"]]


class Operand(NamedTuple):
    """What alignment needs to know of one operand's value.

    `rank` is its per-example rank if `batched`, else its own rank (a
    module constant, `np.ones(3)`, a Python number: the same for every
    example).  `python_number`: an int/float/bool literal or global, which
    NumPy and TensorFlow convert to the other operand's dtype by themselves.
    """

    rank: int
    dtype: np.dtype
    batched: bool
    python_number: bool = False


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


# Operators that treat a bool as the int it is in Python (`&`, `|`, `^` of
# two bools stay bools, as in Python).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)


def needed(expr: str, bool_inputs: bool) -> bool:
    """Whether `expr` may hold a bool in arithmetic or a shift, which
    `align` must rewrite even when every operand is one number per example."""
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.RShift)):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            operands = (node.left, node.right)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            operands = (node.operand,)
        else:
            continue
        if bool_inputs or any(isinstance(o, (ast.Compare, ast.BoolOp, ast.Call)) for o in operands):
            return True
    return False


class _Aligner(ast.NodeTransformer):
    def __init__(self, describe: Describe):
        self.describe = describe
        self.changed = False

    def info(self, node: ast.expr) -> Optional[Operand]:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (bool, int, float)):
                return Operand(0, np.asarray(value).dtype, False, True)
            return None
        return self.describe(ast.unparse(node))

    def aligned(self, operands):
        """The operands, batched ones expanded after their batch axis to the
        highest per-example rank (a constant's rank counts: it broadcasts from
        the right, `d + np.ones(3)` is [batch, 1] + [3]), and integer ones
        converted to float if any is a float."""
        infos = [self.info(o) for o in operands]
        batched = [i for i in infos if i is not None and i.batched]
        if not batched:
            return operands  # no batch axis to place: Python's own meaning
        floats = [i.dtype for i in infos if i is not None and i.dtype.kind == "f"]
        top = max(i.rank for i in infos if i is not None)
        out = []
        for operand, info in zip(operands, infos):
            if info is not None and not info.python_number:
                if floats and info.dtype.kind in "iub" and (info.batched or info.rank):
                    operand = convert(operand, floats[0])
                    self.changed = True
                if info.batched and info.rank < top:
                    operand = expand(operand, top - info.rank)
                    self.changed = True
            out.append(operand)
        return out

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, _ARITHMETIC):
            node.left, node.right = self.python_ints([node.left, node.right])
        node.left, node.right = self.aligned([node.left, node.right])
        if isinstance(node.op, (ast.LShift, ast.RShift)) and self.batched(node.left, node.right):
            # TensorFlow tensors have no `<<`: the runtime's shift, per example
            self.changed = True
            helper = "py_lshift" if isinstance(node.op, ast.LShift) else "py_rshift"
            return ast.Call(ast.Name(helper, ast.Load()), [node.left, node.right], [])
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            (node.operand,) = self.python_ints([node.operand])
        return node

    def batched(self, *operands) -> bool:
        return any(i is not None and i.batched for i in map(self.info, operands))

    def python_ints(self, operands):
        """Bools in arithmetic as Python has them: ints (`True + True` is 2,
        `-flag` is -1, `~flag` is -2; NumPy would keep bools, TensorFlow
        refuses).  A bool meeting a float is converted by `aligned`."""
        infos = [self.info(o) for o in operands]
        if any(i is not None and i.dtype.kind == "f" for i in infos):
            return operands
        ints = [i.dtype for i in infos if i is not None and i.dtype.kind in "iu" and not i.python_number]
        out = []
        for operand, info in zip(operands, infos):
            if info is not None and info.dtype.kind == "b" and (info.batched or info.rank):
                operand = convert(operand, ints[0] if ints else np.dtype(np.int64))
                self.changed = True
            out.append(operand)
        return out

    def visit_Compare(self, node):
        self.generic_visit(node)
        first, *rest = self.aligned([node.left, *node.comparators])
        node.left, node.comparators = first, rest
        return node

    # Arguments of calls are aligned inside (their arithmetic is per example
    # too), but never across: a helper receives the values it was given.
