"""The JAX runtime's helpers for block bodies: selection, indexing, casts.

Part of the runtime that generated JAX modules reach as `rt.<name>`
(jax_backend.py, which turns on 64-bit types before importing this,
re-exports every name here): per-example `where` and `select`, the
subscripts of passes/subscripts.py (`take`, `lookup`, `put`,
`index_fault`), and the initial arrays (`zeros`, `event_size`).
"""

import numpy as np
import jax.numpy as jnp
from jax import lax

from autobatch_runtime.common import unpack_by


def _array(value):
    """A Python number as NumPy types it (int64, float64, bool: a strong
    dtype, not JAX's weak one); an array as it is."""
    if isinstance(value, (bool, int, float, complex)):
        return jnp.asarray(np.asarray(value))
    return jnp.asarray(value)


def select(active, new, old):
    """Per example: `new` where `active`, else `old`.

    active: [batch] bool; old: [batch, *event]; new: broadcastable to old.
    """
    old = jnp.asarray(old)
    new = jnp.asarray(new).astype(old.dtype)
    if old.ndim > 1:
        active = active.reshape(active.shape + (1,) * (old.ndim - 1))
    return jnp.where(active, new, old)


def choose(condition, if_true, if_false):
    """Per example: block `if_true` where `condition` holds, else `if_false`."""
    return jnp.where(jnp.asarray(condition).astype(bool), if_true, if_false)


def where(condition, if_true, if_false):
    """Per example: `if_true` where `condition` holds, else `if_false`.

    condition: [batch] (any dtype: its truth is used); the sides:
    [batch, *event] or broadcastable.  Two Python numbers are int64 /
    float64, as in NumPy; one beside an array takes the array's dtype.
    """
    condition = jnp.asarray(condition).astype(bool)
    numbers = (bool, int, float, complex)
    if isinstance(if_true, numbers) and isinstance(if_false, numbers):
        if_true, if_false = _array(if_true), _array(if_false)
    if_true, if_false = jnp.asarray(if_true), jnp.asarray(if_false)
    extra = max(if_true.ndim, if_false.ndim) - condition.ndim
    if condition.ndim == 1 and extra > 0:
        condition = condition.reshape(condition.shape + (1,) * extra)
    return jnp.where(condition, if_true, if_false)


def safe_divisor(active, value):
    """`value` where `active`, else 1 (modules generated before
    `divisor_or_one`; see numpy_backend.safe_divisor)."""
    value = jnp.asarray(value)
    mask = active.reshape(active.shape + (1,) * (value.ndim - 1))
    return jnp.where(mask, value, jnp.ones_like(value))


def divisor_or_one(value):
    """An integer divisor with 1 where it is 0: XLA's integer division by
    zero gives junk rather than raising, but the lanes of examples
    elsewhere in the program must give what NumPy's and TensorFlow's do."""
    value = jnp.asarray(value)
    if value.dtype.kind not in "iub":
        return value
    return jnp.where(value == 0, jnp.ones_like(value), value)


def exponent_or_zero(value):
    """An integer exponent with 0 where it is negative (junk may ask for a
    negative power of an integer)."""
    value = jnp.asarray(value)
    if value.dtype.kind not in "iu":
        return value
    return jnp.maximum(value, jnp.zeros_like(value))


def cast(value, dtype):
    return _array(value).astype(dtype)


def index_key(batch, event_shape, items):
    """The JAX key of a per-example subscript `x[items]` on [batch, *event]
    (see numpy_backend.index_key: the same key, as jnp arrays)."""
    key = [jnp.arange(batch)]
    for size, item in zip(event_shape, items):
        if isinstance(item, slice):
            key.append(item)
        else:
            item = jnp.asarray(item)
            key.append(jnp.clip(jnp.where(item < 0, item + size, item), 0, size - 1))
    return tuple(key)


def take(array, items):
    """Per example: array[b][items] (see `index_key`); [batch, *rest]: one gather."""
    array = jnp.asarray(array)
    return array[index_key(array.shape[0], array.shape[1:], items)]


def stack_items(items):
    """A tuple of like per-example arrays side by side, for indexing it per
    example (`gaps[k]`): [batch, len(items), ...]."""
    return jnp.stack([jnp.asarray(v) for v in items], axis=1)


def unpack_rows(value, spec):
    """`a, b = edge` per example (numpy_backend.py)."""
    return unpack_by(value, spec, lambda v, n: tuple(jnp.asarray(v)[:, k] for k in range(n)))


def lookup(table, items):
    """Per example: table[items] of a constant table (module-level array,
    tuple or list), with per-example integer items; [batch, *rest]."""
    table = np.asarray(table)
    batch = max((np.shape(i)[0] for i in items if np.ndim(i) == 1), default=1)
    return take(jnp.broadcast_to(jnp.asarray(table), (batch, *table.shape)), items)


def spread(active, value, which=None):
    """A value that is the same for every example, given the batch axis:
    [batch, *shape].

    active: [batch] (only its length is used).  Python numbers become int64
    and float64, as type inference typed them.  A tuple (or namedtuple)
    value: `which` gives, per leaf depth first, whether to spread it (the
    other leaves already have the batch axis); all of them if None.
    """
    if isinstance(value, (tuple, list)):
        flags = iter(which if which is not None else ())

        def walk(v):
            if v is None:
                return None
            if isinstance(v, (tuple, list)):
                parts = [walk(p) for p in v]
                return type(v)(*parts) if hasattr(v, "_fields") else type(v)(parts)
            return spread(active, v) if next(flags, True) else v

        return walk(value)
    value = _array(value)
    return jnp.broadcast_to(value, np.shape(active) + value.shape)


def put(array, items, value):
    """Per example: a copy of array[b] with [items] set to value[b] (the
    functional form of `x[items] = value`): one scatter.  value is cast to
    array's dtype."""
    array = jnp.asarray(array)
    key = index_key(array.shape[0], array.shape[1:], items)
    return array.at[key].set(jnp.asarray(value).astype(array.dtype))


def repeat(value, n, axis=0):
    """`[value for _ in range(n)]` (and `[value] * n`): n copies of value
    along a new axis: [n, *shape] for a constant (axis 0), [batch, n,
    *shape] for a per-example value (axis 1).  n is a Python int."""
    value = _array(value)
    return jnp.repeat(jnp.expand_dims(value, axis), max(int(n), 0), axis=axis)


def index_fault(active, array, items, batched=True):
    """[batch] bool: the active examples whose integer items are out of range
    of `array`'s event axes (of a constant table's axes if not `batched`)."""
    shape = np.shape(array)[1:] if batched else np.shape(array)
    fault = jnp.zeros(np.shape(active), bool)
    for size, item in zip(shape, items):
        if not isinstance(item, slice):
            item = jnp.asarray(item)
            fault = fault | (item < -size) | (item >= size)
    return fault & active


def negative_power(active, exponent):
    """[batch] bool: the active examples whose integer exponent is negative
    (see numpy_backend.negative_power)."""
    negative = jnp.asarray(exponent) < 0  # [batch, *event]
    return active & negative.any(axis=tuple(range(1, negative.ndim)))


def zeros(leading, shape, dtype):
    """A [*leading, *shape] array of zeros (False for bool)."""
    return jnp.zeros((*leading, *shape), dtype)


def event_size(leaf, axis):
    """A symbolic size (`size_n` in a block) read off a [batch, *event] value:
    its per-example axis `axis`, a Python int wherever the shape is known
    (the program is traced, and compiled, once per set of sizes)."""
    return int(leaf.shape[axis + 1])


def batch_size(*leaves):
    return leaves[0].shape[0] if leaves else 1
