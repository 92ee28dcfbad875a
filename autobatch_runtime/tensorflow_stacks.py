"""The TensorFlow runtime's stacks: pushes, pops, saves and their writes.

Part of the runtime that generated TensorFlow modules reach as `rt.<name>`
(tensorflow_backend.py re-exports every name here).  A stack is a
[depth, batch, *event] array; blocks only read stacks and return writes,
which the loop (tensorflow_loop.py) applies after the block.
"""

from autobatch_runtime.quiet import import_tensorflow

tf = import_tensorflow()  # without its start-up log lines (quiet.py)

from autobatch_runtime import common
from autobatch_runtime.tensorflow_ops import select


def rows(stack):
    """The stack as one row per (level, example): [depth * batch, *event].

    Row index * batch + b is stack[index, b].  XLA gathers and scatters along
    one axis of rows at half the cost of (level, example) pairs (fib over 4096
    examples: 118 against 180 ms), and the reshape itself is free.  With the
    event shape known when traced (always, in generated programs), the new
    shape is one constant: one op traced, not six.
    """
    event = stack.shape[2:]
    if event.is_fully_defined():
        return tf.reshape(stack, [-1, *event.as_list()])
    return tf.reshape(stack, tf.concat([[-1], tf.shape(stack)[2:]], 0))


def read(stack, index):
    """stack[index[b], b] for every example b: [batch, *event].

    Indices are clamped: XLA would clamp an out-of-range gather silently anyway.
    """
    index = tf.clip_by_value(index, 0, stack.shape[0] - 1)
    batch = tf.size(index)  # index: [batch]; fewer ops traced than shape()[0]
    return tf.gather(rows(stack), index * batch + tf.range(batch))


def push(stack, sp, value, active):
    """Pushes `value` for every active example: (new sp, write, overflow).

    `save` at `sp` (the next free slot, [batch] int32), and the pointer
    moved for the examples it wrote.
    """
    write, overflow = save(stack, sp, value, active)
    return tf.where(write[0], sp + 1, sp), write, overflow


def save(stack, frame, value, active):
    """Saves `value` at level `frame` (return_sp) for every active example.

    stack: [depth, batch, *event]; frame: [batch] int32; value: [batch,
    *event] or broadcastable.  Returns (write, overflow): the write (mask,
    index, value) that `run` applies after the block, and the [batch] bool
    active examples whose stack was full (nothing is written for them).
    """
    fits = frame < stack.shape[0]
    value = tf.cast(value, stack.dtype)
    if not (value.shape.is_fully_defined() and value.shape == stack.shape[1:]):
        value = tf.broadcast_to(value, tf.shape(stack)[1:])
    return (tf.logical_and(active, fits), frame, value), tf.logical_and(active, tf.logical_not(fits))


def stack_writes(stacks, **writes):
    """The block's writes by stack name (`run` applies them)."""
    return writes


# One masked write-back per block, one call per frame of saves (common.py).
select_fields, save_all = common.field_helpers(select, save)


def apply_write(stack, write, xla=False):
    """stack[index[b], b] = value[b] where mask[b].

    Under XLA: one scatter of a row per example into `rows(stack)`, the idle
    examples' rows sent past the last level, which XLA's scatter drops.  In
    a sweep's loop the scatter updates the stack in place, so a write
    touches batch x event values, not the whole stack.  TensorFlow's own
    kernels reject such rows, so graph mode writes per-example scalars with
    a one-hot `where` over [depth, batch] (one op; graph mode pays per op)
    and vectors by a scatter that rewrites idle rows as they were.
    """
    mask, index, value = write
    depth = stack.shape[0]
    batch = tf.size(index)  # index: [batch]; fewer ops traced than shape()[0]
    examples = tf.range(batch)
    if xla:
        at = tf.where(mask, index, depth) * batch + examples  # [batch] rows
        written = tf.tensor_scatter_nd_update(rows(stack), tf.expand_dims(at, 1), value)
        return tf.reshape(written, tf.shape(stack))
    if stack.shape.rank > 2:
        # [batch, 2] (level, example) pairs; idle examples rewrite their old row.
        at = tf.stack([tf.clip_by_value(index, 0, depth - 1), examples], 1)
        keep = tf.reshape(mask, [-1] + [1] * (stack.shape.rank - 2))  # [batch, 1...]
        kept = tf.where(keep, value, tf.gather_nd(stack, at))
        return tf.tensor_scatter_nd_update(stack, at, kept)
    hit = tf.logical_and(tf.equal(tf.range(depth)[:, None], index[None, :]), mask[None, :])
    return tf.where(hit, value[None], stack)  # [depth, batch]


def after_reads(write, pc):
    """`write`, made to depend on the block's next `pc` (a mask that is always
    true there, which XLA cannot tell).

    A block that reads a stack and writes it (a return that pops a return
    address, a call that pushes one) gives XLA a gather and an in-place
    scatter with no path between them; XLA then copies the whole stack
    before the scatter, in case the gather runs second.  The next pc depends
    on the popped address (and usually on every value a block restores), so
    the scatter must come after the gathers and needs no copy (fib over 4096
    examples: 211 against 176 ms).  If a read does not reach pc, XLA copies,
    as before: slower, never wrong.
    """
    mask, index, value = write
    return tf.logical_and(mask, pc >= 0), index, value


def pop(stack, sp, active):
    """Pops every active example's top: (value [batch, *event], new sp)."""
    sp = tf.where(active, sp - 1, sp)
    return read(stack, sp), sp


def pop_return(stack, sp, active, halt):
    """Return: the block each active example resumes at, and the new pointer.

    An example whose return stack is empty returns from the entry function:
    it halts.
    """
    empty = sp <= 0
    target, sp = pop(stack, sp, tf.logical_and(active, tf.logical_not(empty)))
    return tf.where(empty, halt, target), sp


def hide_constants(values):
    """`values` (a nest of tensors), as tensors XLA cannot see as constants.

    TensorFlow 2.21's bridge to XLA substitutes a while loop's constant,
    loop-invariant inputs into its body, and loses the bodies of the loops
    nested in it when it does (tensorflow/tensorflow#122886: "Propagate:
    Cannot find body function").  Every loop has such an input, the hidden
    `maximum_iterations`, and the initial zeros of registers no block writes
    are others.  A `where` on a condition computed from the data, false at
    run time, keeps each value and hides that it is constant.  (With no data
    at all, nothing can be hidden.)
    """
    leaves = tf.nest.flatten(values)
    data = [x for x in leaves if tf.get_static_value(x) is None]
    if not data:
        return values
    first = tf.reshape(data[0], [-1])[:1]
    never = tf.reduce_any(tf.logical_and(tf.equal(first, first), tf.not_equal(first, first)))
    hidden = [tf.where(never, tf.ones_like(x), x) for x in leaves]
    return tf.nest.pack_sequence_as(values, hidden)


def carried_of(state, stacks, fields, written):
    """The loop variables of one block's loop: the fields and stacks it writes."""
    return tuple(getattr(state, f) for f in fields), tuple(getattr(stacks, n) for n in written)


def merged(before, fields, written, carried):
    """(state, stacks): `before` with the carried fields and stacks in place."""
    state, stacks = before
    values, stack_values = carried
    return (
        state._replace(**dict(zip(fields, values))),
        stacks._replace(**dict(zip(written, stack_values))),
    )
