"""Python's builtins and `math` functions, per example, for TensorFlow programs.

The twin of builtins_numpy.py (read its docstring): the same names with the
same meaning, written with TensorFlow ops that XLA compiles (no host calls,
loops as `tf.while_loop`).
"""

import functools

import numpy as np
import tensorflow as tf

from autobatch_runtime.common import PYTHON_HELPERS, join_batch
from autobatch_runtime.array_joins import JoinOps, joining
from autobatch_runtime.array_methods import (
    ACCUMULATING,
    ARRANGING,
    FLATTENING,
    RUNNING,
    accumulator,
    arranging_axes,
    batch_axis,
    matrix_product,
)

__all__ = list(PYTHON_HELPERS)  # what the backend re-exports

INT = tf.int64
FLOAT = tf.float64
_EPSILON = float(np.finfo(np.float64).eps)


def _tensors(*args):
    """The arguments as tensors of one dtype, as Python would compare or
    combine the numbers: any float makes them floats (the widest float
    tensor's dtype, float64 for a Python float), else the widest int."""
    tensors = [a for a in args if isinstance(a, (tf.Tensor, tf.Variable, np.ndarray))]
    dtypes = [tf.as_dtype(t.dtype) for t in tensors]
    floats = [d for d in dtypes if d.is_floating]
    if floats:
        dtype = max(floats, key=lambda d: d.size)
    elif any(isinstance(a, float) for a in args):
        dtype = FLOAT
    elif dtypes and any(d.is_integer for d in dtypes):
        dtype = max((d for d in dtypes if d.is_integer), key=lambda d: d.size)
    elif dtypes:
        dtype = dtypes[0]
    else:
        dtype = tf.as_dtype(np.asarray(args[0]).dtype)
    return [tf.cast(a, dtype) if isinstance(a, (tf.Tensor, tf.Variable)) else tf.constant(a, dtype) for a in args]


def py_min(*args):
    """`min(a, b, ...)`: the first kept unless a later one is smaller."""
    args = _tensors(*args)
    result = args[0]
    for other in args[1:]:
        result = tf.where(other < result, other, result)
    return result


def py_max(*args):
    """`max(a, b, ...)`: the first kept unless a later one is larger."""
    args = _tensors(*args)
    result = args[0]
    for other in args[1:]:
        result = tf.where(other > result, other, result)
    return result


def py_min_of(values):
    """`min(v)` of a per-example vector: [batch, n] -> [batch] (NaN as Python)."""
    values = tf.convert_to_tensor(values)
    if not values.dtype.is_floating:
        return tf.reduce_min(values, axis=-1)
    smallest = tf.reduce_min(tf.where(tf.math.is_nan(values), tf.constant(np.inf, values.dtype), values), axis=-1)
    first = values[..., 0]
    return tf.where(tf.math.is_nan(first), first, tf.minimum(first, smallest))


def py_max_of(values):
    """`max(v)` of a per-example vector: [batch, n] -> [batch] (NaN as Python)."""
    values = tf.convert_to_tensor(values)
    if not values.dtype.is_floating:
        return tf.reduce_max(values, axis=-1)
    largest = tf.reduce_max(tf.where(tf.math.is_nan(values), tf.constant(-np.inf, values.dtype), values), axis=-1)
    first = values[..., 0]
    return tf.where(tf.math.is_nan(first), first, tf.maximum(first, largest))


def py_sum(values, start=0):
    """`sum(v, start)` along v's first per-example axis: [batch, n, *rest] -> [batch, *rest]."""
    values = tf.convert_to_tensor(values)
    if values.dtype == tf.bool:
        values = tf.cast(values, INT)
    total = tf.reduce_sum(values, axis=1)
    if isinstance(start, (int, float)) and start == 0:
        return total
    total, start = _tensors(total, start)
    return start + total


def py_all(values):
    """`all(v)`: [batch, n] -> [batch] bool."""
    return tf.reduce_all(tf.cast(values, tf.bool), axis=-1)


def py_any(values):
    """`any(v)`: [batch, n] -> [batch] bool."""
    return tf.reduce_any(tf.cast(values, tf.bool), axis=-1)


def py_sorted(values, reverse=False):
    """`sorted(v)`: each example's elements in order."""
    return tf.sort(values, axis=-1, direction="DESCENDING" if reverse else "ASCENDING")


def py_contains(container, item):
    """`item in container` of a per-example array: [batch, *event], [batch] -> [batch] bool."""
    container = tf.convert_to_tensor(container)
    extra = len(container.shape) - 1
    container, item = _tensors(container, item)
    if len(item.shape):
        item = tf.reshape(item, tf.concat([tf.shape(item), tf.ones([extra], tf.int32)], 0))
    return tf.reduce_any(tf.equal(container, item), axis=list(range(1, extra + 1)))


def py_contains_constant(table, item):
    """`item in TABLE` of a constant table [*event]: [batch] -> [batch] bool."""
    table = np.asarray(table)
    item = tf.convert_to_tensor(item)
    table = tf.constant(table, item.dtype if table.dtype.kind == np.dtype(item.dtype.as_numpy_dtype).kind else None)
    table, item = _tensors(table, item)
    expanded = tf.reshape(item, tf.concat([tf.shape(item), tf.ones([len(table.shape)], tf.int32)], 0))
    return tf.reduce_any(tf.equal(table, expanded), axis=list(range(1, len(table.shape) + 1)))


def py_int(value):
    """`int(x)`: floats truncate toward zero, bools become 0 and 1."""
    value = tf.convert_to_tensor(value)
    return value if value.dtype.is_integer else tf.cast(value, INT)


def py_float(value):
    """`float(x)`: a Python float is float64."""
    return tf.cast(value, FLOAT)


def py_bool(value):
    """`bool(x)` of a per-example number."""
    value = tf.convert_to_tensor(value)
    return value if value.dtype == tf.bool else tf.not_equal(value, tf.zeros([], value.dtype))


def py_round(value):
    """`round(x)`: the nearest integer, halves to even, as an int."""
    value = tf.convert_to_tensor(value)
    if value.dtype.is_integer:
        return value
    if value.dtype == tf.bool:
        return tf.cast(value, INT)
    return tf.cast(tf.math.rint(value), INT)


def py_round_digits(value, digits):
    """`round(x, n)`: halves to even at n decimals; ints stay ints."""
    value = tf.convert_to_tensor(value)
    if value.dtype.is_integer and digits >= 0:
        return value
    scale = tf.constant(10.0**digits, FLOAT)
    rounded = tf.math.rint(tf.cast(value, FLOAT) * scale) / scale
    return tf.cast(rounded, value.dtype)


def py_powmod(base, exponent, modulus):
    """`pow(b, e, m)` by squaring (e >= 0); m below 2**31 is exact."""
    base, exponent, modulus = (tf.cast(v, INT) for v in (base, exponent, modulus))
    shape = tf.broadcast_dynamic_shape(tf.broadcast_dynamic_shape(tf.shape(base), tf.shape(exponent)), tf.shape(modulus))
    base, exponent, modulus = (tf.broadcast_to(v, shape) for v in (base, exponent, modulus))
    safe = tf.where(modulus == 0, tf.ones_like(modulus), modulus)
    result = tf.math.floormod(tf.ones_like(base), safe)
    base = tf.math.floormod(base, safe)
    exponent = tf.maximum(exponent, 0)

    def step(i, result, base, exponent):
        odd = tf.bitwise.bitwise_and(exponent, 1) == 1
        result = tf.where(odd, tf.math.floormod(result * base, safe), result)
        return i + 1, result, tf.math.floormod(base * base, safe), tf.bitwise.right_shift(exponent, 1)

    _, result, _, _ = tf.while_loop(lambda i, *_: i < 63, step, (tf.constant(0), result, base, exponent))
    return result


def py_decimal_length(value):
    """`len(str(n))` of an int (a minus sign counts) or a bool."""
    value = tf.convert_to_tensor(value)
    if value.dtype == tf.bool:
        return tf.where(value, tf.constant(4, INT), tf.constant(5, INT))
    value = tf.cast(value, INT)
    magnitude = tf.abs(value)
    digits = tf.ones_like(value)
    for power in range(1, 19):
        digits += tf.cast(magnitude >= 10**power, INT)
    return digits + tf.cast(value < 0, INT)


def py_popcount(value):
    """`bin(n).count("1")`: the number of one bits of |n|."""
    magnitude = tf.abs(tf.cast(value, INT))
    return tf.cast(tf.raw_ops.PopulationCount(x=magnitude), INT)


def py_isqrt(value):
    """`math.isqrt(n)`: the floor of the exact square root (n >= 0)."""
    value = tf.maximum(tf.cast(value, INT), 0)
    root = tf.cast(tf.floor(tf.sqrt(tf.cast(value, FLOAT))), INT)
    for _ in range(2):  # float rounding can be one off either way
        # root * root > value, without the square (it overflows near 2**63)
        root = tf.where(root > value // tf.maximum(root, 1), root - 1, root)
        root = tf.where(root + 1 <= value // (root + 1), root + 1, root)
    return root


def py_gcd(a, b):
    """`math.gcd(a, b)`: Euclid on magnitudes, every example at once."""
    a, b = tf.abs(tf.cast(a, INT)), tf.abs(tf.cast(b, INT))
    shape = tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b))
    a, b = tf.broadcast_to(a, shape), tf.broadcast_to(b, shape)

    def step(a, b):
        nonzero = b != 0
        remainder = tf.math.floormod(a, tf.where(nonzero, b, tf.ones_like(b)))
        return tf.where(nonzero, b, a), tf.where(nonzero, remainder, tf.zeros_like(b))

    a, _ = tf.while_loop(lambda a, b: tf.reduce_any(b != 0), step, (a, b))
    return a


def py_lcm(a, b):
    """`math.lcm(a, b)`; 0 when either is 0."""
    a, b = tf.cast(a, INT), tf.cast(b, INT)
    divisor = py_gcd(a, b)
    safe = tf.where(divisor == 0, tf.ones_like(divisor), divisor)
    return tf.where(divisor == 0, tf.zeros_like(divisor), tf.abs(a // safe * b))


def py_floor(value):
    """`math.floor(x)`: an int."""
    value = tf.convert_to_tensor(value)
    return value if value.dtype.is_integer else tf.cast(tf.floor(tf.cast(value, FLOAT)), INT)


def py_ceil(value):
    """`math.ceil(x)`: an int."""
    value = tf.convert_to_tensor(value)
    return value if value.dtype.is_integer else tf.cast(tf.math.ceil(tf.cast(value, FLOAT)), INT)


def _snap(result, power_of):
    """A logarithm computed as log(x) / log(b), put on the integer it is
    within a few ulps of: Python's log2 and log10 are exact at powers."""
    nearest = tf.round(result)
    close = tf.abs(result - nearest) <= 8 * _EPSILON * tf.maximum(tf.abs(nearest), 1.0)
    return tf.where(close, nearest, result)


def py_log(value, base=None):
    """`math.log(x[, base])`."""
    result = tf.math.log(tf.cast(value, FLOAT))
    if base is not None:
        result = result / tf.math.log(tf.cast(base, FLOAT))
    return result


def _float_function(function):
    def apply(*args):
        return function(*(tf.cast(a, FLOAT) for a in args))

    return apply


def _copysign(x, y):
    negative = tf.logical_or(y < 0, tf.logical_and(tf.equal(y, 0.0), tf.math.reciprocal(y) < 0))
    return tf.where(negative, -tf.abs(x), tf.abs(x))


def _constant_test(result):
    def apply(value):
        value = tf.convert_to_tensor(value)
        if value.dtype.is_floating:
            return result(value)
        return tf.zeros_like(value, tf.bool) if result is not tf.math.is_finite else tf.ones_like(value, tf.bool)

    return apply


def _hypot(*sides):
    """`math.hypot(*sides)`: scaled by the largest, so squares never overflow."""
    if not sides:
        return tf.constant(0.0, FLOAT)
    magnitudes = [tf.abs(side) for side in sides]
    largest = functools.reduce(tf.maximum, magnitudes)
    scale = tf.where((largest > 0) & ~tf.math.is_inf(largest), largest, tf.ones_like(largest))
    total = tf.sqrt(sum((m / scale) ** 2 for m in magnitudes)) * scale
    return tf.where(tf.math.is_inf(largest), largest, total)


MATH = {
    "sqrt": _float_function(tf.sqrt),
    "exp": _float_function(tf.exp),
    "expm1": _float_function(tf.math.expm1),
    "log1p": _float_function(tf.math.log1p),
    "log2": _float_function(lambda x: _snap(tf.math.log(x) / np.log(2.0), 2)),
    "log10": _float_function(lambda x: _snap(tf.math.log(x) / np.log(10.0), 10)),
    "sin": _float_function(tf.sin),
    "cos": _float_function(tf.cos),
    "tan": _float_function(tf.tan),
    "asin": _float_function(tf.asin),
    "acos": _float_function(tf.acos),
    "atan": _float_function(tf.atan),
    "sinh": _float_function(tf.sinh),
    "cosh": _float_function(tf.cosh),
    "tanh": _float_function(tf.tanh),
    "asinh": _float_function(tf.asinh),
    "acosh": _float_function(tf.acosh),
    "atanh": _float_function(tf.atanh),
    "fabs": _float_function(tf.abs),
    "degrees": _float_function(lambda x: x * (180.0 / np.pi)),
    "radians": _float_function(lambda x: x * (np.pi / 180.0)),
    "atan2": _float_function(tf.atan2),
    "hypot": _float_function(_hypot),
    "copysign": _float_function(_copysign),
    "fmod": _float_function(tf.truncatemod),
    "pow": _float_function(tf.pow),
    "log": py_log,
    "floor": py_floor,
    "ceil": py_ceil,
    "trunc": py_int,
    "isqrt": py_isqrt,
    "gcd": py_gcd,
    "lcm": py_lcm,
    "isnan": _constant_test(tf.math.is_nan),
    "isinf": _constant_test(tf.math.is_inf),
    "isfinite": _constant_test(tf.math.is_finite),
}


def py_math(name, *args):
    """`math.<name>(*args)` per example (see MATH)."""
    return MATH[name](*args)


def py_list_equal(a, b):
    """`list_a == list_b` per example (builtins_numpy.py): one bool."""
    a, b = _tensors(a, b)
    if a.shape[-1:] != b.shape[-1:]:
        shape = tf.broadcast_static_shape(a.shape[:-1], b.shape[:-1])
        return tf.zeros(shape, tf.bool)
    return tf.reduce_all(tf.equal(a, b), axis=-1)


def py_list_index(items, x):
    """`items.index(x)` per example (builtins_numpy.py): -1 where absent."""
    items, x = _tensors(items, x)
    found = tf.equal(items, tf.expand_dims(x, -1))
    first = tf.argmax(tf.cast(found, tf.int32), axis=-1, output_type=tf.int64)
    return tf.where(tf.reduce_any(found, axis=-1), first, tf.constant(-1, tf.int64))


def py_list_count(items, x):
    """`items.count(x)` per example (builtins_numpy.py)."""
    items, x = _tensors(items, x)
    return tf.reduce_sum(tf.cast(tf.equal(items, tf.expand_dims(x, -1)), tf.int64), axis=-1)


def py_array_method(method, values, axis=None, shift=None):
    """`v.sum()`, `v.max(axis=0)`, `m.argmax()`, `v.cumsum()`, `np.sort(m,
    axis=0)` per example (array_methods.py)."""
    values = tf.convert_to_tensor(values)
    if method in ARRANGING:
        return _arranged(values, method, axis, shift)
    if method in FLATTENING or (axis is None and method in RUNNING + ("argmax", "argmin")):
        size = values.shape[1:].num_elements()  # static where the example's shape is
        values = tf.reshape(values, [-1, size] if size is not None else [tf.shape(values)[0], -1])
        if method in FLATTENING:
            return values
        axis = 0
    if method in ("argmax", "argmin"):
        found = getattr(tf.math, method)(values, axis=batch_axis(axis), output_type=INT)
        if not values.dtype.is_floating:
            return found
        # NumPy's: the first NaN where the example holds one (TF's is unspecified)
        nan = tf.math.is_nan(values)
        first_nan = tf.math.argmax(tf.cast(nan, tf.int8), axis=batch_axis(axis), output_type=INT)
        return tf.where(tf.reduce_any(nan, axis=batch_axis(axis)), first_nan, found)
    if method in ACCUMULATING:
        values = tf.cast(values, accumulator(values.dtype.as_numpy_dtype))
    if method in RUNNING:
        return getattr(tf.math, method)(values, axis=batch_axis(axis))
    axes = list(range(1, values.shape.rank)) if axis is None else batch_axis(axis)
    if method == "norm":  # NumPy's 2-norm (Frobenius for a matrix), float64 for ints
        if not (values.dtype.is_floating or values.dtype.is_complex):
            values = tf.cast(values, FLOAT)
        squares = tf.math.real(values * tf.math.conj(values)) if values.dtype.is_complex else values * values
        return tf.sqrt(tf.reduce_sum(squares, axis=axes))
    if values.dtype == tf.bool and method in ("max", "min"):
        method = "any" if method == "max" else "all"  # NumPy's max of bools is a bool
    if method in ("any", "all"):
        values = tf.cast(values, tf.bool)
    elif method == "mean" and (values.dtype == tf.bool or values.dtype.is_integer):
        values = tf.cast(values, FLOAT)
    if method == "mean":  # NumPy's: the sum divided by the count (XLA's mean multiplies)
        count = tf.reduce_prod(tf.shape(values)[1:]) if axis is None else tf.shape(values)[axes]
        return tf.reduce_sum(values, axis=axes) / tf.cast(count, values.dtype)
    result = getattr(tf, "reduce_" + method)(values, axis=axes)
    if method in ("max", "min") and values.dtype.is_floating:
        # NumPy's max and min are NaN where the example holds one
        nan = tf.reduce_any(tf.math.is_nan(values), axis=axes)
        result = tf.where(nan, tf.constant(np.nan, values.dtype), result)
    return result


def _matmul(a, b):
    """TensorFlow's batched matmul, with NumPy's product of bools (true
    where some pair of elements is: TF multiplies numbers only)."""
    if a.dtype == tf.bool:
        product = tf.linalg.matmul(tf.cast(a, tf.int32), tf.cast(b, tf.int32))
        return product > 0
    return tf.linalg.matmul(a, b)


py_matmul = matrix_product(_tensors, _matmul)  # `a @ b` per example (array_methods.py)
py_join = joining(  # `np.concatenate([a, b])` per example (array_joins.py)
    JoinOps(
        asarray=lambda x: x if isinstance(x, (tf.Tensor, tf.Variable)) else tf.constant(np.asarray(x)),
        cast=lambda a, dtype: a if a.dtype == tf.as_dtype(dtype) else tf.cast(a, dtype),
        concatenate=lambda tensors, axis: tf.concat(tensors, axis),
        stack=lambda tensors, axis: tf.stack(tensors, axis),
        reshape=tf.reshape,
        broadcast_to=lambda a, shape: tf.broadcast_to(a, tf.stack([tf.cast(d, tf.int32) for d in shape])),
        batch_size=lambda a: tf.shape(a)[0],
    )
)


def _arranged(values, method, axis, shift):
    """`transpose`, `flip`, `sort` or `roll` of each example (array_methods.py)."""
    rank = values.shape.rank
    axes = arranging_axes(method, rank, axis)
    if method == "transpose":
        return tf.transpose(values, axes)
    if method == "flip":
        return tf.reverse(values, axes if isinstance(axes, list) else [axes])
    if method == "sort":
        return _sorted(values, axes % rank)
    if axes is None:  # np.roll without an axis rolls the flattened array
        flat = tf.reshape(values, [tf.shape(values)[0], -1])
        return tf.reshape(tf.roll(flat, shift, axis=1), tf.shape(values))
    return tf.roll(values, shift, axis=axes % rank)


def _sorted(values, axis):
    """NumPy's sort along `axis`: bools too, and NaNs last (after inf)."""
    take = tf.experimental.numpy.take_along_axis
    if values.dtype == tf.bool:
        return tf.cast(tf.sort(tf.cast(values, tf.int8), axis=axis), tf.bool)
    if not values.dtype.is_floating:
        return tf.sort(values, axis=axis)
    nan = tf.math.is_nan(values)
    by_value = tf.argsort(tf.where(nan, tf.constant(np.inf, values.dtype), values), axis=axis, stable=True)
    values, nan = take(values, by_value, axis), take(tf.cast(nan, tf.int8), by_value, axis)
    return take(values, tf.argsort(nan, axis=axis, stable=True), axis)


def py_list_join(parts, kinds):
    """`a + b` of two lists per example (builtins_numpy.py)."""
    batch = join_batch(parts, kinds, lambda x: len(getattr(x, "shape", ())), lambda x: tf.shape(x)[0])
    arrays = []
    for part, kind in zip(parts, kinds):
        if kind == "items":
            if not part:
                continue
            items = [tf.convert_to_tensor(np.asarray(x)) if not tf.is_tensor(x) else x for x in part]
            dtype = np.result_type(*[t.dtype.as_numpy_dtype for t in items])
            lead = [] if batch is None else [batch]
            arrays.append(tf.stack([tf.broadcast_to(tf.cast(t, dtype), lead) for t in items], axis=-1))
        elif kind == "batched" or batch is None:
            arrays.append(tf.convert_to_tensor(part))
        else:
            constant = part if tf.is_tensor(part) else tf.convert_to_tensor(np.asarray(part))
            arrays.append(tf.broadcast_to(constant, tf.concat([[batch], tf.shape(constant)], 0)))
    dtype = np.result_type(*[a.dtype.as_numpy_dtype for a in arrays])
    return tf.concat([tf.cast(a, dtype) for a in arrays], axis=0 if batch is None else 1)


def py_times_flag(x, flag):
    """`x * flag` of a float and a bool (builtins_numpy.py): XLA would make
    the product by a converted bool a select that gives 0 for `nan * False`."""
    x = tf.convert_to_tensor(x)
    return tf.where(tf.cast(flag, tf.bool), x, x * tf.constant(0, x.dtype))


def py_not(value):
    """`not` of a per-example truth value (for `not in`)."""
    return tf.logical_not(tf.cast(value, tf.bool))


def py_some(value):
    """A per-example value as an `Optional` that holds it in every example:
    value [batch, *event] -> Optional([batch] True, value)."""
    from autobatch_runtime.optional import Optional

    value = tf.convert_to_tensor(value)
    return Optional(tf.ones(tf.shape(value)[:1], tf.bool), value)


def py_none(dtype, shape):
    """`None` as an `Optional` of a per-example dtype and shape, without the
    batch axis (the block's `spread` gives it one)."""
    from autobatch_runtime.optional import Optional

    return Optional(tf.constant(False), tf.zeros(shape, dtype))


def py_lshift(a, b):
    """`a << b` of ints per example (int64 wraps where Python's ints grow:
    a shift by the width or more gives 0, as NumPy's).  A negative count,
    where Python raises (only junk has one), shifts by 0: TensorFlow leaves
    counts outside [0, width) to the machine."""
    a, b = _tensors(a, b)
    bits = a.dtype.size * 8
    shifted = tf.bitwise.left_shift(a, tf.clip_by_value(b, 0, bits - 1))
    return tf.where(b >= bits, tf.zeros_like(shifted), shifted)


def py_rshift(a, b):
    """`a >> b` of ints per example: an arithmetic shift, as Python's (a
    shift by the width or more gives 0 or -1)."""
    a, b = _tensors(a, b)
    return tf.bitwise.right_shift(a, tf.clip_by_value(b, 0, a.dtype.size * 8 - 1))


def py_sorted_elements(values, reverse=False):
    """`sorted((a, b, c))` of per-example numbers: a list of as many [batch]
    arrays, each example's numbers in order."""
    values = _tensors(*values)
    ordered = py_sorted(tf.stack(values, axis=-1), reverse)
    return [ordered[..., k] for k in range(len(values))]


from autobatch_runtime.python_errors import ArrayOps, helpers as _python_error_helpers  # noqa: E402
from autobatch_runtime.ragged import tensorflow_helpers as _ragged_helpers  # noqa: E402

globals().update(_ragged_helpers(py_sum))  # ragged_*: vectors of per-example length


def _tensor(value):
    """A tensor of `value`: a Python number as Python's int64 or float64."""
    if isinstance(value, bool):
        return tf.constant(value)
    if isinstance(value, int):
        return tf.constant(value, INT)
    if isinstance(value, float):
        return tf.constant(value, FLOAT)
    return tf.convert_to_tensor(value)


globals().update(  # python_error, py_divisor, py_power: where Python raises (python_errors.py)
    _python_error_helpers(
        ArrayOps(
            asarray=_tensor,
            as_float=lambda a: tf.cast(a, FLOAT),
            is_float=lambda a: a.dtype.is_floating,
            isnan=tf.math.is_nan,
            isfinite=tf.math.is_finite,
            floor=tf.math.floor,
            where=tf.where,
            ones_like=tf.ones_like,
            power=tf.pow,
            math=py_math,
        )
    )
)
