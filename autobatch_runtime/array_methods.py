"""`v.sum()`, `v.max(axis=0)`, `m.argmax()`, `v.cumsum()`, `m.flatten()`,
`np.sort(m, axis=0)`, `np.roll(v, 1)`, `np.flip(m)`, `m.T` of a per-example
array: NumPy's ndarray methods and functions, per example (`py_array_method`;
transpiler/passes/python_calls.py and subscripts.py write the call).  Run on
the batch as written, each would reach across examples or move the batch axis.

Shapes: values [batch, *event].  With no axis a reduction reduces every
per-example axis ([batch]), and `cumsum`, `cumprod`, `argmax` and `argmin`
work on the example's flattened array ([batch, size]), as NumPy's do;
`py_matmul(a, b, a_rank, b_rank)` is `a @ b` (and `np.dot`, `np.matmul`) of
each example's arrays (`matrix_product`).
`np.linalg.norm(x)` (with no `ord`) is the method "norm", reduced as a sum is:
the 2-norm of a vector, the Frobenius norm of a matrix.
`axis=k` is the example's axis k, the batch's k + 1 (a negative axis counts
from the end, the same on both).  `flatten` and `ravel`: [batch, size]; `transpose`, `flip`, `sort`, `roll`: the
example's shape (`ARRANGING`).
The dtypes are NumPy's: a sum, product or running sum of bools or ints is
int64 (`accumulator`), a mean or norm float64, `any` and `all` bool, `argmax` and `argmin` int64.
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
        if method == "norm":
            return xp.sqrt(xp.sum(_squares(xp, values), axis=axes))
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


def _squares(xp, values):
    """|x|**2 of each element, in NumPy's dtype for a norm (float64 for ints
    and bools)."""
    if values.dtype.kind in "biu":
        values = values.astype(xp.float64)
    if values.dtype.kind == "c":
        return (values * xp.conj(values)).real
    return values * values


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


def matrix_product(as_arrays, matmul):
    """`py_matmul` for one array library: `as_arrays(a, b)` gives its arrays
    (of one dtype where it needs one), `matmul(a, b)` its batched product."""

    def py_matmul(a, b, a_rank, b_rank):
        """`a @ b` of each example's arrays, NumPy's matmul: a vector is a row
        on the left and a column on the right, and stacks of matrices
        broadcast.  `a_rank`, `b_rank` are the per-example ranks; an operand
        with one axis more is batched ([batch, *example]), one without is
        the same for every example.  Written as is, `v @ m` on the batch
        would multiply the [batch, n] matrix of every example's v by m."""
        a, b = as_arrays(a, b)
        if a_rank == 0 or b_rank == 0:
            raise ValueError("matmul: an operand is a number per example, which NumPy refuses; use `*`")
        a_shape, b_shape = tuple(a.shape)[a.ndim - a_rank :], tuple(b.shape)[b.ndim - b_rank :]
        inner = b_shape[-2] if b_rank > 1 else b_shape[-1]
        if None not in (a_shape[-1], inner) and a_shape[-1] != inner:
            raise ValueError(
                f"matmul: per example, shapes {a_shape} and {b_shape} do not align "
                f"({a_shape[-1]} != {inner}), as NumPy would say on each example"
            )
        a = a[..., None, :] if a_rank == 1 else a  # [(batch), ..., 1, n]
        b = b[..., None] if b_rank == 1 else b  # [(batch), ..., n, 1]
        top = max(a_rank, b_rank, 2)
        a, b = _stacked(a, max(a_rank, 2), top), _stacked(b, max(b_rank, 2), top)
        out = matmul(a, b)  # [(batch), ..., rows, columns]
        if a_rank == 1 and b_rank == 1:
            return out[..., 0, 0]
        if b_rank == 1:
            return out[..., 0]
        return out[..., 0, :] if a_rank == 1 else out

    return py_matmul


def _stacked(operand, rank, top):
    """A batched operand of per-example rank `rank` given `top - rank` axes of
    one after its batch axis, so that its stack axes broadcast against the
    other operand's per example, not against the batch."""
    if operand.ndim == rank or rank == top:
        return operand  # the same for every example, or already as deep
    return operand[(slice(None),) + (None,) * (top - rank)]
