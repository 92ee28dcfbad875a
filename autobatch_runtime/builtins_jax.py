"""Python's builtins and `math` functions, per example, for JAX programs.

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

Written from builtins_numpy.py, its NumPy twin, name for name: the same
meaning with `jnp` for `np` (no `errstate`: XLA never raises on a domain
error), and loops over data as `lax.while_loop`.
"""

import functools
import math

import numpy as np
import jax.numpy as jnp
from jax import lax

from autobatch_runtime.common import PYTHON_HELPERS, list_join
from autobatch_runtime.array_joins import joining, numpy_join_ops
from autobatch_runtime.array_methods import matrix_product, numpy_api_methods

__all__ = list(PYTHON_HELPERS)  # what the backend re-exports

INT = jnp.int64
FLOAT = jnp.float64


def py_min(*args):
    """`min(a, b, ...)` of per-example numbers: Python's rule, the first
    argument kept unless a later one is smaller (so NaN handling is Python's)."""
    result = jnp.asarray(args[0])
    for other in args[1:]:
        other = jnp.asarray(other)
        result = jnp.where(other < result, other, result)
    return result


def py_max(*args):
    """`max(a, b, ...)`: the first kept unless a later one is larger."""
    result = jnp.asarray(args[0])
    for other in args[1:]:
        other = jnp.asarray(other)
        result = jnp.where(other > result, other, result)
    return result


def py_min_of(values):
    """`min(v)` of a per-example vector v: [batch, n] -> [batch].

    Python keeps v[0] unless an element is smaller: a NaN first element
    stays, later NaNs are passed over."""
    values = jnp.asarray(values)
    if values.dtype.kind != "f":
        return values.min(axis=-1)
    smallest = jnp.where(jnp.isnan(values), jnp.inf, values).min(axis=-1)
    first = values[..., 0]
    return jnp.where(jnp.isnan(first), first, jnp.minimum(first, smallest))


def py_max_of(values):
    """`max(v)` of a per-example vector v: [batch, n] -> [batch]."""
    values = jnp.asarray(values)
    if values.dtype.kind != "f":
        return values.max(axis=-1)
    largest = jnp.where(jnp.isnan(values), -jnp.inf, values).max(axis=-1)
    first = values[..., 0]
    return jnp.where(jnp.isnan(first), first, jnp.maximum(first, largest))


def py_sum(values, start=0):
    """`sum(v, start)`: Python adds the elements along v's first per-example
    axis (the rows of a matrix): [batch, n, *rest] -> [batch, *rest]."""
    values = jnp.asarray(values)
    if values.dtype == jnp.bool_:
        values = values.astype(INT)
    return start + values.sum(axis=1)


def py_all(values):
    """`all(v)` of a per-example vector: [batch, n] -> [batch] bool."""
    return jnp.asarray(values).astype(bool).all(axis=-1)


def py_any(values):
    """`any(v)` of a per-example vector: [batch, n] -> [batch] bool."""
    return jnp.asarray(values).astype(bool).any(axis=-1)


def py_sorted(values, reverse=False):
    """`sorted(v)` of a per-example vector: each example's elements in order."""
    ordered = jnp.sort(jnp.asarray(values), axis=-1, stable=True)
    return ordered[..., ::-1] if reverse else ordered


def py_contains(container, item):
    """`item in container` of a per-example array: NumPy's meaning,
    `(container == item).any()`, per example.

    container: [batch, *event]; item: [batch] or a number -> [batch] bool."""
    container = jnp.asarray(container)
    item = jnp.asarray(item)
    axes = tuple(range(1, container.ndim))
    expanded = item.reshape(item.shape + (1,) * len(axes)) if item.ndim else item
    return (container == expanded).any(axis=axes)


def py_contains_constant(table, item):
    """`item in TABLE` of a constant (a module-level array or tuple, a
    literal's elements): table: [*event], the same for every example;
    item: [batch] -> [batch] bool."""
    table = jnp.asarray(table)
    item = jnp.asarray(item)
    expanded = item.reshape(item.shape + (1,) * table.ndim)
    return (table == expanded).any(axis=tuple(range(1, table.ndim + 1)))


def py_int(value):
    """`int(x)`: floats truncate toward zero, bools become 0 and 1."""
    value = jnp.asarray(value)
    if value.dtype.kind in "iu":
        return value
    return jnp.trunc(value).astype(INT) if value.dtype.kind == "f" else value.astype(INT)


def py_float(value):
    """`float(x)`: a Python float is float64."""
    return jnp.asarray(value).astype(FLOAT)


def py_bool(value):
    """`bool(x)` of a per-example number."""
    return jnp.asarray(value) != 0


def py_round(value):
    """`round(x)`: the nearest integer, halves to even, as an int."""
    value = jnp.asarray(value)
    if value.dtype.kind in "iub":
        return value.astype(INT) if value.dtype == jnp.bool_ else value
    return jnp.rint(value).astype(INT)


def py_round_digits(value, digits):
    """`round(x, n)`: halves to even at n decimals; ints stay ints."""
    value = jnp.asarray(value)
    if value.dtype.kind in "iu" and digits >= 0:
        return value
    rounded = jnp.round(value.astype(FLOAT), digits)
    return rounded.astype(value.dtype) if value.dtype.kind in "iu" else rounded


def py_powmod(base, exponent, modulus):
    """`pow(b, e, m)` by squaring (e >= 0); products must fit in int64, so
    m below 2**31 is exact."""
    base, exponent, modulus = (jnp.asarray(v).astype(INT) for v in (base, exponent, modulus))
    safe = jnp.where(modulus == 0, 1, modulus)
    result = jnp.ones(jnp.broadcast_shapes(base.shape, exponent.shape, modulus.shape), INT) % safe
    base = base % safe
    exponent = jnp.maximum(exponent, 0)
    for _ in range(63):
        result = jnp.where(exponent & 1, (result * base) % safe, result)
        base = (base * base) % safe
        exponent = exponent >> 1
    return result


def py_decimal_length(value):
    """`len(str(n))` of an int (a minus sign counts) or a bool ('True', 'False')."""
    value = jnp.asarray(value)
    if value.dtype == jnp.bool_:
        return jnp.where(value, 4, 5).astype(INT)
    magnitude = jnp.abs(value.astype(INT))
    digits = jnp.ones(value.shape, INT)
    for power in range(1, 19):
        digits += magnitude >= 10**power
    return digits + (value < 0)


def py_popcount(value):
    """`bin(n).count("1")`: the number of one bits of |n|."""
    magnitude = jnp.abs(jnp.asarray(value).astype(INT))
    count = jnp.zeros(magnitude.shape, INT)
    for _ in range(63):
        count += magnitude & 1
        magnitude = magnitude >> 1
    return count


def py_isqrt(value):
    """`math.isqrt(n)`: the floor of the exact square root (n >= 0)."""
    value = jnp.maximum(jnp.asarray(value).astype(INT), 0)
    root = jnp.floor(jnp.sqrt(value.astype(FLOAT))).astype(INT)
    for _ in range(2):  # float rounding can be one off either way
        # root * root > value, without the square (it overflows near 2**63)
        root = jnp.where(root > value // jnp.maximum(root, 1), root - 1, root)
        root = jnp.where(root + 1 <= value // (root + 1), root + 1, root)
    return root


def py_gcd(a, b):
    """`math.gcd(a, b)`: Euclid on magnitudes, every example at once (a
    `lax.while_loop` until every example's remainder is 0)."""
    a = jnp.abs(jnp.asarray(a).astype(INT))
    b = jnp.abs(jnp.asarray(b).astype(INT))
    a, b = jnp.broadcast_arrays(a, b)

    def step(pair):
        a, b = pair
        nonzero = b != 0
        remainder = a % jnp.where(nonzero, b, 1)
        return jnp.where(nonzero, b, a), jnp.where(nonzero, remainder, 0)

    return lax.while_loop(lambda pair: jnp.any(pair[1] != 0), step, (a, b))[0]


def py_lcm(a, b):
    """`math.lcm(a, b)`; 0 when either is 0."""
    a = jnp.asarray(a).astype(INT)
    b = jnp.asarray(b).astype(INT)
    divisor = py_gcd(a, b)
    return jnp.where(divisor == 0, 0, jnp.abs(a // jnp.where(divisor == 0, 1, divisor) * b))


def py_floor(value):
    """`math.floor(x)`: an int."""
    value = jnp.asarray(value)
    if value.dtype.kind in "iu":
        return value
    return jnp.floor(value).astype(INT)


def py_ceil(value):
    """`math.ceil(x)`: an int."""
    value = jnp.asarray(value)
    if value.dtype.kind in "iu":
        return value
    return jnp.ceil(value).astype(INT)


def py_log(value, base=None):
    """`math.log(x[, base])`."""
    result = jnp.log(jnp.asarray(value).astype(FLOAT))
    if base is not None:
        result = result / jnp.log(jnp.asarray(base).astype(FLOAT))
    return result


def _snap(result):
    """A logarithm XLA computed as log(x) / log(b), put on the integer it is
    within a few ulps of: Python's log2 and log10 are exact at powers (XLA's
    log2(8.0) is 2.9999999999999996; builtins_tensorflow.py does the same)."""
    nearest = jnp.round(result)
    epsilon = float(np.finfo(np.float64).eps)
    close = jnp.abs(result - nearest) <= 8 * epsilon * jnp.maximum(jnp.abs(nearest), 1.0)
    return jnp.where(close, nearest, result)


def _float_function(function):
    """A `math` function of floats: ints converted first, as `math` does;
    domain errors give NaN (or inf) instead of raising."""

    def apply(*args):
        return function(*(jnp.asarray(a).astype(FLOAT) for a in args))

    apply.__name__ = function.__name__
    return apply


def _isnan(value):
    value = jnp.asarray(value)
    return jnp.isnan(value) if value.dtype.kind == "f" else jnp.zeros(value.shape, bool)


def _isinf(value):
    value = jnp.asarray(value)
    return jnp.isinf(value) if value.dtype.kind == "f" else jnp.zeros(value.shape, bool)


def _isfinite(value):
    value = jnp.asarray(value)
    return jnp.isfinite(value) if value.dtype.kind == "f" else jnp.ones(value.shape, bool)


# `math.<name>` -> its per-example helper: every one returns a float except
# floor/ceil/trunc (ints), isqrt, gcd, lcm (ints) and the is* tests (bools).
MATH = {
    "sqrt": _float_function(jnp.sqrt),
    "exp": _float_function(jnp.exp),
    "expm1": _float_function(jnp.expm1),
    "log1p": _float_function(jnp.log1p),
    "log2": _float_function(lambda x: _snap(jnp.log2(x))),
    "log10": _float_function(lambda x: _snap(jnp.log10(x))),
    "sin": _float_function(jnp.sin),
    "cos": _float_function(jnp.cos),
    "tan": _float_function(jnp.tan),
    "asin": _float_function(jnp.arcsin),
    "acos": _float_function(jnp.arccos),
    "atan": _float_function(jnp.arctan),
    "sinh": _float_function(jnp.sinh),
    "cosh": _float_function(jnp.cosh),
    "tanh": _float_function(jnp.tanh),
    "asinh": _float_function(jnp.arcsinh),
    "acosh": _float_function(jnp.arccosh),
    "atanh": _float_function(jnp.arctanh),
    "fabs": _float_function(jnp.abs),
    "degrees": _float_function(jnp.degrees),
    "radians": _float_function(jnp.radians),
    "atan2": _float_function(jnp.arctan2),
    "hypot": _float_function(lambda *sides: functools.reduce(jnp.hypot, sides, 0.0)),
    "copysign": _float_function(jnp.copysign),
    "fmod": _float_function(jnp.fmod),
    "pow": _float_function(jnp.power),
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
    a, b = jnp.asarray(a), jnp.asarray(b)
    if a.shape[-1:] != b.shape[-1:]:
        return jnp.zeros(jnp.broadcast_shapes(a.shape[:-1], b.shape[:-1]), bool)
    return jnp.all(a == b, axis=-1)


def py_list_index(items, x):
    """`items.index(x)` per example (builtins_numpy.py): -1 where absent."""
    found = jnp.asarray(items) == jnp.asarray(x)[..., None]
    return jnp.where(found.any(axis=-1), jnp.argmax(found, axis=-1), -1)


def py_list_count(items, x):
    """`items.count(x)` per example (builtins_numpy.py)."""
    return jnp.sum(jnp.asarray(items) == jnp.asarray(x)[..., None], axis=-1, dtype=jnp.int64)


py_list_join = list_join(jnp)  # `a + b` of two lists per example (common.py)
py_array_method = numpy_api_methods(jnp)  # `v.sum()`, `v.cumsum()` per example (array_methods.py)
py_matmul = matrix_product(lambda a, b: (jnp.asarray(a), jnp.asarray(b)), jnp.matmul)  # `a @ b` per example
py_join = joining(numpy_join_ops(jnp))  # `np.concatenate([a, b])` per example (array_joins.py)


def py_times_flag(x, flag):
    """`x * flag` of a float and a bool (builtins_numpy.py): XLA would make
    the product by a converted bool a select that gives 0 for `nan * False`."""
    x = jnp.asarray(x)
    return jnp.where(flag, x, x * 0)


def py_not(value):
    """`not` of a per-example truth value (for `not in`)."""
    return jnp.logical_not(value)


def py_some(value):
    """A per-example value as an `Optional` that holds it in every example:
    value [batch, *event] -> Optional([batch] True, value)."""
    from autobatch_runtime.optional import Optional

    value = jnp.asarray(value)
    return Optional(jnp.ones(value.shape[:1], bool), value)


def py_none(dtype, shape):
    """`None` as an `Optional` of a per-example dtype and shape, without the
    batch axis (the block's `spread` gives it one)."""
    from autobatch_runtime.optional import Optional

    return Optional(jnp.asarray(False), jnp.zeros(shape, dtype))


def py_lshift(a, b):
    """`a << b` of ints per example (int64 wraps where Python's ints grow)."""
    return jnp.left_shift(a, b)


def py_rshift(a, b):
    """`a >> b` of ints per example: an arithmetic shift, as Python's."""
    return jnp.right_shift(a, b)


def py_sorted_elements(values, reverse=False):
    """`sorted((a, b, c))` of per-example numbers: a list of as many [batch]
    arrays, each example's numbers in order."""
    ordered = py_sorted(jnp.stack(jnp.broadcast_arrays(*values), axis=-1), reverse)
    return [ordered[..., k] for k in range(len(values))]


from autobatch_runtime.python_errors import array_ops, helpers as _python_error_helpers  # noqa: E402
from autobatch_runtime.ragged import array_helpers as _ragged_helpers  # noqa: E402

globals().update(_ragged_helpers(jnp))  # ragged_*: vectors of per-example length


# python_error, py_bound, py_divisor, py_power: where Python raises (python_errors.py)
globals().update(_python_error_helpers(array_ops(jnp, py_math)))
