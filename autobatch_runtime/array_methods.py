"""`v.sum()`, `v.max(axis=0)`, `m.argmax()`, `v.cumsum()`, `m.flatten()`,
`np.sort(m, axis=0)`, `np.roll(v, 1)`, `np.flip(m)`, `m.T` of a per-example
array: NumPy's ndarray methods and functions, per example (`py_array_method`;
transpiler/passes/python_calls.py and subscripts.py write the call).  Run on
the batch as written, each would reach across examples or move the batch axis.

Shapes: values [batch, *event].  With no axis a reduction reduces every
per-example axis ([batch]), and `cumsum`, `cumprod`, `argmax` and `argmin`
work on the example's flattened array ([batch, size]), as NumPy's do;
`axis=k` is the example's axis k, the batch's k + 1 (a negative axis counts
from the end, the same on both).  `flatten` and `ravel`: [batch, size]; `transpose`, `flip`, `sort`, `roll`: the
example's shape (`ARRANGING`).
The dtypes are NumPy's: a sum, product or running sum of bools or ints is
int64 (`accumulator`), a mean float64, `any` and `all` bool, `argmax` and `argmin` int64.
"""

import numpy as np

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin")
RUNNING = ("cumsum", "cumprod")
FLATTENING = ("flatten", "ravel")
# Functions that keep the example's elements and move them: NumPy's own
# defaults per example (`sort` along the last axis, `flip` and
# `transpose` over every axis, `roll` of the flattened array).
ARRANGING = ("transpose", "flip", "sort", "roll")
# The ndarray methods rewritten (`v.sort()` sorts in place: refused apart).
METHODS = REDUCTIONS + RUNNING + FLATTENING + ("transpose",)


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

    def py_array_method(method, values, axis=None, shift=None):
        values = xp.asarray(values)
        if method in ARRANGING:
            return _arranged(xp, method, values, axis, shift)
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


def arranging_axes(method, rank, axis):
    """The batch's axes `method` works on, for an example of rank `rank - 1`
    (`rank`: the batch's): `transpose` the permutation [0, rank-1, ..., 1],
    `flip` every example axis or `axis`, `sort` `axis` (the last by default),
    `roll` `axis` (None: the flattened example, rolled along axis 1)."""
    if method == "transpose":
        return [0] + list(range(rank - 1, 0, -1))
    if axis is None:
        return {"flip": list(range(1, rank)), "sort": -1, "roll": None}[method]
    return batch_axis(axis)


def _arranged(xp, method, values, axis, shift):
    """`transpose`, `flip`, `sort` or `roll` of each example (see ARRANGING)."""
    axes = arranging_axes(method, values.ndim, axis)
    if method == "transpose":
        return xp.transpose(values, axes)
    if method == "flip":
        return xp.flip(values, axis=tuple(axes) if isinstance(axes, list) else axes)
    if method == "sort":
        return xp.sort(values, axis=axes)
    if axes is None:  # np.roll without an axis rolls the flattened array
        flat = values.reshape(values.shape[0], -1)
        return xp.roll(flat, shift, axis=1).reshape(values.shape)
    return xp.roll(values, shift, axis=axes)
