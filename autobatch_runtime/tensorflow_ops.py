"""The TensorFlow runtime's helpers for block bodies: selection, indexing, casts.

Part of the runtime that generated TensorFlow modules reach as `rt.<name>`
(tensorflow_backend.py re-exports every name here): per-example `where`
and `select`, the subscripts of passes/subscripts.py (`take`, `lookup`,
`put`, `index_fault`), and the initial arrays (`zeros`, `event_size`).
Shapes: `batch` is the number of examples, `event` a variable's
per-example shape.
"""

import numpy as np

from autobatch_runtime.common import unpack_by
from autobatch_runtime.quiet import import_tensorflow

tf = import_tensorflow()  # without its start-up log lines (quiet.py)


def select(active, new, old):
    """Per example: `new` where `active`, else `old`.

    active: [batch] bool; old: [batch, *event]; new: broadcastable to old.
    """
    old = tf.convert_to_tensor(old)
    if isinstance(new, (bool, int, float)):
        new = tf.constant(new, old.dtype)
    elif new.dtype != old.dtype:
        new = tf.cast(new, old.dtype)
    if old.shape.rank > 1:  # few ops per call: tracing pays per op
        active = tf.reshape(active, [-1] + [1] * (old.shape.rank - 1))
    return tf.where(active, new, old)


def choose(condition, if_true, if_false):
    """Per example: block `if_true` where `condition` holds, else `if_false`."""
    return tf.where(tf.cast(condition, tf.bool), if_true, if_false)


def where(condition, if_true, if_false):
    """Per example: `if_true` where `condition` holds, else `if_false`.

    condition: [batch] (any dtype: its truth is used); the sides:
    [batch, *event] or broadcastable, of one dtype.
    """
    if_true, if_false = as_tensors(if_true, if_false)
    condition = tf.cast(condition, tf.bool)
    extra = max(if_true.shape.rank, if_false.shape.rank) - condition.shape.rank
    if condition.shape.rank == 1 and extra > 0:
        condition = tf.reshape(condition, [-1] + [1] * extra)
    return tf.where(condition, if_true, if_false)


def as_tensors(a, b):
    """Both sides as tensors of one dtype, Python numbers typed as in NumPy.

    A Python number takes the dtype of the tensor beside it; two numbers
    become int64 / float64 (TensorFlow alone would make them int32 /
    float32, which is not what type inference decided).
    """
    numbers = (bool, int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return tf.constant(np.asarray(a)), tf.constant(np.asarray(b))
    if isinstance(a, numbers):
        b = tf.convert_to_tensor(b)
        return tf.constant(a, b.dtype), b
    a = tf.convert_to_tensor(a)
    return a, tf.convert_to_tensor(b, dtype_hint=a.dtype)


def safe_divisor(active, value):
    """`value` where `active`, else 1: no integer division by zero in idle lanes.

    Modules generated before `divisor_or_one` load a dividing block's integer
    inputs through it; new ones guard the divisor where it divides."""
    if value.shape.rank > 1:  # a per-example vector: [batch, 1, ...] mask
        active = tf.reshape(active, [-1] + [1] * (value.shape.rank - 1))
    return tf.where(active, value, tf.ones_like(value))


def divisor_or_one(value):
    """An integer divisor with 1 where it is 0 (`a % divisor_or_one(b)`):
    TensorFlow raises on an integer division by zero, even in the lanes of
    examples that are elsewhere in the program (their junk)."""
    value = tf.convert_to_tensor(value)
    if not (value.dtype.is_integer or value.dtype.is_bool):
        return value
    return tf.where(tf.equal(value, tf.zeros_like(value)), tf.ones_like(value), value)


def exponent_or_zero(value):
    """An integer exponent with 0 where it is negative: TensorFlow raises on
    an integer to a negative integer power, which junk may ask for."""
    value = tf.convert_to_tensor(value)
    if not value.dtype.is_integer:
        return value
    return tf.maximum(value, tf.zeros_like(value))


def cast(value, dtype):
    return tf.cast(value, dtype)


def index_positions(batch, event_shape, items, batched=True):
    """Where per-example subscript `x[items]` reads: [batch, *region, rank].

    items: one per leading event axis, each a slice (static) or an integer,
    a Python int or a [batch] tensor (per example); the axes after them are
    taken whole.  `region` is the per-example shape of the value (the axes
    that slices and whole axes keep).  The last axis holds the coordinates
    for `gather_nd`: the example first when `batched`, then one per event
    axis.  Negative integers count from the end, as on one example;
    out-of-range ones are clipped (idle examples compute junk indices; XLA
    would clip a gather anyway; `index_fault` reports active ones).
    """
    items = list(items) + [slice(None)] * (len(event_shape) - len(items))
    region, coordinates = [], []  # coordinates: (values, region axis or None)
    for size, item in zip(event_shape, items):
        if isinstance(item, slice):
            kept = list(range(size))[item]
            coordinates.append((tf.constant(kept, tf.int32), len(region)))
            region.append(len(kept))
        else:
            item = tf.cast(item, tf.int32)
            item = tf.clip_by_value(tf.where(item < 0, item + size, item), 0, size - 1)
            coordinates.append((item, None))
    shape = tf.concat([[batch], tf.constant(region, tf.int32)], 0)

    def spread(values, axis):
        dims = [1] * (1 + len(region))
        dims[0 if axis is None else 1 + axis] = -1
        return tf.broadcast_to(tf.reshape(values, dims), shape)

    parts = [spread(tf.range(batch), None)] if batched else []
    parts += [spread(values, axis) for values, axis in coordinates]
    return tf.stack(parts, -1)


def item_positions(batch, event_shape, items):
    """Where per-example subscript `x[items]` reads when every item is an
    integer (`draws[row]`, `m[i, j]`): [batch, 1 + len(items)], the example
    and then each item, negative ones counted from the end and out-of-range
    ones clipped (as `index_positions`).  `gather_nd` then moves the axes
    after them whole: a few ops where `index_positions` spells out every
    element's coordinates (a program of many subscripts traces and compiles
    that much sooner)."""
    columns = [tf.range(batch)]
    for size, item in zip(event_shape, items):
        item = tf.cast(item, tf.int32)
        item = tf.clip_by_value(tf.where(item < 0, item + size, item), 0, size - 1)
        columns.append(tf.broadcast_to(item, [batch]))
    return tf.stack(columns, -1)


def _positions(array, items):
    """`array[b][items]`'s positions for gather_nd and scatter_nd."""
    if not any(isinstance(item, slice) for item in items):
        return item_positions(tf.shape(array)[0], array.shape[1:], items)
    return index_positions(tf.shape(array)[0], array.shape[1:], items)


def take(array, items):
    """Per example: array[b][items] (see `index_positions`): one gather."""
    array = tf.convert_to_tensor(array)
    return tf.gather_nd(array, _positions(array, items))


def stack_items(items):
    """A tuple of like per-example arrays side by side, for indexing it per
    example (`gaps[k]`): [batch, len(items), ...]."""
    return tf.stack([tf.convert_to_tensor(v) for v in items], axis=1)


def unpack_rows(value, spec):
    """`a, b = edge` per example (numpy_backend.py)."""
    return unpack_by(value, spec, lambda v, n: tuple(tf.unstack(tf.convert_to_tensor(v), num=n, axis=1)))


def lookup(table, items):
    """Per example: table[items] of a constant table (module-level array,
    tuple or list), with per-example integer items: one gather."""
    table = np.asarray(table)
    # the batch size: from a per-example item ([batch]); the others are
    # slices and constants (a Python int, or a NumPy integer read from
    # another table: rank 0)
    batch = next(tf.shape(i)[0] for i in items if len(getattr(i, "shape", ())) == 1)
    positions = index_positions(batch, table.shape, items, batched=False)
    return tf.gather_nd(tf.constant(table), positions)


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
    if isinstance(value, bool):
        value = tf.constant(value)
    elif isinstance(value, int):
        value = tf.constant(value, tf.int64)
    elif isinstance(value, float):
        value = tf.constant(value, tf.float64)
    value = tf.convert_to_tensor(value)
    return tf.broadcast_to(value, tf.concat([tf.shape(active), tf.shape(value)], 0))


def put(array, items, value):
    """Per example: a copy of array[b] with [items] set to value[b] (the
    functional form of `x[items] = value`): one scatter.  value is cast to
    array's dtype."""
    array = tf.convert_to_tensor(array)
    positions = _positions(array, items)
    # value: [batch, *what one example's subscript selects]
    shape = tf.concat([tf.shape(positions)[:-1], tf.shape(array)[positions.shape[-1] :]], 0)
    value = tf.broadcast_to(tf.cast(value, array.dtype), shape)
    return tf.tensor_scatter_nd_update(array, positions, value)



def repeat(value, n, axis=0):
    """`[value for _ in range(n)]` (and `[value] * n`): n copies of value
    along a new axis: [n, *shape] for a constant (axis 0), [batch, n,
    *shape] for a per-example value (axis 1, after the batch axis).  Python
    numbers become int64 / float64 / bool, as type inference typed them;
    n is a Python int (a static shape, for XLA)."""
    if isinstance(value, (bool, int, float)) or isinstance(value, np.ndarray):
        value = tf.constant(np.asarray(value))
    value = tf.convert_to_tensor(value)
    return tf.repeat(tf.expand_dims(value, axis), max(int(n), 0), axis=axis)


def index_fault(active, array, items, batched=True):
    """[batch] bool: the active examples whose integer items are out of range
    of `array`'s event axes (of a constant table's axes if not `batched`).
    Static items were checked when the program was built."""
    shape = tf.convert_to_tensor(array).shape[1:] if batched else np.shape(array)
    fault = tf.zeros_like(active)
    for size, item in zip(shape, items):
        if not isinstance(item, (slice, int)):
            fault = fault | (item < -size) | (item >= size)
    return fault & active


def negative_power(active, exponent):
    """[batch] bool: the active examples whose integer exponent is negative
    (anywhere in it, for a vector of exponents).  Python's `2 ** -1` is the
    float 0.5, and the program typed the power an int: those examples stop,
    and the entry says so (common.check_index; numpy_backend.negative_power), instead of `exponent_or_zero`'s
    1 standing in for Python's 0.5."""
    negative = tf.convert_to_tensor(exponent) < 0  # [batch, *event]
    return active & tf.reduce_any(negative, axis=list(range(1, negative.shape.rank)))


def zeros(leading, shape, dtype):
    """A [*leading, *shape] array of zeros (False for bool)."""
    return tf.zeros([*leading, *shape], dtype)


def event_size(leaf, axis):
    """A symbolic size (`size_n` in a block) read off a [batch, *event] value:
    its per-example axis `axis`, a Python int wherever the shape is known
    (the program is traced, and compiled, once per set of sizes)."""
    size = leaf.shape[axis + 1]
    return tf.shape(leaf)[axis + 1] if size is None else int(size)


def batch_size(*leaves):
    return tf.shape(leaves[0])[0] if leaves else 1
