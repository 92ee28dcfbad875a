"""`v.sum()`, `v.max(axis=0)`, `m.argmax()` of a per-example array: NumPy's
ndarray methods, per example (`py_reduce`; transpiler/passes/python_calls.py
writes the call).

Shapes: values [batch, *event].  With no axis the method reduces every
per-example axis ([batch]); `axis=k` is the example's axis k, the batch's
k + 1 (a negative axis counts from the end, the same on both).  The dtypes
are NumPy's: a sum or product of bools or ints is int64, a mean float64,
`any` and `all` bool, `argmax` and `argmin` int64 (with no axis, the index
into the example's flattened array).
"""

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin")


def batch_axis(axis):
    """The batch's axis for the example's axis `axis` (not None)."""
    return axis + 1 if axis >= 0 else axis


def array_reduce(xp):
    """`py_reduce` for an array module with NumPy's API (NumPy, jax.numpy)."""

    def py_reduce(method, values, axis=None):
        values = xp.asarray(values)
        if method in ("argmax", "argmin"):
            if axis is None:
                values, axes = values.reshape(values.shape[0], -1), 1  # [batch, size]
            else:
                axes = batch_axis(axis)
            return getattr(xp, method)(values, axis=axes).astype(xp.int64)
        axes = tuple(range(1, values.ndim)) if axis is None else batch_axis(axis)
        if method in ("sum", "prod") and values.dtype == bool:
            values = values.astype(xp.int64)
        if method == "mean":
            # NumPy's mean: the sum divided by the count, in float64 for
            # bools and ints (jax.numpy's mean of bools is float32)
            if values.dtype.kind in "biu":
                values = values.astype(xp.float64)
            count = values.size // values.shape[0] if axis is None else values.shape[axes]
            return xp.sum(values, axis=axes) / count
        return getattr(xp, method)(values, axis=axes)

    return py_reduce
