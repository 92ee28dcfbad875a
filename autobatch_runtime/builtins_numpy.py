"""Python's builtins and `math` functions, per example, for NumPy programs.

A Python builtin is never a primitive: `min(a, b)` on a batch would compare
whole arrays.  passes/builtins.py rewrites each builtin call on per-example
values into one of these helpers, which give every example what the builtin
gives that example alone: `py_min(a, b)` is `min(a[k], b[k])` for each k.

Every argument is a [batch, *event] array or a Python number (the same for
every example); results are [batch, *event].  Where Python would raise
(`math.sqrt(-1)`, `int(float("nan"))`) the helpers compute through (NaN,
junk): idle examples reach them with junk values and must not stop the batch.
The generated block stops the active examples that raise in Python
(`python_error`, python_errors.py: the last lines here).
Integers are int64, as Python's ints are in this compiler.

The TensorFlow twin is builtins_tensorflow.py: the same names, the same
meaning.
"""

import functools
import math

import numpy as np

from autobatch_runtime.common import PYTHON_HELPERS, list_join
from autobatch_runtime.array_joins import joining, numpy_join_ops
from autobatch_runtime.array_methods import matrix_product, numpy_api_methods

__all__ = list(PYTHON_HELPERS)  # what the backend re-exports

INT = np.int64
FLOAT = np.float64


def py_min(*args):
    """`min(a, b, ...)` of per-example numbers: Python's rule, the first
    argument kept unless a later one is smaller (so NaN handling is Python's)."""
    result = np.asarray(args[0])
    for other in args[1:]:
        other = np.asarray(other)
        result = np.where(other < result, other, result)
    return result


def py_max(*args):
    """`max(a, b, ...)`: the first kept unless a later one is larger."""
    result = np.asarray(args[0])
    for other in args[1:]:
        other = np.asarray(other)
        result = np.where(other > result, other, result)
    return result


def py_min_of(values):
    """`min(v)` of a per-example vector v: [batch, n] -> [batch].

    Python keeps v[0] unless an element is smaller: a NaN first element
    stays, later NaNs are passed over."""
    values = np.asarray(values)
    if values.dtype.kind != "f":
        return values.min(axis=-1)
    smallest = np.where(np.isnan(values), np.inf, values).min(axis=-1)
    first = values[..., 0]
    return np.where(np.isnan(first), first, np.minimum(first, smallest))


def py_max_of(values):
    """`max(v)` of a per-example vector v: [batch, n] -> [batch]."""
    values = np.asarray(values)
    if values.dtype.kind != "f":
        return values.max(axis=-1)
    largest = np.where(np.isnan(values), -np.inf, values).max(axis=-1)
    first = values[..., 0]
    return np.where(np.isnan(first), first, np.maximum(first, largest))


def py_sum(values, start=0):
    """`sum(v, start)`: Python adds the elements along v's first per-example
    axis (the rows of a matrix): [batch, n, *rest] -> [batch, *rest]."""
    values = np.asarray(values)
    if values.dtype == np.bool_:
        values = values.astype(INT)
    return start + values.sum(axis=1)


def py_all(values):
    """`all(v)` of a per-example vector: [batch, n] -> [batch] bool."""
    return np.asarray(values).astype(bool).all(axis=-1)


def py_any(values):
    """`any(v)` of a per-example vector: [batch, n] -> [batch] bool."""
    return np.asarray(values).astype(bool).any(axis=-1)


def py_sorted(values, reverse=False):
    """`sorted(v)` of a per-example vector: each example's elements in order."""
    ordered = np.sort(np.asarray(values), axis=-1, kind="stable")
    return ordered[..., ::-1] if reverse else ordered


def py_contains(container, item):
    """`item in container` of a per-example array: NumPy's meaning,
    `(container == item).any()`, per example.

    container: [batch, *event]; item: [batch] or a number -> [batch] bool."""
    container = np.asarray(container)
    item = np.asarray(item)
    axes = tuple(range(1, container.ndim))
    expanded = item.reshape(item.shape + (1,) * len(axes)) if item.ndim else item
    return (container == expanded).any(axis=axes)


def py_contains_constant(table, item):
    """`item in TABLE` of a constant (a module-level array or tuple, a
    literal's elements): table: [*event], the same for every example;
    item: [batch] -> [batch] bool."""
    table = np.asarray(table)
    item = np.asarray(item)
    expanded = item.reshape(item.shape + (1,) * table.ndim)
    return (table == expanded).any(axis=tuple(range(1, table.ndim + 1)))


def py_int(value):
    """`int(x)`: floats truncate toward zero, bools become 0 and 1."""
    value = np.asarray(value)
    if value.dtype.kind in "iu":
        return value
    with np.errstate(invalid="ignore"):
        return np.trunc(value).astype(INT) if value.dtype.kind == "f" else value.astype(INT)


def py_float(value):
    """`float(x)`: a Python float is float64."""
    return np.asarray(value).astype(FLOAT)


def py_bool(value):
    """`bool(x)` of a per-example number."""
    return np.asarray(value) != 0


def py_round(value):
    """`round(x)`: the nearest integer, halves to even, as an int."""
    value = np.asarray(value)
    if value.dtype.kind in "iub":
        return value.astype(INT) if value.dtype == np.bool_ else value
    with np.errstate(invalid="ignore"):
        return np.rint(value).astype(INT)


def py_round_digits(value, digits):
    """`round(x, n)`: halves to even at n decimals; ints stay ints."""
    value = np.asarray(value)
    if value.dtype.kind in "iu" and digits >= 0:
        return value
    rounded = np.round(value.astype(FLOAT), digits)
    return rounded.astype(value.dtype) if value.dtype.kind in "iu" else rounded


def py_powmod(base, exponent, modulus):
    """`pow(b, e, m)` by squaring (e >= 0); products must fit in int64, so
    m below 2**31 is exact."""
    base, exponent, modulus = (np.asarray(v).astype(INT) for v in (base, exponent, modulus))
    safe = np.where(modulus == 0, 1, modulus)
    result = np.ones(np.broadcast(base, exponent, modulus).shape, INT) % safe
    base = base % safe
    exponent = np.maximum(exponent, 0)
    for _ in range(63):
        result = np.where(exponent & 1, (result * base) % safe, result)
        base = (base * base) % safe
        exponent = exponent >> 1
    return result


def py_decimal_length(value):
    """`len(str(n))` of an int (a minus sign counts) or a bool ('True', 'False')."""
    value = np.asarray(value)
    if value.dtype == np.bool_:
        return np.where(value, 4, 5).astype(INT)
    magnitude = np.abs(value.astype(INT))
    digits = np.ones(value.shape, INT)
    for power in range(1, 19):
        digits += magnitude >= 10**power
    return digits + (value < 0)


def py_popcount(value):
    """`bin(n).count("1")`: the number of one bits of |n|."""
    magnitude = np.abs(np.asarray(value).astype(INT))
    count = np.zeros(magnitude.shape, INT)
    for _ in range(63):
        count += magnitude & 1
        magnitude = magnitude >> 1
    return count


def py_isqrt(value):
    """`math.isqrt(n)`: the floor of the exact square root (n >= 0)."""
    value = np.maximum(np.asarray(value).astype(INT), 0)
    root = np.floor(np.sqrt(value.astype(FLOAT))).astype(INT)
    for _ in range(2):  # float rounding can be one off either way
        # root * root > value, without the square (it overflows near 2**63)
        root = np.where(root > value // np.maximum(root, 1), root - 1, root)
        root = np.where(root + 1 <= value // (root + 1), root + 1, root)
    return root


def py_gcd(a, b):
    """`math.gcd(a, b)`: Euclid on magnitudes, every example at once."""
    a = np.abs(np.asarray(a).astype(INT))
    b = np.abs(np.asarray(b).astype(INT))
    a, b = np.broadcast_arrays(a, b)
    a, b = a.copy(), b.copy()
    while np.any(b != 0):
        nonzero = b != 0
        remainder = a % np.where(nonzero, b, 1)
        a, b = np.where(nonzero, b, a), np.where(nonzero, remainder, 0)
    return a


def py_lcm(a, b):
    """`math.lcm(a, b)`; 0 when either is 0."""
    a = np.asarray(a).astype(INT)
    b = np.asarray(b).astype(INT)
    divisor = py_gcd(a, b)
    return np.where(divisor == 0, 0, np.abs(a // np.where(divisor == 0, 1, divisor) * b))


def py_floor(value):
    """`math.floor(x)`: an int."""
    value = np.asarray(value)
    if value.dtype.kind in "iu":
        return value
    with np.errstate(invalid="ignore"):
        return np.floor(value).astype(INT)


def py_ceil(value):
    """`math.ceil(x)`: an int."""
    value = np.asarray(value)
    if value.dtype.kind in "iu":
        return value
    with np.errstate(invalid="ignore"):
        return np.ceil(value).astype(INT)


def py_log(value, base=None):
    """`math.log(x[, base])`."""
    with np.errstate(all="ignore"):
        result = np.log(np.asarray(value).astype(FLOAT))
        if base is not None:
            result = result / np.log(np.asarray(base).astype(FLOAT))
    return result


def _float_function(function):
    """A `math` function of floats: ints converted first, as `math` does;
    domain errors give NaN (or inf) instead of raising."""

    def apply(*args):
        with np.errstate(all="ignore"):
            return function(*(np.asarray(a).astype(FLOAT) for a in args))

    apply.__name__ = function.__name__
    return apply


def _isnan(value):
    value = np.asarray(value)
    return np.isnan(value) if value.dtype.kind == "f" else np.zeros(value.shape, bool)


def _isinf(value):
    value = np.asarray(value)
    return np.isinf(value) if value.dtype.kind == "f" else np.zeros(value.shape, bool)


def _isfinite(value):
    value = np.asarray(value)
    return np.isfinite(value) if value.dtype.kind == "f" else np.ones(value.shape, bool)


# `math.<name>` -> its per-example helper: every one returns a float except
# floor/ceil/trunc (ints), isqrt, gcd, lcm (ints) and the is* tests (bools).
MATH = {
    "sqrt": _float_function(np.sqrt),
    "exp": _float_function(np.exp),
    "expm1": _float_function(np.expm1),
    "log1p": _float_function(np.log1p),
    "log2": _float_function(np.log2),
    "log10": _float_function(np.log10),
    "sin": _float_function(np.sin),
    "cos": _float_function(np.cos),
    "tan": _float_function(np.tan),
    "asin": _float_function(np.arcsin),
    "acos": _float_function(np.arccos),
    "atan": _float_function(np.arctan),
    "sinh": _float_function(np.sinh),
    "cosh": _float_function(np.cosh),
    "tanh": _float_function(np.tanh),
    "asinh": _float_function(np.arcsinh),
    "acosh": _float_function(np.arccosh),
    "atanh": _float_function(np.arctanh),
    "fabs": _float_function(np.abs),
    "degrees": _float_function(np.degrees),
    "radians": _float_function(np.radians),
    "atan2": _float_function(np.arctan2),
    "hypot": _float_function(lambda *sides: functools.reduce(np.hypot, sides, 0.0)),
    "copysign": _float_function(np.copysign),
    "fmod": _float_function(np.fmod),
    "pow": _float_function(np.power),
    "log": py_log,
    "floor": py_floor,
    "ceil": py_ceil,
    "trunc": py_int,
    "isqrt": py_isqrt,
    "gcd": py_gcd,
    "lcm": py_lcm,
    "isnan": _isnan,
    "isinf": _isinf,
    "isfinite": _isfinite,
}


def py_math(name, *args):
    """`math.<name>(*args)` per example (see MATH)."""
    return MATH[name](*args)


assert set(MATH) <= set(dir(math))


def py_list_equal(a, b):
    """`list_a == list_b` per example: one bool, all items equal (lists of
    unlike lengths differ).  a, b: [batch, n] (or one shared [n])."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape[-1:] != b.shape[-1:]:
        return np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]), bool)
    return np.all(a == b, axis=-1)


def py_list_index(items, x):
    """`items.index(x)` of a per-example list: the first position holding x,
    -1 where none does (python_error "not_found" stops that example with
    Python's ValueError).  items [batch, n] (or [n]), x [batch] -> [batch]."""
    found = np.asarray(items) == np.asarray(x)[..., None]
    return np.where(found.any(axis=-1), np.argmax(found, axis=-1), -1)


def py_list_count(items, x):
    """`items.count(x)` of a per-example list: how many items equal x."""
    return np.sum(np.asarray(items) == np.asarray(x)[..., None], axis=-1, dtype=np.int64)


py_list_join = list_join(np)  # `a + b` of two lists per example (common.py)
py_array_method = numpy_api_methods(np)  # `v.sum()`, `v.cumsum()` per example (array_methods.py)
py_matmul = matrix_product(lambda a, b: (np.asarray(a), np.asarray(b)), np.matmul)  # `a @ b` per example
py_join = joining(numpy_join_ops(np))  # `np.concatenate([a, b])` per example (array_joins.py)


def py_times_flag(x, flag):
    """`x * flag` of a float and a per-example bool: Python's product
    (`nan * False` is nan; the TensorFlow and JAX twins keep it so under XLA)."""
    return np.asarray(x) * np.asarray(flag)


def py_not(value):
    """`not` of a per-example truth value (for `not in`)."""
    return np.logical_not(value)


def py_some(value):
    """A per-example value as an `Optional` that holds it in every example:
    value [batch, *event] -> Optional([batch] True, value)."""
    from autobatch_runtime.optional import Optional

    value = np.asarray(value)
    return Optional(np.ones(value.shape[:1], bool), value)


def py_none(dtype, shape):
    """`None` as an `Optional` of a per-example dtype and shape, without the
    batch axis (the block's `spread` gives it one)."""
    from autobatch_runtime.optional import Optional

    return Optional(np.asarray(False), np.zeros(shape, dtype))


def py_lshift(a, b):
    """`a << b` of ints per example (int64 wraps where Python's ints grow)."""
    return np.left_shift(a, b)


def py_rshift(a, b):
    """`a >> b` of ints per example: an arithmetic shift, as Python's."""
    return np.right_shift(a, b)


def py_sorted_elements(values, reverse=False):
    """`sorted((a, b, c))` of per-example numbers: a list of as many [batch]
    arrays, each example's numbers in order."""
    ordered = py_sorted(np.stack(np.broadcast_arrays(*values), axis=-1), reverse)
    return [ordered[..., k] for k in range(len(values))]


from autobatch_runtime.python_errors import array_ops, helpers as _python_error_helpers  # noqa: E402
from autobatch_runtime.ragged import array_helpers as _ragged_helpers

globals().update(_ragged_helpers(np))  # ragged_*: vectors of per-example length


def _power(base, exponent):
    with np.errstate(all="ignore"):
        return np.power(base, exponent)


# python_error, py_bound, py_divisor, py_power: where Python raises (python_errors.py)
globals().update(_python_error_helpers(array_ops(np, py_math, power=_power)))
