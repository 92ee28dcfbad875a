"""`v.sum()`, `v.max(axis=0)`, `m.argmax()`, `v.cumsum()`, `m.flatten()` of a
per-example array: NumPy's ndarray methods (and functions of the same names),
per example (`py_array_method`; transpiler/passes/python_calls.py writes the
call).  Run on the batch as written, each would reach across examples.

Shapes: values [batch, *event].  With no axis a reduction reduces every
per-example axis ([batch]), and `cumsum`, `cumprod`, `argmax` and `argmin`
work on the example's flattened array ([batch, size]), as NumPy's do;
`axis=k` is the example's axis k, the batch's k + 1 (a negative axis counts
from the end, the same on both).  `flatten` and `ravel`: [batch, size].
The dtypes are NumPy's: a sum, product or running sum of bools or ints is
int64 (`accumulator`), a mean float64, `any` and `all` bool, `argmax` and `argmin` int64.
"""

import numpy as np

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin")
RUNNING = ("cumsum", "cumprod")
FLATTENING = ("flatten", "ravel")
METHODS = REDUCTIONS + RUNNING + FLATTENING


ACCUMULATING = ("sum", "prod", "cumsum", "cumprod")


def accumulator(dtype):
    """The dtype NumPy adds and multiplies `dtype` in: int64 for bools and
    narrower ints, uint64 for narrower unsigned ints, else `dtype` itself
    (TensorFlow would wrap an int32 sum at 2**31)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.int64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.uint64
    return dtype


def batch_axis(axis):
    """The batch's axis for the example's axis `axis` (not None)."""
    return axis + 1 if axis >= 0 else axis


def numpy_api_methods(xp):
    """`py_array_method` for an array module with NumPy's API (NumPy, jax.numpy)."""

    def py_array_method(method, values, axis=None):
        values = xp.asarray(values)
        if method in FLATTENING or (axis is None and method in RUNNING + ("argmax", "argmin")):
            values = values.reshape(values.shape[0], -1)  # [batch, size]
            if method in FLATTENING:
                return values
            axis = 0
        if method in ("argmax", "argmin"):
            return getattr(xp, method)(values, axis=batch_axis(axis)).astype(xp.int64)
        axes = tuple(range(1, values.ndim)) if axis is None else batch_axis(axis)
        if method in ACCUMULATING:
            values = values.astype(accumulator(values.dtype))
        if method == "mean":
            # NumPy's mean: the sum divided by the count, in float64 for
            # bools and ints (jax.numpy's mean of bools is float32)
            if values.dtype.kind in "biu":
                values = values.astype(xp.float64)
            count = values.size // values.shape[0] if axis is None else values.shape[axes]
            return xp.sum(values, axis=axes) / count
        return getattr(xp, method)(values, axis=axes)

    return py_array_method
