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

Operators keep Python's meaning per example (`needed` says where to look):

- a bool in arithmetic is an int, as in Python (`count + (x > 0)`,
  `True + True == 2`, `-flag`, `~flag == -2`): TensorFlow refuses bool
  arithmetic and NumPy keeps bools bool (`True + True` is True), so a bool
  operand becomes `cast(flag, "int64")` (or the other operand's integer
  type).  NumPy's own promotions are left as written where they already
  give Python's answer (`flag + n`, `flag & n`);
- `<<` and `>>` on TensorFlow values become the runtime's `py_lshift` and
  `py_rshift` (tensors have no shift operators; a shift by the width or
  more gives what Python's would, wrapped to the integer type);
- a divisor that differs per example, between two numbers, becomes
  `py_divisor(d)` (`a % py_divisor(b)`, `x / py_divisor(y)`): zeros become
  ones, and the block stops the active examples whose divisor is zero with
  Python's ZeroDivisionError (emit/block.py; autobatch_runtime/
  python_errors.py).  Examples elsewhere in the program divide by their
  junk, which must never raise; a per-example shift count between two
  numbers becomes `py_shift_count(k)` the same way (a negative count
  raises ValueError);
- an integer divisor of an example's array (`v // d`) becomes
  `divisor_or_one(d)` (NumPy's arrays do not raise either), and an integer
  exponent `exponent_or_zero(k)` (a negative one stops the example);
- a power of per-example numbers, one a float (or an int to a literal
  negative power, a float in Python: `2 ** -1 == 0.5`), becomes `py_power(x, y)`:
  Python raises where it overflows or divides by zero, and goes complex for
  a negative number to a fractional power, which the block stops; a power
  of per-example ints becomes `py_int_power(x, k)`: where Python's int
  would grow beyond int64, the example stops with OverflowError.
"""

from __future__ import annotations

import ast
import functools
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
    tensorflow: bool = False  # a TensorFlow value: its operators are TensorFlow's


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


# The runtime helpers this module writes (the generated module's `rt.<name>`).
HELPERS = (
    "divisor_or_one",
    "exponent_or_zero",
    "py_int_power",
    "py_lshift",
    "py_matmul",
    "py_rshift",
    "py_shift_count",
    "py_times_flag",
)

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_SHIFTS = {ast.LShift: "py_lshift", ast.RShift: "py_rshift"}
_INT64 = np.dtype(np.int64)


@functools.lru_cache(maxsize=None)
def needed(expr: str) -> bool:
    """Whether `expr` has an operator whose Python meaning `align` may have
    to spell out, even when every operand is one number per example (any
    binary operator, unary `-`, `+`, `~`): a bool in arithmetic, a shift, a
    divisor or exponent that differs per example."""
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if isinstance(node, ast.BinOp):
            return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            return True
    return False


def _unconverted(node: ast.expr) -> ast.expr:
    """The operand inside `cast(operand, dtype)` (written by `convert`)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cast":
        node = node.args[0]
    return node


def _negative_literal(node: ast.expr) -> bool:
    """`-1`, `-2`: an int to this power is a float in Python (`2 ** -1 == 0.5`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
        return isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value < 0


def _helper(name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def _is_bool(info: Optional[Operand]) -> bool:
    return info is not None and info.dtype.kind == "b"


def _as_int(node: ast.expr, info: Operand, dtype: np.dtype) -> ast.expr:
    """A bool operand as the integer Python would use: `True` -> `1`, a
    bool global `int(FLAG)`, else `cast(flag, "int64")`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return ast.Constant(int(node.value))
    if info.python_number:
        return ast.Call(ast.Name("int", ast.Load()), [node], [])
    return convert(node, dtype)


class _Aligner(ast.NodeTransformer):
    def __init__(self, describe: Describe):
        self.describe = describe
        self.described = {}  # text -> Operand: each subexpression evaluated once
        self.changed = False

    def info(self, node: ast.expr) -> Optional[Operand]:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (bool, int, float)):
                return Operand(0, np.asarray(value).dtype, False, True)
            return None
        text = ast.unparse(node)
        if text not in self.described:
            self.described[text] = self.describe(text)
        return self.described[text]

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
        op = node.op
        if isinstance(op, ast.MatMult):
            return self.matrix_product(node)
        flag_side = self.float_times_flag(node) if isinstance(op, ast.Mult) else None
        operands = self.python_meaning(op, [node.left, node.right])
        node.left, node.right = self.aligned(operands)
        if flag_side is not None:
            # `x * flag` of a float and a bool: Python's product (`nan * False`
            # is nan), where XLA rewrites a product by a converted bool into a
            # select that gives 0
            sides = [node.left, node.right]
            flag = _unconverted(sides[flag_side])
            self.changed = True
            return ast.copy_location(_helper("py_times_flag", sides[1 - flag_side], flag), node)
        infos = [self.info(o) for o in (node.left, node.right)]
        if not any(i is not None and i.batched for i in infos):
            return node
        right = infos[1]
        integers = all(i is not None and i.dtype.kind in "iub" for i in infos)
        numbers = all(i is not None and i.rank == 0 for i in infos)  # scalars: Python numbers
        if numbers and right.batched and isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
            # Python raises ZeroDivisionError: that example stops (emit/block.py)
            node.right = _helper("py_divisor", node.right)
            self.changed = True
        elif integers and right.batched and isinstance(op, (ast.FloorDiv, ast.Mod)):
            node.right = _helper("divisor_or_one", node.right)
            self.changed = True
        elif integers and right.batched and isinstance(op, ast.Pow):
            node.right = _helper("exponent_or_zero", node.right)
            self.changed = True
            if numbers:  # Python's int grows: beyond int64 the example stops
                return ast.copy_location(_helper("py_int_power", node.left, node.right), node)
        elif numbers and integers and isinstance(op, ast.Pow) and not _negative_literal(node.right):
            self.changed = True
            return ast.copy_location(_helper("py_int_power", node.left, node.right), node)
        elif numbers and integers and right.batched and type(op) in _SHIFTS:
            # Python raises ValueError for a negative shift count: that example stops
            node.right = _helper("py_shift_count", node.right)
            self.changed = True
        elif numbers and isinstance(op, ast.Pow) and (not integers or _negative_literal(node.right)):
            # a float power: Python raises or goes complex where arrays give inf or NaN
            self.changed = True
            return ast.copy_location(_helper("py_power", node.left, node.right), node)
        if type(op) in _SHIFTS and any(i is not None and i.tensorflow for i in infos):
            self.changed = True
            return ast.copy_location(_helper(_SHIFTS[type(op)], node.left, node.right), node)
        return node

    def float_times_flag(self, node) -> Optional[int]:
        """Which side of `node` (a product) is a per-example bool met by a
        float, or None."""
        infos = [self.info(node.left), self.info(node.right)]
        if None in infos or not any(i.batched for i in infos):
            return None
        for side, (flag, other) in enumerate(((infos[0], infos[1]), (infos[1], infos[0]))):
            if flag.dtype.kind == "b" and not flag.python_number and other.dtype.kind == "f":
                return side
        return None

    def matrix_product(self, node):
        """`a @ b` with a per-example operand: `py_matmul(a, b, a_rank,
        b_rank)`, NumPy's matmul of each example's arrays.  As written, the
        batch axis would be a matrix's rows: `v @ m` would multiply the
        [batch, n] matrix of every example's vector by each m, and `v @ w`
        the [batch, n] matrix by [batch, n] (a wrong answer where n equals
        the batch size).  The ranks say which operand is a vector."""
        infos = [self.info(node.left), self.info(node.right)]
        if None in infos or not any(i.batched for i in infos):
            return node  # the same for every example: the library's own product
        self.changed = True
        ranks = [ast.Constant(i.rank) for i in infos]
        return ast.copy_location(_helper("py_matmul", node.left, node.right, *ranks), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            info = self.info(node.operand)
            if _is_bool(info) and info.batched and info.rank == 0:
                # `-flag`, `~flag`: Python negates the int (`~True == -2`);
                # NumPy refuses `-` and TensorFlow `-`, `+` on bools, and
                # both read `~` as `not`.
                node.operand = _as_int(node.operand, info, _INT64)
                self.changed = True
            if isinstance(node.op, ast.UAdd) and info is not None and info.tensorflow:
                self.changed = True  # tensors have no unary `+`; Python's is the value
                return node.operand
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        first, *rest = self.aligned(self.python_meaning(None, [node.left, *node.comparators]))
        node.left, node.comparators = first, rest
        return node

    def python_meaning(self, op, operands):
        """`operands` with bools as ints where `op` would not take them as
        Python does: arithmetic and shifts (on NumPy only where every operand
        is a bool: it promotes a bool beside an int by itself), and, on
        TensorFlow, `&`, `|`, `^` and comparisons of a bool with a number.
        `op` None: a comparison."""
        infos = [self.info(o) for o in operands]
        if not any(i is not None and i.batched for i in infos):
            return operands  # constants only: Python's (or the library's) own meaning
        bools = [_is_bool(i) for i in infos]
        if not any(bools) or any(i is None for i in infos):
            return operands
        if any(i.dtype.kind in "fc" for i in infos):
            return operands  # a float meets it: `aligned` converts it
        tensorflow = any(i.tensorflow for i in infos)
        if isinstance(op, _ARITHMETIC) or type(op) in _SHIFTS:
            if all(bools):
                # Python's bools add as ints; NumPy arrays of bools (an
                # example's own vector) keep NumPy's meaning, as per example.
                convert_bools = all(i.rank == 0 for i in infos)
            else:
                convert_bools = tensorflow  # NumPy promotes a bool beside an int
        else:  # bitwise or a comparison: bool with bool stays bool
            convert_bools = tensorflow and not all(bools)
        if not convert_bools:
            return operands
        ints = [i.dtype for i in infos if i.dtype.kind in "iu" and not i.python_number]
        target = ints[0] if ints else _INT64
        out = []
        for operand, info, is_bool in zip(operands, infos, bools):
            if is_bool:
                operand = _as_int(operand, info, target)
                self.changed = True
            out.append(operand)
        return out

    # Arguments of calls are aligned inside (their arithmetic is per example
    # too), but never across: a helper receives the values it was given.
