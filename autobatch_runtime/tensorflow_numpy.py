"""NumPy's elementwise functions with TensorFlow ops: `rt.tf_numpy.exp(v)`.

Public code writes `np.exp(v - v.max())`, `np.where(d > 0, d, 0.0)`,
`np.maximum(a, b)`.  In a TensorFlow program those NumPy functions meet
symbolic tensors and fail, so the compiler calls these twins instead
(transpiler/passes/numpy_on_backends.py), in the TensorFlow program only.

Each function gives NumPy's dtype: NumPy itself is asked what it would
return for operands of the same dtypes (Python numbers stay Python numbers,
so NumPy's promotion of a weak scalar applies: `np.maximum(k, 0.5)` of an
int32 `k` is float64), and the TensorFlow op computes in that dtype.  And
NumPy's values where TensorFlow's differ: `maximum` and `minimum` of a NaN
are NaN, `fmax` and `fmin` ignore it, an int divided by zero (`//`, `%`)
is 0, `abs` of a bool is the bool.  Only functions whose TensorFlow op
computes what NumPy's does are here (no `log2`, whose NumPy value is exact
on powers of two); the others stay refused on the TensorFlow backend.
Shapes: any, broadcast as NumPy broadcasts; the batch axis comes first.
"""

import numpy as np
import tensorflow as tf


def _numpy_dtype(name, operands):
    """The dtype NumPy's `name` returns for operands of these dtypes."""
    samples = [
        o if isinstance(o, (bool, int, float)) else np.ones((), np.dtype(_dtype_of(o)))
        for o in operands
    ]
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, name)(*samples)).dtype


def _dtype_of(operand):
    dtype = operand.dtype
    return getattr(dtype, "as_numpy_dtype", dtype)


def _as(operand, dtype):
    """`operand` as a tensor of NumPy dtype `dtype`."""
    if isinstance(operand, (tf.Tensor, tf.Variable)):
        return operand if operand.dtype == dtype else tf.cast(operand, dtype)
    return tf.constant(np.asarray(operand).astype(dtype))


# NumPy's arithmetic of bools is logic (`True + True` is True)
_ON_BOOLS = {
    "add": tf.logical_or,
    "maximum": tf.logical_or,
    "minimum": tf.logical_and,
    "fmax": tf.logical_or,
    "fmin": tf.logical_and,
}


def _computed_in_result(name, op):
    """`name(*operands)`: the operands cast to NumPy's result dtype, then `op`."""

    def function(*operands):
        dtype = _numpy_dtype(name, operands)
        if dtype == np.bool_ and name in _ON_BOOLS:
            op_here = _ON_BOOLS[name]
        else:
            op_here = op
        return op_here(*[_as(o, dtype) for o in operands])

    function.__name__ = name
    function.__doc__ = f"NumPy's `{name}` of tensors (tensorflow_numpy.py)."
    return function


_FLOAT_FUNCTIONS = {
    "sqrt": tf.sqrt,
    "exp": tf.exp,
    "log": tf.math.log,
    "log1p": tf.math.log1p,
    "expm1": tf.math.expm1,
    "sin": tf.sin,
    "cos": tf.cos,
    "tan": tf.tan,
    "arcsin": tf.asin,
    "arccos": tf.acos,
    "arctan": tf.atan,
    "sinh": tf.sinh,
    "cosh": tf.cosh,
    "tanh": tf.tanh,
    "arcsinh": tf.asinh,
    "arccosh": tf.acosh,
    "arctanh": tf.atanh,
    "arctan2": tf.atan2,
    "add": tf.add,
    "subtract": tf.subtract,
}
globals().update({name: _computed_in_result(name, op) for name, op in _FLOAT_FUNCTIONS.items()})


def multiply(a, b):
    """NumPy's `multiply`; a bool factor is 1 or 0 of the other's dtype, and
    `nan * False` stays NaN (XLA would rewrite a product by a converted bool
    into a select that gives 0)."""
    dtype = _numpy_dtype("multiply", (a, b))
    if dtype == np.bool_:
        return tf.logical_and(_as(a, dtype), _as(b, dtype))
    for flag, other in ((a, b), (b, a)):
        if _is_bool_tensor(flag) and not _is_bool_tensor(other):
            other = _as(other, dtype)
            return tf.where(flag, other, other * tf.constant(0, dtype))
    return tf.multiply(_as(a, dtype), _as(b, dtype))


def true_divide(a, b):
    """NumPy's `true_divide` (`divide`): in float; a bool operand is 1 or 0,
    divided as such (`x / False` is inf or NaN: XLA would rewrite a division
    by a converted bool into a select)."""
    dtype = _numpy_dtype("true_divide", (a, b))
    if _is_bool_tensor(a) and _is_bool_tensor(b):  # 1/1, 0/1, 1/0 (inf), 0/0 (NaN)
        by_zero = tf.where(a, tf.constant(np.inf, dtype), tf.constant(np.nan, dtype))
        return tf.where(b, tf.cast(a, dtype), by_zero)
    if _is_bool_tensor(b):
        a = _as(a, dtype)
        return tf.where(b, a, a / tf.constant(0, dtype))
    b = _as(b, dtype)
    if _is_bool_tensor(a):
        return tf.where(a, 1 / b, 0 / b)
    return _as(a, dtype) / b


divide = true_divide


def _is_bool_tensor(operand):
    return isinstance(operand, (tf.Tensor, tf.Variable, np.ndarray)) and _dtype_of(operand) == np.bool_


def _same_for_ints(op):
    """Rounding and sign of floats; an int (or bool) is its own value."""
    return lambda x: op(x) if x.dtype.is_floating else x


def _abs(x):
    return x if x.dtype == tf.bool else tf.abs(x)


def _square(x):
    return tf.logical_and(x, x) if x.dtype == tf.bool else x * x


def _sign(x):
    if x.dtype == tf.bool:
        raise TypeError("numpy's sign of a bool is not supported")
    return tf.sign(x)


def _negative(x):
    if x.dtype == tf.bool:
        raise TypeError("numpy boolean negative, the `-` operator, is not supported")
    return -x


for _name, _op in {
    "abs": _abs,
    "absolute": _abs,
    "negative": _negative,
    "square": _square,
    "sign": _sign,
    "floor": _same_for_ints(tf.floor),
    "ceil": _same_for_ints(tf.math.ceil),
    "trunc": _same_for_ints(lambda x: tf.where(x < 0, tf.math.ceil(x), tf.floor(x))),
    "rint": _same_for_ints(tf.round),  # half to even, as NumPy
}.items():
    globals()[_name] = _computed_in_result(_name, _op)


def round(a, decimals=0):  # noqa: A001 - NumPy's name
    """NumPy's `round(a, decimals)`: half to even, as NumPy computes it
    (`rint(a * 10**d) / 10**d`, or `rint(a / 10**-d) * 10**-d` for d < 0);
    an int with d >= 0 is itself."""
    dtype = _numpy_dtype("round", (a,))  # a bool rounds to float16, as NumPy's
    a = _as(a, dtype)
    if not a.dtype.is_floating:
        if decimals >= 0:
            return a
        raise TypeError("round of ints to a negative number of decimals is not supported here")
    if decimals == 0:
        return tf.round(a)
    if decimals > 0:
        scale = tf.constant(10.0**decimals, a.dtype)
        return tf.round(a * scale) / scale
    scale = tf.constant(10.0 ** (-decimals), a.dtype)
    return tf.round(a / scale) * scale


around = round


def _nan_aware(pick, keep_nan):
    """`maximum`/`minimum` (a NaN wins) or `fmax`/`fmin` (a NaN loses)."""

    def op(a, b):
        chosen = pick(a, b)
        if not a.dtype.is_floating:
            return chosen
        if keep_nan:
            return tf.where(tf.math.is_nan(a), a, tf.where(tf.math.is_nan(b), b, chosen))
        return tf.where(tf.math.is_nan(a), b, tf.where(tf.math.is_nan(b), a, chosen))

    return op


def _divmod_of_floats(a, b):
    """NumPy's floor division and modulo of floats (its `npy_divmod`): from
    C's fmod, so that inf, NaN, zeros and signs come out as NumPy's."""
    mod = tf.truncatemod(a, b)  # C's fmod
    div = (a - mod) / b
    wrong_side = tf.not_equal(mod, 0) & tf.not_equal(b < 0, mod < 0)
    mod = tf.where(
        wrong_side, mod + b, tf.where(tf.equal(mod, 0), _copysign(tf.zeros_like(mod), b), mod)
    )
    div = tf.where(wrong_side, div - 1, div)
    floor = tf.floor(div)
    floor = tf.where(div - floor > 0.5, floor + 1, floor)
    floor = tf.where(tf.equal(div, 0), _copysign(tf.zeros_like(div), a / b), floor)
    zero = tf.equal(b, 0)
    return tf.where(zero, a / b, floor), tf.where(zero, mod, mod)


def _copysign(magnitude, sign):
    negative = tf.math.sign(sign) < 0
    negative = negative | (tf.equal(sign, 0) & (1 / sign < 0))  # -0.0
    return tf.where(negative, -tf.abs(magnitude), tf.abs(magnitude))


def _divmod(which):
    """`//` (`which` 0) or `%` (1): NumPy's for floats; of ints, 0 where the
    divisor is 0 (NumPy's value, with a warning)."""
    op = tf.math.floordiv if which == 0 else tf.math.floormod

    def divided(a, b):
        if a.dtype.is_floating:
            return _divmod_of_floats(a, b)[which]
        zero = tf.equal(b, 0)
        return tf.where(zero, tf.zeros_like(a + b), op(a, tf.where(zero, tf.ones_like(b), b)))

    return divided


for _name, _op in {
    "maximum": _nan_aware(tf.maximum, keep_nan=True),
    "minimum": _nan_aware(tf.minimum, keep_nan=True),
    "fmax": _nan_aware(tf.maximum, keep_nan=False),
    "fmin": _nan_aware(tf.minimum, keep_nan=False),
    "floor_divide": _divmod(0),
    "mod": _divmod(1),
    "remainder": _divmod(1),
}.items():
    globals()[_name] = _computed_in_result(_name, _op)


def _predicate(name, on_floats, on_others):
    def function(x):
        x = _as(x, _dtype_of(x)) if not isinstance(x, (bool, int, float)) else tf.constant(x)
        if x.dtype.is_floating:
            return on_floats(x)
        return tf.fill(tf.shape(x), on_others)

    function.__name__ = name
    function.__doc__ = f"NumPy's `{name}` of a tensor (tensorflow_numpy.py)."
    return function


isnan = _predicate("isnan", tf.math.is_nan, False)
isinf = _predicate("isinf", tf.math.is_inf, False)
isfinite = _predicate("isfinite", tf.math.is_finite, True)


def _logical(op):
    return lambda *operands: op(*[tf.cast(o, tf.bool) for o in operands])


logical_and = _logical(tf.logical_and)
logical_or = _logical(tf.logical_or)
logical_xor = _logical(tf.math.logical_xor)
logical_not = _logical(tf.logical_not)


def where(condition, x, y):
    """NumPy's `where(c, x, y)`: x where c holds, else y, in their common dtype."""
    dtype = _numpy_dtype("where", (True, x, y))
    return tf.where(tf.cast(condition, tf.bool), _as(x, dtype), _as(y, dtype))


def clip(a, a_min, a_max):
    """NumPy's `clip`: `minimum(maximum(a, a_min), a_max)` (a NaN stays NaN)."""
    return minimum(maximum(a, a_min), a_max)


def zeros_like(a):
    return tf.zeros_like(_as(a, _dtype_of(a)))


def ones_like(a):
    return tf.ones_like(_as(a, _dtype_of(a)))


def full_like(a, fill_value):
    """NumPy's `full_like(a, v)`: a's shape and dtype (v cut to an int dtype)."""
    a = _as(a, _dtype_of(a))
    return tf.fill(tf.shape(a), tf.cast(fill_value, a.dtype))
