"""autobatch_runtime/tensorflow_numpy.py: NumPy's elementwise functions with
TensorFlow ops give NumPy's dtype and values, in a graph and under XLA, for
every dtype pairing, Python numbers, NaN, infinities and zeros."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from autobatch_runtime import tensorflow_numpy as T

VALUES = {
    "float64": np.array([-2.5, 0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, -0.5, 2.5, 7.0]),
    "float32": np.array([-2.5, 0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, -0.5, 2.5, 7.0], np.float32),
    "int64": np.array([-3, 0, 2, 7, -8, 1, 5, -1, 4, 9]),
    "int32": np.array([-3, 0, 2, 7, -8, 1, 5, -1, 4, 9], np.int32),
    "bool": np.array([True, False, True, False, True, True, False, False, True, True]),
}
UNARY = (
    "sqrt exp log log1p expm1 sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh "
    "arctanh abs absolute negative square sign floor ceil trunc rint round isnan isinf isfinite "
    "logical_not zeros_like ones_like"
).split()
BINARY = (
    "arctan2 true_divide divide add subtract multiply maximum minimum fmax fmin floor_divide mod "
    "remainder logical_and logical_or logical_xor"
).split()
SCALARS = (2, 0, 0.5, -1.5, True)


def _numpy(name, *operands):
    with np.errstate(all="ignore"):
        try:
            return np.asarray(getattr(np, name)(*operands))
        except (TypeError, ValueError) as error:  # NumPy refuses: so must the twin
            return type(error)


def _agree(want, run):
    if isinstance(want, type):
        with pytest.raises(Exception):
            run()
        return
    got = run().numpy()
    assert got.dtype == want.dtype
    # values as Python compares them: NaN is NaN, -0.0 equals 0.0 (TensorFlow's
    # graph optimizer and XLA fold `x + 0.0` and do not keep a zero's sign)
    tolerance = 1e-6 if want.dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got.astype(float), want.astype(float), rtol=tolerance, atol=0)


@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_are_numpys(name, xla):
    for values in VALUES.values():
        run = tf.function(lambda x: getattr(T, name)(x), jit_compile=xla)
        _agree(_numpy(name, values), lambda: run(tf.constant(values)))


@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_are_numpys(name, xla):
    for (_, a), (_, b) in itertools.product(VALUES.items(), repeat=2):
        run = tf.function(lambda x, y: getattr(T, name)(x, y), jit_compile=xla)
        _agree(_numpy(name, a, b), lambda: run(tf.constant(a), tf.constant(b)))
    for (_, a), scalar in itertools.product(VALUES.items(), SCALARS):
        run = tf.function(lambda x: getattr(T, name)(x, scalar), jit_compile=xla)
        _agree(_numpy(name, a, scalar), lambda: run(tf.constant(a)))


@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
def test_round_to_decimals_is_numpys(xla):
    values = np.array([2.675, -1.005, 0.125, 0.375, 1234.5678, -0.5, 1.5, 2.5, np.nan, np.inf])
    for decimals in (0, 1, 2, 3, -1, -2):
        for dtype in (np.float64, np.float32):
            run = tf.function(lambda x: T.round(x, decimals), jit_compile=xla)
            _agree(np.round(values.astype(dtype), decimals), lambda: run(tf.constant(values.astype(dtype))))
    ints = VALUES["int64"]
    run = tf.function(lambda x: T.round(x, 2), jit_compile=xla)
    _agree(np.round(ints, 2), lambda: run(tf.constant(ints)))


@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
def test_where_clip_and_full_like_are_numpys(xla):
    condition = VALUES["bool"]
    for (_, a), (_, b) in itertools.product(VALUES.items(), repeat=2):
        run = tf.function(lambda x, y: T.where(tf.constant(condition), x, y), jit_compile=xla)
        _agree(np.where(condition, a, b), lambda: run(tf.constant(a), tf.constant(b)))
    for values in (VALUES["float64"], VALUES["int64"]):
        run = tf.function(lambda x: T.clip(x, -1, 3), jit_compile=xla)
        _agree(np.clip(values, -1, 3), lambda: run(tf.constant(values)))
        run = tf.function(lambda x: T.full_like(x, 2.5), jit_compile=xla)
        _agree(np.full_like(values, 2.5), lambda: run(tf.constant(values)))
