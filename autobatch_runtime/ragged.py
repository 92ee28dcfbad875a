"""`Ragged`: a per-example vector whose length differs between examples.

Code written for one example slices and recurses on vectors: `s[1:-1]`,
`a[:-1]`, `v[i:]` with a per-example `i`.  On the batch each example's
vector has its own length, so the value is two arrays: `values`
([batch, capacity], each example's elements packed at the front, zeros
after them) and `length` ([batch] int64).  The capacity is the same for
every example: that of the vector the value was sliced from.

Every read goes through `length`: `ragged_take` counts a negative index
from the length and the generated code stops an example whose index is
out of range with an IndexError (`ragged_fault`), as Python would, so a
read never returns padding.  A batched function that returns one gives a
`Ragged`; `tolist()` gives each example's Python list.

The helpers are written once for NumPy and JAX (`array_helpers(xp)`, which
builtins_numpy.py and builtins_jax.py install) and once for TensorFlow
(`tensorflow_helpers()`, for builtins_tensorflow.py).
"""

import typing

import numpy as np

# The helpers rewritten expressions call (passes/subscripts.py,
# passes/python_calls.py); each backend defines them all.
RAGGED_HELPERS = (
    "ragged_all",
    "ragged_any",
    "ragged_argument",
    "ragged_contains",
    "ragged_fault",
    "ragged_max_of",
    "ragged_mean",
    "ragged_min_of",
    "ragged_of",
    "ragged_slice",
    "ragged_sorted",
    "ragged_sum",
    "ragged_take",
)


class Ragged(typing.NamedTuple):
    """Per example: the vector `values[b, :length[b]]`."""

    values: typing.Any  # [batch, capacity]
    length: typing.Any  # [batch] int64

    def tolist(self):
        """Each example's vector as a plain Python list."""
        values = np.asarray(self.values).tolist()
        lengths = np.asarray(self.length).tolist()
        return [v[:n] for v, n in zip(values, lengths)]


def _largest(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.inf
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max


def array_helpers(xp):
    """The ragged helpers for NumPy (`xp` = numpy) or JAX (jax.numpy)."""

    def parts(r):
        """(values, length) of a Ragged, or of a plain [batch, n] array (all of it)."""
        if isinstance(r, Ragged):
            return xp.asarray(r.values), xp.asarray(r.length).astype(np.int64)
        values = xp.asarray(r)
        return values, xp.full(values.shape[:1], values.shape[1], np.int64)

    def mask(values, length):
        return xp.arange(values.shape[1])[None, :] < length[:, None]

    def ragged_of(value, capacity=None, dtype=None):
        """`value` (a [batch, n] array or a Ragged) as a Ragged of `capacity` (and `dtype`)."""
        values, length = parts(value)
        if dtype is not None:
            values = values.astype(dtype)
        capacity = values.shape[1] if capacity is None else int(capacity)
        if capacity > values.shape[1]:
            values = xp.pad(values, ((0, 0), (0, capacity - values.shape[1])))
        return Ragged(values, length)

    def ragged_argument(value, capacity=None):
        """An entry's argument for a parameter of per-example length."""
        if not isinstance(value, Ragged):
            value = np.asarray(value) if isinstance(value, (list, tuple)) else value
        return ragged_of(value, capacity)

    def index_of(index, length):
        index = xp.broadcast_to(xp.asarray(index).astype(np.int64), length.shape)
        return xp.where(index < 0, index + length, index)

    def ragged_take(r, index):
        """`r[index]` per example (an index out of range reads junk; the
        generated code stops such an example: `ragged_fault`)."""
        values, length = parts(r)
        if values.shape[1] == 0:
            return xp.zeros(values.shape[:1], values.dtype)
        at = xp.clip(index_of(index, length), 0, values.shape[1] - 1)
        return xp.take_along_axis(values, at[:, None], axis=1)[:, 0]

    def ragged_fault(active, r, index):
        """[batch] bool: the active examples whose index is out of range of their length."""
        _, length = parts(r)
        index = xp.broadcast_to(xp.asarray(index).astype(np.int64), length.shape)
        return xp.asarray(active) & ((index >= length) | (index < -length))

    def bound(b, length, default):
        if b is None:
            return default
        b = xp.broadcast_to(xp.asarray(b).astype(np.int64), length.shape)
        return xp.clip(xp.where(b < 0, b + length, b), 0, length)

    def ragged_slice(r, lower=None, upper=None):
        """`r[lower:upper]` per example, with Python's clamping: a copy, packed at the front."""
        values, length = parts(r)
        lo = bound(lower, length, xp.zeros_like(length))
        hi = bound(upper, length, length)
        count = xp.maximum(hi - lo, 0)
        capacity = values.shape[1]
        if capacity == 0:
            return Ragged(values, count)
        j = xp.arange(capacity)[None, :]
        source = xp.clip(lo[:, None] + j, 0, capacity - 1)
        gathered = xp.take_along_axis(values, source, axis=1)
        return Ragged(xp.where(j < count[:, None], gathered, xp.zeros_like(gathered)), count)

    def ragged_sum(r, start=0):
        values, length = parts(r)
        if values.dtype == np.bool_:
            values = values.astype(np.int64)
        return start + xp.where(mask(values, length), values, xp.zeros_like(values)).sum(axis=1)

    def ragged_mean(r):
        """NumPy's mean of each example's vector: float64 for ints and
        bools, NaN where it is empty (NumPy warns)."""
        values, length = parts(r)
        if values.dtype.kind in "biu":
            values = values.astype(np.float64)
        total = xp.where(mask(values, length), values, xp.zeros_like(values)).sum(axis=1)
        count = length.astype(total.dtype)
        return xp.where(length > 0, total / xp.where(length > 0, count, 1), xp.nan)

    def extremum(r, default, largest):
        values, length = parts(r)
        inside = mask(values, length)
        if values.shape[1] == 0:
            return xp.broadcast_to(xp.asarray(default), length.shape)
        fill = -_largest(values.dtype) if largest else _largest(values.dtype)
        if values.dtype == np.bool_:
            fill = not largest
        if values.dtype.kind == "f":
            # Python keeps a NaN met first and skips later ones (comparisons are false)
            clean = xp.where(inside & ~xp.isnan(values), values, fill)
            best = clean.max(axis=1) if largest else clean.min(axis=1)
            first = values[:, 0]
            best = xp.where(xp.isnan(first), first, best)
        else:
            clean = xp.where(inside, values, xp.asarray(fill, values.dtype))
            best = clean.max(axis=1) if largest else clean.min(axis=1)
        return xp.where(length > 0, best, default)

    def ragged_min_of(r, default):
        return extremum(r, default, largest=False)

    def ragged_max_of(r, default):
        return extremum(r, default, largest=True)

    def ragged_any(r):
        values, length = parts(r)
        return (values.astype(bool) & mask(values, length)).any(axis=1)

    def ragged_all(r):
        values, length = parts(r)
        return (values.astype(bool) | ~mask(values, length)).all(axis=1)

    def ragged_contains(r, item):
        values, length = parts(r)
        item = xp.asarray(item)
        item = item[:, None] if item.ndim else item
        return ((values == item) & mask(values, length)).any(axis=1)

    def ragged_sorted(r, reverse=False):
        values, length = parts(r)
        inside = mask(values, length)
        ordered = xp.sort(xp.where(inside, values, xp.asarray(_largest(values.dtype), values.dtype)), axis=1)
        if reverse and values.shape[1]:
            at = xp.clip(length[:, None] - 1 - xp.arange(values.shape[1])[None, :], 0, values.shape[1] - 1)
            ordered = xp.take_along_axis(ordered, at, axis=1)
        return Ragged(xp.where(inside, ordered, xp.zeros_like(ordered)), length)

    helpers = dict(locals())
    return {name: helpers[name] for name in RAGGED_HELPERS}


def tensorflow_helpers(py_sum):
    """The ragged helpers for TensorFlow (the same meaning, TensorFlow ops XLA
    compiles); `py_sum` is builtins_tensorflow's, for a sum's start."""
    import tensorflow as tf

    def parts(r):
        if isinstance(r, Ragged):
            return tf.convert_to_tensor(r.values), tf.cast(r.length, tf.int64)
        values = tf.convert_to_tensor(r)
        return values, tf.fill(tf.shape(values)[:1], tf.cast(values.shape[1], tf.int64))

    def mask(values, length):
        return tf.range(values.shape[1], dtype=tf.int64)[None, :] < length[:, None]

    def ragged_of(value, capacity=None, dtype=None):
        values, length = parts(value)
        if dtype is not None:
            values = tf.cast(values, dtype)
        capacity = values.shape[1] if capacity is None else int(capacity)
        if capacity > values.shape[1]:
            values = tf.pad(values, [[0, 0], [0, capacity - values.shape[1]]])
        return Ragged(values, length)

    def ragged_argument(value, capacity=None):
        if not isinstance(value, Ragged) and isinstance(value, (list, tuple)):
            value = np.asarray(value)
        return ragged_of(value, capacity)

    def broadcast(index, length):
        return tf.broadcast_to(tf.cast(index, tf.int64), tf.shape(length))

    def ragged_take(r, index):
        values, length = parts(r)
        if values.shape[1] == 0:
            return tf.zeros(tf.shape(values)[:1], values.dtype)
        index = broadcast(index, length)
        at = tf.clip_by_value(tf.where(index < 0, index + length, index), 0, values.shape[1] - 1)
        return tf.gather(values, at, batch_dims=1)

    def ragged_fault(active, r, index):
        _, length = parts(r)
        index = broadcast(index, length)
        return tf.logical_and(tf.cast(active, tf.bool), (index >= length) | (index < -length))

    def bound(b, length, default):
        if b is None:
            return default
        b = broadcast(b, length)
        return tf.clip_by_value(tf.where(b < 0, b + length, b), 0, length)

    def ragged_slice(r, lower=None, upper=None):
        values, length = parts(r)
        lo = bound(lower, length, tf.zeros_like(length))
        hi = bound(upper, length, length)
        count = tf.maximum(hi - lo, 0)
        capacity = values.shape[1]
        if capacity == 0:
            return Ragged(values, count)
        j = tf.range(capacity, dtype=tf.int64)[None, :]
        source = tf.clip_by_value(lo[:, None] + j, 0, capacity - 1)
        gathered = tf.gather(values, source, batch_dims=1)
        return Ragged(tf.where(j < count[:, None], gathered, tf.zeros_like(gathered)), count)

    def ragged_sum(r, start=0):
        values, length = parts(r)
        if values.dtype == tf.bool:
            values = tf.cast(values, tf.int64)
        total = tf.reduce_sum(tf.where(mask(values, length), values, tf.zeros_like(values)), axis=1)
        if isinstance(start, (int, float)) and start == 0:
            return total
        return py_sum(total[:, None], start)  # Python's promotion of start + total

    def ragged_mean(r):
        """NumPy's mean of each example's vector (array_helpers)."""
        values, length = parts(r)
        if not (values.dtype.is_floating or values.dtype.is_complex):
            values = tf.cast(values, tf.float64)
        total = tf.reduce_sum(tf.where(mask(values, length), values, tf.zeros_like(values)), axis=1)
        count = tf.cast(tf.maximum(length, 1), total.dtype)
        return tf.where(length > 0, total / count, tf.constant(np.nan, total.dtype))

    def extremum(r, default, largest):
        values, length = parts(r)
        default = tf.cast(default, values.dtype)
        if values.shape[1] == 0:
            return tf.broadcast_to(default, tf.shape(length))
        inside = mask(values, length)
        dtype = values.dtype.as_numpy_dtype
        fill = tf.constant(-_largest(dtype) if largest else _largest(dtype), values.dtype)
        if values.dtype.is_floating:
            clean = tf.where(inside & ~tf.math.is_nan(values), values, fill)
        else:
            clean = tf.where(inside, values, fill)
        best = tf.reduce_max(clean, axis=1) if largest else tf.reduce_min(clean, axis=1)
        if values.dtype.is_floating:
            first = values[:, 0]
            best = tf.where(tf.math.is_nan(first), first, best)
        return tf.where(length > 0, best, default)

    def ragged_min_of(r, default):
        return extremum(r, default, largest=False)

    def ragged_max_of(r, default):
        return extremum(r, default, largest=True)

    def truth(values):
        return values if values.dtype == tf.bool else tf.not_equal(values, tf.zeros_like(values))

    def ragged_any(r):
        values, length = parts(r)
        return tf.reduce_any(truth(values) & mask(values, length), axis=1)

    def ragged_all(r):
        values, length = parts(r)
        return tf.reduce_all(truth(values) | ~mask(values, length), axis=1)

    def ragged_contains(r, item):
        values, length = parts(r)
        item = tf.cast(item, values.dtype)
        item = item[:, None] if item.shape.rank else item
        return tf.reduce_any(tf.equal(values, item) & mask(values, length), axis=1)

    def ragged_sorted(r, reverse=False):
        values, length = parts(r)
        inside = mask(values, length)
        dtype = values.dtype
        keys = tf.cast(values, tf.int64) if dtype == tf.bool else values
        fill = tf.constant(_largest(keys.dtype.as_numpy_dtype), keys.dtype)
        ordered = tf.sort(tf.where(inside, keys, fill), axis=1)
        if reverse and values.shape[1]:
            at = length[:, None] - 1 - tf.range(values.shape[1], dtype=tf.int64)[None, :]
            ordered = tf.gather(ordered, tf.clip_by_value(at, 0, values.shape[1] - 1), batch_dims=1)
        ordered = tf.cast(ordered, dtype)
        return Ragged(tf.where(inside, ordered, tf.zeros_like(ordered)), length)

    helpers = dict(locals())
    return {name: helpers[name] for name in RAGGED_HELPERS}
