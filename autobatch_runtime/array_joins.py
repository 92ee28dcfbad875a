"""`np.concatenate([a, b])`, `np.stack([x, y])`, `np.append(v, x)`,
`np.hstack`, `np.vstack` of each example's arrays (`py_join`;
transpiler/passes/joining_calls.py writes the call).

Run on the batch as written, each joins along the batch axis (NumPy's
default axis 0 is the batch's): `np.concatenate([a, b])` of two [batch, n]
arrays is [2 * batch, n].  Per example they join the example's arrays: axis
k of the example is the batch's k + 1, and an item that is the same for
every example (`np.zeros(2)`, `[0.0]`) joins each example's items as it is.

`ranks` gives each item's per-example rank: an item with one axis more is
batched ([batch, *example]).  The dtype is NumPy's for the items (an int
beside a float is a float), on every backend.
"""

import numpy as np

KINDS = ("concatenate", "stack", "append", "hstack", "vstack")


class JoinOps:
    """What `joining` needs of an array library (NumPy, jax.numpy, TensorFlow)."""

    def __init__(self, asarray, cast, concatenate, stack, reshape, broadcast_to, batch_size):
        self.asarray, self.cast = asarray, cast
        self.concatenate, self.stack = concatenate, stack
        self.reshape, self.broadcast_to, self.batch_size = reshape, broadcast_to, batch_size


def joining(ops: JoinOps):
    """`py_join` for one array library."""

    def py_join(kind, items, ranks, axis=None):
        """`np.<kind>(items, axis)` of each example's arrays ([batch, ...])."""
        dtype = _numpy_dtype(items)
        arrays = [ops.cast(ops.asarray(item), dtype) for item in items]
        shapes = [tuple(a.shape)[len(a.shape) - r :] for a, r in zip(arrays, ranks)]
        batched = [len(a.shape) > r for a, r in zip(arrays, ranks)]
        batch = ops.batch_size(next(a for a, b in zip(arrays, batched) if b))
        if kind == "append":  # the flattened arrays, unless an axis is given
            if axis is None:
                shapes = [(int(np.prod(s, dtype=np.int64)),) for s in shapes]
                axis = 0
            kind = "concatenate"
        elif kind == "hstack":
            shapes = [s or (1,) for s in shapes]
            kind, axis = "concatenate", 0 if len(shapes[0]) == 1 else 1
        elif kind == "vstack":
            shapes = [(1,) * (2 - len(s)) + s if len(s) < 2 else s for s in shapes]
            kind, axis = "concatenate", 0
        axis = 0 if axis is None else axis
        joined = []
        for array, shape, is_batched in zip(arrays, shapes, batched):
            if is_batched:
                joined.append(ops.reshape(array, (-1,) + shape))
            else:
                joined.append(ops.broadcast_to(ops.reshape(array, shape), (batch,) + shape))
        rank = len(shapes[0])
        if kind == "concatenate":
            if rank == 0:
                raise ValueError("zero-dimensional arrays cannot be concatenated")
            return ops.concatenate(joined, (axis + rank if axis < 0 else axis) + 1)
        return ops.stack(joined, (axis + rank + 1 if axis < 0 else axis) + 1)

    return py_join


def _numpy_dtype(items):
    """NumPy's dtype for joining `items` (Python numbers and lists weakly)."""
    samples = []
    for item in items:
        dtype = getattr(item, "dtype", None)
        if dtype is None:
            samples.append(np.asarray(item))
        else:
            samples.append(np.ones((1,), getattr(dtype, "as_numpy_dtype", dtype)))
    return np.concatenate([np.ravel(s) for s in samples]).dtype


def numpy_join_ops(xp):
    """JoinOps of NumPy or jax.numpy."""
    return JoinOps(
        asarray=xp.asarray,
        cast=lambda a, dtype: a.astype(dtype),
        concatenate=lambda arrays, axis: xp.concatenate(arrays, axis=axis),
        stack=lambda arrays, axis: xp.stack(arrays, axis=axis),
        reshape=lambda a, shape: a.reshape(shape),
        broadcast_to=xp.broadcast_to,
        batch_size=lambda a: a.shape[0],
    )
