"""The runtime of generated TensorFlow modules (`from autobatch_runtime import
tensorflow_backend as rt`); it imports NumPy and TensorFlow only.

The same helper names exist in `numpy_backend.py`, which is why block
functions read the same for both backends.  Shapes: `batch` is the number
of examples, `depth` the stack depth, `event` a variable's per-example shape.
"""

import functools
import sys
import warnings

import numpy as np

from autobatch_runtime.quiet import import_tensorflow

tf = import_tensorflow()  # without its start-up log lines (quiet.py)

from autobatch_runtime.common import (  # re-exported: generated code reads rt.<name>
    DEFAULT_MAX_STACK_BYTES,
    Entry,
    Profile,
    check_errors,
    check_results,
    check_stack_bytes,
    make_profile,
    note_source_line,
    optional_argument,
    with_profile,
)
from autobatch_runtime import common
from autobatch_runtime.common import call as _call
from autobatch_runtime import RUNTIME_VERSION, require  # noqa: F401 (rt.require)
from autobatch_runtime.freshness import check_fresh  # noqa: F401 (rt.check_fresh)
from autobatch_runtime.builtins_tensorflow import *  # noqa: F401,F403 - rt.py_*: Python's builtins per example


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


def take(array, items):
    """Per example: array[b][items] (see `index_positions`): one gather."""
    array = tf.convert_to_tensor(array)
    positions = index_positions(tf.shape(array)[0], array.shape[1:], items)
    return tf.gather_nd(array, positions)


def stack_items(items):
    """A tuple of like per-example arrays side by side, for indexing it per
    example (`gaps[k]`): [batch, len(items), ...]."""
    return tf.stack([tf.convert_to_tensor(v) for v in items], axis=1)


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
    positions = index_positions(tf.shape(array)[0], array.shape[1:], items)
    value = tf.broadcast_to(tf.cast(value, array.dtype), tf.shape(positions)[:-1])
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


def busiest_first(state):
    """Whether the loop runs the block most examples wait at (else the
    lowest-numbered pending block): when a register holds per-example vectors.

    Any order of blocks gives every example the same results (a block
    changes only the examples at it); the order sets how many iterations
    the batch takes.  The lowest pending block first starves the examples
    at later blocks once examples drift apart: NUTS on Neal's funnel, 256
    chains each at its own place in its own tree, took 120322 iterations for
    20 transitions, against 75950 (and 0.66x the time) with the busiest
    block first, where stragglers wait for the others to come round and
    then move with them.  Counting the examples at each block costs
    [batch, blocks] compares per iteration: little beside a block that moves
    per-example vectors, but as much as a whole block of scalar operations
    (fib over 4096 examples under XLA: 53 against 44 ms, in as many
    iterations), so programs of scalars keep the lowest block.  A rule of
    the state's shapes alone, so every backend runs the same blocks.
    """
    return any(x.shape.rank > 1 for x in state)


# Programs of at most this many blocks count the examples at each block by
# one [blocks, batch] compare (XLA reduces rows faster than it scatters);
# larger ones by a scatter-add over the batch, which stays O(batch).
COMPARE_BLOCKS = 64


def next_block(pc, halt, busiest):
    """The block the loop runs next ([] int32; `halt` once no example waits).

    pc: [batch] int32.  `busiest` (see `busiest_first`): the block the most
    examples wait at, the lowest of equals (so examples in step run in the
    same order either way); else the lowest block any example waits at.
    """
    if not busiest:
        return tf.reduce_min(pc)
    # Constants, not ops: the program traces this once per block loop.
    blocks = np.arange(halt, dtype=pc.dtype.as_numpy_dtype)
    weight = np.int64(halt + 1)
    if halt <= COMPARE_BLOCKS:
        # [halt, batch] -> [halt]: each block's waiting examples, as weights
        at = tf.equal(tf.constant(blocks[:, None]), pc)
        weighted = tf.reduce_sum(tf.where(at, weight, np.int64(0)), 1)
    else:
        # [batch] -> [halt + 1] counts, the halted at the end: O(batch), not
        # O(batch x blocks), for programs of many blocks
        ones = tf.ones_like(pc, tf.int64)
        weighted = tf.math.unsorted_segment_sum(ones, pc, halt + 1)[:halt] * weight
    # One maximum finds both the count and, among equal counts, the lower
    # block.  int64: count x (halt + 1) passes int32's range at about two
    # million examples of a thousand-block program.
    score = tf.reduce_max(weighted + tf.constant((halt - blocks).astype(np.int64)))
    chosen = tf.where(score > halt, halt - score % weight, np.int64(halt))
    return tf.cast(chosen, pc.dtype)


def sweeps(state, stacks, writes):
    """Whether XLA runs this program as a sweep (see `run`) or a switch.

    A sweep where a switch would copy large arrays: any per-example vector
    register or stack, or any stack a block writes.  Programs with neither
    (loops and tail calls over scalars) are faster under the switch
    (over 4096 examples, Collatz 4.0 against 4.7 ms, gcd 13.9 against 18.5).
    """
    vectors = any(x.shape.rank > 1 for x in state) or any(s.shape.rank > 2 for s in stacks)
    return vectors or any(written for _, written in writes or ())


def run(
    state,
    stacks,
    blocks,
    looping=(),
    writes=None,
    *,
    xla=False,
    profile=False,
    max_iterations=None,
    parallel_iterations=10,
    tier=None,
):
    """Runs the program until every example has halted (pc == len(blocks)).

    Each iteration runs, for the whole batch, one block that some example is
    waiting at (`next_block`: the lowest-numbered, or with per-example
    vectors the busiest); the block changes only the examples at it.  How,
    depends on the backend:

    - TF graph: one `switch_case` over the blocks; each branch applies its
      own stack writes and passes the other stacks through (graph mode pays
      per op, not per copy).
    - XLA, when a block writes a stack or a register holds a per-example
      vector: a *sweep*.  Every block is a while loop that runs while it is
      the block chosen next, one after the other in block order; the
      state and the stacks are its loop variables, which XLA updates in
      place, and its writes are scatters into them.  A switch copies every
      array its branches pass through, and a stack written after it under
      a `cond` is copied whenever the `cond` does not write it: fib over
      4096 examples took 142 ms as a sweep against 189 ms as a switch, and
      NUTS at 100-d and 256 chains paid about half its run time in copies.
      The sweep runs the same blocks in the same order as the switch (when
      the block chosen next is an earlier one, the sweep ends, and the next
      trip starts there).
    - XLA otherwise (per-example scalars, no stack written): the switch,
      which costs less than a sweep's chain of loops when there is nothing
      to copy.

    With `profile`, counters ride along in the loop (no host callbacks, so
    this works under XLA): runs and active examples per block [blocks] and
    the deepest call; otherwise the counters are None and cost nothing.

    `looping` names blocks that can jump to themselves, write no stack and
    otherwise jump forward (a rotated loop body): under XLA's switch such a
    block repeats in an inner loop for as long as any example waits at it
    (it stays the earliest pending block), the same sequence of blocks
    without a dispatch per trip.  (The sweep does this for every block.)

    `max_iterations` (None: no limit) stops the loop after that many
    iterations, examples still pending (the caller raises): the count is
    the while loop's own `maximum_iterations` counter, so None traces the
    loop exactly as without a limit.  With a limit every trip is counted, so
    blocks run one per trip, as they do under `profile` with the switch.

    `writes[k]`: the state fields and the stacks block k writes, as the
    generated module lists them (a string of names: common.block_writes).
    A block's loop in the sweep carries only those, and reads the rest from
    outside: NUTS's blocks write a fifth of
    its hundred fields, and carrying all of them through eight loops made
    the first call (tracing, XLA's compile) about 1.4x as long.

    `parallel_iterations` goes to the outer `tf.while_loop` (the
    predecessor's `TensorFlowBackend(while_parallel_iterations=...)`): 1
    runs iterations strictly one after the other, which keeps stateful
    random ops in a primitive reproducible under a seed.

    `tier` (an `EagerTier`, given by `compiled` to an eager call): the loop
    runs op by op, and hands what is left to a traced loop once the tier's
    budget of iterations is spent (`run_op_by_op`).
    """
    if tier is not None:
        return run_op_by_op(state, stacks, blocks, looping, parallel_iterations, tier)
    halt = len(blocks)
    writes = common.block_writes(writes)
    sweeping = xla and sweeps(state, stacks, writes)
    choose = functools.partial(next_block, halt=halt, busiest=busiest_first(state))

    def pending(state, stacks, counters):
        return tf.reduce_any(state.pc < halt)

    def state_after(index, block, state, stacks):
        """The switch's branch under XLA: the block, repeated if it loops.

        It returns its own index beside the state, which nothing reads.  With
        the state as the switch's only output, XLA (TF 2.21) copied every
        register the branches pass through twice per trip, in the branch and
        after the switch: gcd over 4096 examples took 19.7 ms against 12.9,
        even/odd 4.3 against 3.5.  The unused output is removed when XLA
        compiles, and the copies are gone with it.
        """
        new_state, writes = block(state, stacks)
        assert not writes, "a block that writes a stack runs in a sweep"
        if index in looping and not profile and max_iterations is None:

            def again(state):
                # Its other exits go forward: no example is at an earlier block,
                # and one compare per example is cheaper than a minimum (Collatz
                # over 4096 examples: 5.2 against 6.6 ms).
                return tf.reduce_any(tf.equal(state.pc, index))

            def repeat(state):
                return [block(state, stacks)[0]]

            new_state = tf.while_loop(again, repeat, [new_state])[0]
        return new_state, tf.constant(index)

    def writes_applied(block, state, stacks):
        new_state, writes = block(state, stacks)
        if xla:
            writes = {name: after_reads(w, new_state.pc) for name, w in writes.items()}
        applied = {name: apply_write(getattr(stacks, name), w, xla) for name, w in writes.items()}
        return new_state, stacks._replace(**applied)

    def counted(index, state, counters):
        """The profile counters after block `index` runs on `state`."""
        if not profile:
            return counters
        runs, active, deepest = counters
        at_block = tf.one_hot(index, halt, dtype=tf.int64)
        waiting = tf.reduce_sum(tf.cast(tf.equal(state.pc, index), tf.int64))
        deepest = tf.maximum(deepest, tf.reduce_max(state.return_sp))
        return runs + at_block, active + at_block * waiting, deepest

    def sweep(state, stacks, counters, unlimited):
        chosen = choose(state.pc)  # [], carried so each test is one compare
        ran = tf.less(chosen, 0)  # False: no block has run in this trip yet
        for k, block in enumerate(blocks):
            fields, written = writes[k] if writes else (state._fields, stacks._fields)

            def runs(chosen, ran, carried, counters, k=k):
                at = tf.equal(chosen, k)
                if max_iterations is None:
                    return at
                return tf.logical_and(at, tf.logical_not(ran))  # one block per counted trip

            def body(chosen, ran, carried, counters, k=k, block=block, fields=fields,
                     written=written, before=(state, stacks)):
                state, stacks = merged(before, fields, written, carried)
                counters = counted(k, state, counters)
                state, stacks = writes_applied(block, state, stacks)
                carried = carried_of(state, stacks, fields, written)
                return choose(state.pc), tf.constant(True), carried, counters

            chosen, ran, carried, counters = tf.while_loop(
                runs,
                body,
                (chosen, ran, carried_of(state, stacks, fields, written), counters),
                maximum_iterations=unlimited,
            )
            state, stacks = merged((state, stacks), fields, written, carried)
        return state, stacks, counters

    def step(state, stacks, counters, index):
        counters = counted(index, state, counters)
        if not xla:
            branches = [functools.partial(writes_applied, block, state, stacks) for block in blocks]
            state, stacks = tf.switch_case(index, branches)
        else:
            branches = [
                functools.partial(state_after, k, block, state, stacks)
                for k, block in enumerate(blocks)
            ]
            state, _ = tf.switch_case(index, branches)
        return state, stacks, counters, choose(state.pc)

    counters = ()
    if profile:
        zeros_ = tf.zeros([halt], tf.int64)
        counters = (zeros_, zeros_, tf.constant(0, tf.int32))
    if not sweeping:
        # The loop carries the block to run next, the minimum it needs anyway,
        # so its test is one scalar compare, not another pass over pc (fib and
        # Collatz over 4096 examples: 3-4% faster).
        state, stacks, counters, _ = tf.while_loop(
            lambda state, stacks, counters, index: index < halt,
            step,
            (state, stacks, counters, choose(state.pc)),
            maximum_iterations=max_iterations,
            parallel_iterations=parallel_iterations,
        )
    else:
        limits = (2**31 - 1, 2**31 - 1 if max_iterations is None else max_iterations)
        (state, stacks, counters), (unlimited, limit) = hide_constants(
            ((state, stacks, counters), tuple(tf.cast(n, tf.int32) for n in limits))
        )
        state, stacks, counters = tf.while_loop(
            pending,
            lambda state, stacks, counters: sweep(state, stacks, counters, unlimited),
            (state, stacks, counters),
            maximum_iterations=limit,
            parallel_iterations=parallel_iterations,
        )
    return state, stacks, counters if profile else None


# An eager call of a program not traced yet runs op by op for up to this
# many loop iterations per block of the program before it traces the rest
# (see `compiled`).  Tracing a block costs about as much as running it op
# by op this many times (TFP's NUTS client, a 13-block program: about 5 s
# to trace and run its graph the first time, 20 ms an iteration op by op),
# so a call that turns out long pays at most about twice the better of the
# two, and a short one never pays for a trace.
TRIPS_PER_BLOCK = 16
# A program whose first calls all ended op by op within their budget is
# traced at its next call: this many calls show that it is called again and
# again, and a trace then pays for itself.
EAGER_CALLS = 2


class EagerTier:
    """One eager call's plan (see `compiled`): op by op for up to `budget`
    loop iterations (None: no limit; "auto": TRIPS_PER_BLOCK per block of
    the program), then the traced rest of the loop; `continued` records
    whether the call needed it."""

    def __init__(self, budget):
        self.budget = budget
        self.continued = False


def run_op_by_op(state, stacks, blocks, looping, parallel_iterations, tier):
    """The loop of `run` in Python, one block per iteration, each executed
    eagerly (only the chosen block's ops run, and nothing is traced); once
    `tier.budget` iterations have run with examples still pending, the state
    and stacks go to `continuation`, the rest of the loop traced as a graph.

    The blocks are the same functions the traced loop runs, chosen in the
    same order (`next_block`), so an example's result does not depend on
    where the loop changed hands.
    """
    halt = len(blocks)
    choose = functools.partial(next_block, halt=halt, busiest=busiest_first(state))
    budget = TRIPS_PER_BLOCK * halt if tier.budget == "auto" else tier.budget
    index = int(choose(state.pc))
    iterations = 0
    while index < halt:
        if budget is not None and iterations >= budget:
            tier.continued = True
            rest = continuation(state, stacks, blocks, looping, parallel_iterations)
            state, stacks = rest(state, stacks)
            return state, stacks, None
        state, writes = blocks[index](state, stacks)
        applied = {name: apply_write(getattr(stacks, name), w) for name, w in writes.items()}
        stacks = stacks._replace(**applied)
        index = int(choose(state.pc))
        iterations += 1
    return state, stacks, None


def continuation(state, stacks, blocks, looping, parallel_iterations):
    """The graph loop of `run` (TF graph mode, no XLA) as a concrete function
    of the state and stacks: where an eager call goes on once its op-by-op
    budget is spent.  Traced once per program and shapes (the batch size
    left open: axis 0 of the state, axis 1 of the stacks) and reused by the
    program's later calls, which start it at their first iteration."""

    def spec(leaf, batch_axis):
        shape = leaf.shape.as_list()
        shape[batch_axis] = None
        return tf.TensorSpec(shape, leaf.dtype)

    signature = (
        tf.nest.map_structure(lambda leaf: spec(leaf, 0), state),
        tf.nest.map_structure(lambda leaf: spec(leaf, 1), stacks),
    )
    events = tuple((s.dtype, tuple(s.shape)) for s in tf.nest.flatten(signature))
    key = ("continuation", tuple(blocks), tuple(looping), parallel_iterations, events)
    if key not in _COMPILED:

        def rest(state, stacks):
            state, stacks, _ = run(
                state, stacks, blocks, looping, parallel_iterations=parallel_iterations
            )
            return state, stacks

        function = tf.function(rest, input_signature=signature, autograph=False)
        _COMPILED[key] = function.get_concrete_function()
    return _COMPILED[key]


_COMPILED = {}
_EAGER_CALLS = {}  # program key -> [calls run op by op, whether one continued]


def release_compiled():
    """Forgets every program traced so far, so that its graph and XLA code
    can be freed.

    The cache holds a concrete function per program, mode, limits and
    per-example shapes for the life of the process; a process that builds
    many programs (a test suite, a notebook re-running its cells) grows
    without bound otherwise.  The next call of each program traces it again.
    """
    _COMPILED.clear()
    _EAGER_CALLS.clear()


def compiled(
    program,
    xla,
    profile,
    leaves,
    max_stack_depth,
    max_iterations,
    parallel_iterations=10,
    trace_after=None,
):
    """`program` traced for these leaves: a function of the leaves alone.

    Traced once per program, mode, limits and leaf signature (dtypes and
    per-example shapes; the batch size is left open, so a new batch size
    compiles under XLA but is not traced again).  The result is a concrete
    function: a call hands it the tensors and nothing else.  tf.function's
    own dispatch inspects every argument of every call, which cost about
    200 us a call here (gcd on one example under XLA: 316 against 114 us),
    more than the whole loop at small batch sizes.

    In a TF1 graph (`legacy_graph`) the program is traced for that graph
    alone, and the cache is neither read nor written: a function traced
    elsewhere may hold another graph's tensors or another seed.

    Called eagerly (graph mode, no XLA, no profile or iteration limit), a
    program not traced yet runs op by op first (`eager_call`): tracing a
    program of a few thousand ops takes seconds, which a one-off call of a
    small batch (one NUTS step of a new kernel) never earns back.
    `trace_after` is the op-by-op budget in loop iterations (None: a number
    that grows with the program, see TRIPS_PER_BLOCK); 0 traces at once;
    with `tf.config.run_functions_eagerly(True)` nothing is traced.
    """
    events = tuple((leaf.dtype, tuple(leaf.shape)[1:]) for leaf in leaves)
    key = (
        program,
        bool(xla),
        bool(profile),
        max_stack_depth,
        max_iterations,
        parallel_iterations,
        events,
    )
    legacy = legacy_graph()
    eager = not (legacy or xla or profile or max_iterations is not None) and tf.executing_eagerly()
    if eager and tf.config.functions_run_eagerly():  # the user's debugging switch: never trace
        return functools.partial(
            eager_call, program, [0, False], None, max_stack_depth, parallel_iterations
        )
    if eager and trace_after != 0 and key not in _COMPILED:
        calls = _EAGER_CALLS.setdefault(key, [0, False])
        if calls[1] or calls[0] < EAGER_CALLS:
            budget = "auto" if trace_after is None else trace_after
            return functools.partial(
                eager_call, program, calls, budget, max_stack_depth, parallel_iterations
            )
    if legacy or key not in _COMPILED:
        signature = [tf.TensorSpec([None, *event], dtype) for dtype, event in events]

        def traced(*leaves):
            return program(
                *leaves,
                max_stack_depth=max_stack_depth,
                max_iterations=max_iterations,
                xla=bool(xla),
                profile=bool(profile),
                parallel_iterations=parallel_iterations,
            )

        if legacy:
            return traced_outside_legacy_graph(traced, signature, bool(xla))
        function = tf.function(
            traced, input_signature=signature, jit_compile=bool(xla), autograph=False
        )
        _COMPILED[key] = function.get_concrete_function()
    return _COMPILED[key]


def eager_call(program, calls, budget, max_stack_depth, parallel_iterations, *leaves):
    """One eager call of `program` op by op (see `compiled`), for up to
    `budget` loop iterations, then the traced rest of the loop.

    `calls`: [calls so far, whether one of them needed the traced rest].
    Once one has, the program has shown it runs long: later calls skip the
    op-by-op start (budget 0) and run the traced loop from the first
    iteration, which is traced once for the program's shapes, so the first
    call's trace serves them all.
    """
    tier = EagerTier(0 if calls[1] and budget is not None else budget)
    result = program(
        *leaves,
        max_stack_depth=max_stack_depth,
        max_iterations=None,
        xla=False,
        profile=False,
        parallel_iterations=parallel_iterations,
        tier=tier,
    )
    calls[0] += 1
    calls[1] = calls[1] or tier.continued
    return result


def legacy_graph():
    """Whether this call builds a TF1 graph (a `tf.compat.v1` Graph run by a
    Session), directly or inside a control-flow function of one.

    There a `Tensor`'s `==` and `!=` are Python's identity tests, not
    comparisons per element: `state.pc == 0` in every generated block, and
    each `==` of the user's code, would be a Python False, no example would
    ever leave its block, and the session's loop would never end.
    """
    return not tf.compat.v1.executing_eagerly_outside_functions()


def traced_outside_legacy_graph(function, signature, xla=False):
    """`function` as a concrete function traced with eager execution as its
    outermost context, so that `==` compares per element, for a call op in
    the TF1 graph being built (a session runs it).

    Tensors of the user's graph that `function` reads (a closed-over
    target's parameters) are captured from that graph, so the result serves
    that graph only: callers do not cache it.  The user's graph-level seed
    (`tf.compat.v1.set_random_seed`) is carried into the trace, so seeded
    random primitives draw as they would in the user's graph.
    """
    try:
        from tensorflow.python.eager import context
    except ImportError:  # a TensorFlow without it: say so at once, never hang
        raise RuntimeError(
            "batched calls in TF1 graph mode (tf.compat.v1 Graph and Session) need "
            "tensorflow.python.eager.context, which this TensorFlow lacks; call the "
            "function eagerly or inside tf.function"
        ) from None
    seed = tf.compat.v1.get_default_graph().seed

    def seeded(*leaves):
        tf.compat.v1.set_random_seed(seed)
        return function(*leaves)

    with context.eager_mode():
        return tf.function(
            seeded, input_signature=signature, jit_compile=xla, autograph=False
        ).get_concrete_function()


def static_batch(leaves, result):
    """The results, with the arguments' batch size in their static shapes.

    The program is traced once for any batch size, so inside the user's
    graph its results have shape [None, ...] even where the arguments' batch
    size is known; a `tf.while_loop` of the user's (TFP's `sample_chain`)
    then refuses a state that enters as [16, 3] and comes back as [None, 3].
    """
    if tf.executing_eagerly() or not leaves or leaves[0].shape[0] is None:
        return result
    for leaf in result:
        leaf.set_shape([leaves[0].shape[0]] + leaf.shape.as_list()[1:])
    return result


def checked(function, result, errors, pc, error_lines, max_stack_depth, max_iterations):
    """`result`, once no example stopped early; else the error.

    Called eagerly (the usual call), the loop's final state is read and an
    early stop raises StackOverflowError, IndexError or IterationLimitError.
    Called inside the user's own `tf.function`, the values are symbolic and
    nothing can be read yet: each check becomes a `tf.debugging.Assert` that
    the results depend on, so running the graph raises
    `tf.errors.InvalidArgumentError` with the same words (the error's name,
    the examples, the source line).  XLA drops Assert ops, so inside a
    `jit_compile=True` function no check can stop the computation: the
    call warns once, when it is traced, and returns what the examples hold.
    """
    if tf.executing_eagerly():
        check_results(
            function,
            [e.numpy() for e in errors],
            pc.numpy(),
            error_lines,
            max_stack_depth,
            max_iterations,
        )
        return result
    if in_xla_function():
        warnings.warn(
            f"{function}: called inside an XLA-compiled function (jit_compile=True), "
            "where errors cannot stop the computation (XLA drops assertions): an "
            "example that overflows its stack, indexes out of range or runs past "
            "max_iterations would return its last values unnoticed. Call it outside "
            "jit_compile with xla=True (errors are then raised), or pass "
            "backend=TensorFlowBackend(safety_checks=False) to accept this",
            stacklevel=4,
        )
        return result
    block_lines = tf.constant(list(error_lines[0]))
    asserts = [
        assert_none_stopped(
            function,
            errors[0],
            block_lines,
            "StackOverflowError",
            f"recursed deeper than max_stack_depth={max_stack_depth} at",
            "; call again with a larger max_stack_depth",
        )
    ]
    if len(errors) > 1:
        asserts.append(
            assert_none_stopped(
                function,
                errors[1],
                tf.constant(list(error_lines[1])),
                "IndexError",
                "indexed out of range at",
                "; each stopped there, as it would on its own",
            )
        )
    if max_iterations is not None:
        halt = len(error_lines[0])
        earliest = tf.reduce_min(tf.concat([pc, [halt]], 0))
        waiting = tf.logical_and(tf.equal(pc, earliest), pc < halt)
        running = tf.where(waiting, earliest, -1)
        asserts.append(
            assert_none_stopped(
                function,
                running,
                block_lines,
                "IterationLimitError",
                f"still running after max_iterations={max_iterations} loop iterations, at",
                "; a loop that never ends? If they only need longer, call again with a "
                "larger max_iterations",
            )
        )
    with tf.control_dependencies(asserts):
        return tuple(tf.identity(leaf) for leaf in result)


def assert_none_stopped(function, stopped_at, lines, error, words, hint):
    """An Assert op that fails when some example stopped (`stopped_at` >= 0).

    stopped_at: [batch] int32, the block or subscript index where each
    example stopped, or -1; lines: the source line of each index, a string
    tensor.  The message names the error, up to ten examples and the line
    where the first of them stopped.
    """
    stopped = stopped_at >= 0
    examples = tf.reshape(tf.where(stopped), [-1])[:10]
    first = tf.gather(stopped_at, examples[:1])
    where = tf.gather(lines, tf.clip_by_value(first, 0, tf.size(lines) - 1))
    return tf.debugging.Assert(
        tf.logical_not(tf.reduce_any(stopped)),
        [f"{function}: {error}: example(s)", examples, words, where, hint],
        summarize=10,
    )


def in_xla_function():
    """Whether the graph being built is compiled by XLA (a jit_compile function)."""
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # a TensorFlow without the module: assume not
        return False
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def run_stackless(program, leaves, xla):
    """A stackless program on all examples: eagerly, or under XLA if asked
    (in a TF1 graph, traced as `compiled` traces, for the same reason)."""

    def whole_batch(*leaves):
        return program(*leaves, tf.ones([batch_size(*leaves)], tf.bool))

    if legacy_graph():
        signature = [tf.TensorSpec([None, *leaf.shape[1:]], leaf.dtype) for leaf in leaves]
        return traced_outside_legacy_graph(whole_batch, signature, bool(xla))(*leaves)
    if not xla:
        return whole_batch(*leaves)
    key = (program, "stackless")
    if key not in _COMPILED:
        _COMPILED[key] = tf.function(whole_batch, jit_compile=True, autograph=False)
    return _COMPILED[key](*leaves)


def check_stackless(function, recursive):
    """Recursion in stackless mode is the host's: it cannot be traced into a graph."""
    if recursive and not tf.executing_eagerly():
        raise RuntimeError(
            f"{function}: stackless mode runs recursive programs eagerly (the host's "
            "recursion is the stack); call it outside tf.function and without "
            "xla=True, or drop stackless=True"
        )


def to_leaf(function, name, value, dtype, event_shape):
    """One argument leaf as a [batch, *event] tensor of `dtype`, or a clear error."""
    value = common.python_numbers(function, name, value, dtype)
    if isinstance(value, np.ndarray) and value.dtype == object:
        raise TypeError(f"{function}: argument {name} is an object array, not numbers")
    value = tf.convert_to_tensor(value)
    if value.dtype.as_numpy_dtype != np.dtype(dtype):
        raise TypeError(
            f"{function}: argument {name} has dtype {value.dtype.name}; this "
            f"program was generated for {np.dtype(dtype).name} (a call through "
            "its Context builds the program for the new signature)"
        )
    if value.shape.rank == len(event_shape):
        value = value[None]  # a single example: batch of one
    if not common.fits(tuple(value.shape[1:]), event_shape):
        raise TypeError(
            f"{function}: argument {name} has per-example shape "
            f"{tuple(value.shape[1:])}; expected {common.shape_text(event_shape)}"
        )
    return value


def broadcast_batch(function, names, leaves):
    """Broadcasts size-1 batch dimensions; all sizes must be equal or 1.

    Inside the user's `tf.function` a batch size may be unknown until the
    graph runs: the leaves are then broadcast by `tf.broadcast_to`, which
    raises InvalidArgumentError at run time if the sizes do not fit.
    """
    sizes = [leaf.shape[0] for leaf in leaves]
    if any(s is None for s in sizes):
        batch = tf.reduce_max(tf.stack([tf.shape(leaf)[0] for leaf in leaves]))
        return [
            tf.broadcast_to(leaf, tf.concat([[batch], tf.shape(leaf)[1:]], 0))
            for leaf in leaves
        ]
    others = sorted(set(sizes) - {1})
    batch = others[0] if others else 1
    if len(others) > 1:
        described = ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))
        raise ValueError(
            f"{function}: batch sizes must be equal or 1, got {described}"
        )
    return [
        leaf if s == batch else tf.repeat(leaf, batch, axis=0)
        for leaf, s in zip(leaves, sizes)
    ]


def call(entry, values, **options):
    """Runs a generated program on a batch with this backend's helpers
    (see autobatch_runtime.common.call): (result leaves, Profile or None)."""
    return _call(sys.modules[__name__], entry, values, **options)
