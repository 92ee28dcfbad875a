"""Runtime helpers of a generated TensorFlow module (copied into it verbatim).

Everything below the imports is copied into each generated `*_tf.py`, so a
generated module needs TensorFlow and NumPy only.  The same helper names exist
in `runtime_np.py`, which is why block functions read the same for both
backends.  Shapes: `batch` is the number of examples, `depth` the stack depth,
`event` a variable's per-example shape.
"""

import functools

import numpy as np
import tensorflow as tf

def select(active, new, old):
    """Per example: `new` where `active`, else `old`.

    active: [batch] bool; old: [batch, *event]; new: broadcastable to old.
    """
    old = tf.convert_to_tensor(old)
    new = tf.cast(new, old.dtype)
    mask = tf.reshape(active, [-1] + [1] * (old.shape.rank - 1))
    return tf.where(mask, new, old)


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
    """`value` where `active`, else 1: no integer division by zero in idle lanes."""
    return tf.where(active, value, tf.ones_like(value))


def cast(value, dtype):
    return tf.cast(value, dtype)


def zeros(leading, shape, dtype):
    """A [*leading, *shape] array of zeros (False for bool)."""
    return tf.zeros([*leading, *shape], dtype)


def batch_size(*leaves):
    return tf.shape(leaves[0])[0] if leaves else 1


def read(stack, index):
    """stack[index[b], b] for every example b: [batch, *event].

    Indices are clamped: XLA would clamp an out-of-range gather silently anyway.
    """
    index = tf.clip_by_value(index, 0, stack.shape[0] - 1)
    examples = tf.range(tf.shape(index)[0])
    return tf.gather_nd(stack, tf.stack([index, examples], axis=1))


def push(stack, sp, value, active):
    """Pushes `value` for every active example: (new sp, write, overflow).

    stack: [depth, batch, *event] (read for its shape only); sp: [batch]
    int32, the next free slot; value: [batch, *event] or broadcastable.  The
    write (mask [batch], index [batch], value [batch, *event]) is applied by
    `run` after the block; `overflow`: [batch] bool, the active examples whose
    stack was full (nothing is written for them).
    """
    fits = sp < stack.shape[0]
    mask = tf.logical_and(active, fits)
    value = tf.broadcast_to(tf.cast(value, stack.dtype), tf.shape(stack)[1:])
    new_sp = tf.where(mask, sp + 1, sp)
    return new_sp, (mask, sp, value), tf.logical_and(active, tf.logical_not(fits))


def stack_writes(stacks, **writes):
    """The block's writes by stack name (`run` applies them)."""
    return writes


def no_write(stack):
    """A write that changes nothing (mask all False), for a block that has none."""
    # [batch, *event]: static under XLA (each signature is traced apart), which
    # keeps tracing cheap; graph mode may leave the batch unknown.
    shape = stack.shape[1:] if stack.shape.is_fully_defined() else tf.shape(stack)[1:]
    return (
        tf.zeros(shape[:1], tf.bool),
        tf.zeros(shape[:1], tf.int32),
        tf.zeros(shape, stack.dtype),
    )


def apply_write(stack, write):
    """stack[index[b], b] = value[b] where mask[b].

    Per-example scalars: a one-hot `where` over [depth, batch], one fused
    elementwise op, which beat gather + scatter for shallow stacks under XLA
    on this CPU (fib over 4096 examples: 572 ms against 640 ms).  Per-example
    vectors: a scatter of one row per example, which touches batch x event
    values instead of depth x batch x event.
    """
    mask, index, value = write
    depth = stack.shape[0]
    if stack.shape.rank > 2:
        # [batch, 2] (level, example) pairs; idle examples rewrite their old row.
        at = tf.stack([tf.clip_by_value(index, 0, depth - 1), tf.range(tf.shape(index)[0])], 1)
        keep = tf.reshape(mask, [-1] + [1] * (stack.shape.rank - 2))  # [batch, 1...]
        rows = tf.where(keep, value, tf.gather_nd(stack, at))
        return tf.tensor_scatter_nd_update(stack, at, rows)
    hit = tf.logical_and(tf.equal(tf.range(depth)[:, None], index[None, :]), mask[None, :])
    hit = tf.reshape(hit, [depth, -1] + [1] * (stack.shape.rank - 2))  # [depth, batch, 1...]
    return tf.where(hit, value[None], stack)


def pop(stack, sp, active):
    """Pops every active example's top: (value [batch, *event], new sp)."""
    sp = tf.where(active, sp - 1, sp)
    return read(stack, sp), sp


def peek(stack, sp):
    """Every example's top, left on the stack: [batch, *event]."""
    return read(stack, sp - 1)


def pop_return(stack, sp, active, halt):
    """Return: the block each active example resumes at, and the new pointer.

    An example whose return stack is empty returns from the entry function:
    it halts.
    """
    empty = sp <= 0
    target, sp = pop(stack, sp, tf.logical_and(active, tf.logical_not(empty)))
    return tf.where(empty, halt, target), sp


class RegisterFiles:
    """Per-example vector registers of the XLA loop, kept in register files.

    XLA copies every array that a `switch_case` branch returns unchanged, so
    with one loop-state array per vector register each iteration paid a copy
    of every vector register, whatever its block wrote (NUTS at 100-d and 256
    chains: ~30 copies of [256, 100] per iteration, half the run time).
    Here the vector registers of one dtype and event shape share a file
    [registers + 1, batch, *event] that the branches read but do not return;
    a branch returns only the rows its block writes (`slots`, padded to the
    most any block writes with zeros bound for the spare last row), and
    `write_back` stores them with in-place row updates after the switch.

    `vector_writes[k]`: the state fields (vectors) that block k writes, as
    the generated module lists them.  Scalar registers ([batch]) stay in the
    state: copying one costs about what a row update would.
    """

    def __init__(self, state, vector_writes):
        groups = {}  # (dtype, event shape) -> [field]
        for name in state._fields:
            value = getattr(state, name)
            if value.shape.rank > 1:
                groups.setdefault((value.dtype.name, tuple(value.shape[1:])), []).append(name)
        self.groups = list(groups.values())
        self.place = {name: (g, row) for g, names in enumerate(self.groups) for row, name in enumerate(names)}
        self.scalars = [name for name in state._fields if name not in self.place]
        self.state_type = type(state)
        # rows[g][k]: the rows block k writes in file g, padded with the spare row
        self.rows = []
        for names in self.groups:
            written = [[row for row, name in enumerate(names) if name in w] for w in vector_writes]
            slots = max(len(w) for w in written)
            self.rows.append([w + [len(names)] * (slots - len(w)) for w in written])

    def pack(self, state):
        """(scalar fields, files): files[g] is [registers + 1, batch, *event]."""
        files = []
        for names in self.groups:
            values = [getattr(state, name) for name in names]
            files.append(tf.stack(values + [tf.zeros_like(values[0])]))
        return tuple(getattr(state, name) for name in self.scalars), tuple(files)

    def view(self, scalars, files):
        """The state a block reads: vector fields are rows of their files."""
        fields = dict(zip(self.scalars, scalars))
        rows = [tf.unstack(file) for file in files]  # one op per file: cheap to trace
        for name, (g, row) in self.place.items():
            fields[name] = rows[g][row]
        return self.state_type(**fields)

    def slots(self, k, new_state, files):
        """The rows block k wrote, per file: [slots, batch, *event] as a tuple."""
        out = []
        for g, names in enumerate(self.groups):
            spare = tf.zeros(files[g].shape[1:], files[g].dtype)  # static under XLA
            out.append(tuple(spare if row == len(names) else getattr(new_state, names[row]) for row in self.rows[g][k]))
        return tuple(out)

    def write_back(self, files, index, slots):
        """Each slot into its row of its file; `index` is the block that ran."""
        out = []
        for g, file in enumerate(files):
            rows = tf.gather(tf.constant(self.rows[g], tf.int32), index)  # [slots]
            rows = tf.reshape(rows, [-1, 1, 1])  # [slots, 1, 1]: one index per update
            for j, value in enumerate(slots[g]):
                # one row: XLA makes this an in-place dynamic-update-slice
                file = tf.tensor_scatter_nd_update(file, rows[j], value[None])
            out.append(file)
        return tuple(out)


def run(state, stacks, blocks, xla, profile, looping=(), max_iterations=None, vector_writes=None):
    """Runs the program until every example has halted (pc == len(blocks)).

    Each iteration runs, for the whole batch, the lowest-numbered block that
    some example is waiting at; the block changes only the examples at it.
    Under XLA the large stack arrays must not be outputs of the
    `switch_case` (XLA would copy them every iteration): branches return
    their writes, padded with no-ops, and each stack is written after it,
    under a `cond` on whether the block that ran writes that stack at all.
    Graph mode pays per op instead, so there each branch applies its own
    writes and passes the other stacks through.

    With `profile`, counters ride along in the loop (no host callbacks, so
    this works under XLA): runs and active examples per block [blocks] and
    the deepest call; otherwise the counters are None and cost nothing.

    `looping` names blocks that can jump to themselves and write no stack (a
    rotated loop body): under XLA such a block repeats in an inner loop for
    as long as it stays the earliest pending block, the same sequence of
    blocks without a dispatch per trip.

    `max_iterations` (None: no limit) stops the loop after that many
    iterations, examples still pending (the caller raises): the count is
    the while loop's own `maximum_iterations` counter, so None traces the
    loop exactly as without a limit.  With a limit every trip is counted, so
    looping blocks dispatch per trip as they do under `profile`.

    `vector_writes` (the vector fields each block writes) moves vector
    registers into `RegisterFiles` under XLA.
    """
    halt = len(blocks)
    files = RegisterFiles(state, vector_writes) if xla and vector_writes else None
    if files and not files.groups:
        files = None  # no per-example vectors: the state is carried as it is

    def unpacked(carried):
        """The state NamedTuple from what the loop carries."""
        return files.view(*carried) if files else carried

    def pending(carried, stacks, counters):
        return tf.reduce_any(unpacked(carried).pc < halt)

    writers = {name: [] for name in stacks._fields}  # block indices, filled while tracing

    def writes_after(index, block, carried, stacks):
        state = unpacked(carried)
        new_state, writes = block(state, stacks)
        if index in looping and not profile and max_iterations is None and not writes:

            def again(state):
                return tf.equal(tf.reduce_min(state.pc), index)

            def repeat(state):
                return [block(state, stacks)[0]]

            new_state = tf.while_loop(again, repeat, [new_state])[0]
        for name in writes:
            writers[name].append(index)
        padded = [writes.get(name) or no_write(s) for name, s in zip(stacks._fields, stacks)]
        if files:
            scalars = tuple(getattr(new_state, name) for name in files.scalars)
            return scalars, files.slots(index, new_state, carried[1]), tuple(padded)
        return new_state, tuple(padded)

    def write_if_written(index, name, stack, write):
        """Only iterations whose block writes this stack pay for the write."""
        if not writers[name]:
            return stack
        written = tf.reduce_any(tf.equal(index, writers[name]))
        return tf.cond(written, lambda: apply_write(stack, write), lambda: stack)

    def writes_applied(block, state, stacks):
        new_state, writes = block(state, stacks)
        applied = {name: apply_write(getattr(stacks, name), w) for name, w in writes.items()}
        return new_state, stacks._replace(**applied)

    def step(carried, stacks, counters):
        state = unpacked(carried)
        index = tf.reduce_min(state.pc)
        if profile:
            runs, active, deepest = counters
            at_block = tf.one_hot(index, halt, dtype=tf.int64)
            waiting = tf.reduce_sum(tf.cast(tf.equal(state.pc, index), tf.int64))
            deepest = tf.maximum(deepest, tf.reduce_max(state.return_sp))
            counters = (runs + at_block, active + at_block * waiting, deepest)
        if not xla:
            branches = [functools.partial(writes_applied, block, state, stacks) for block in blocks]
            state, stacks = tf.switch_case(index, branches)
            return state, stacks, counters
        branches = [
            functools.partial(writes_after, k, block, carried, stacks)
            for k, block in enumerate(blocks)
        ]
        *result, writes = tf.switch_case(index, branches)
        if files:
            scalars, slots = result
            carried = scalars, files.write_back(carried[1], index, slots)
        else:
            carried = result[0]
        stacks = type(stacks)(
            *[write_if_written(index, name, s, w) for name, s, w in zip(stacks._fields, stacks, writes)]
        )
        return carried, stacks, counters

    counters = ()
    if profile:
        zeros_ = tf.zeros([halt], tf.int64)
        counters = (zeros_, zeros_, tf.constant(0, tf.int32))
    carried = files.pack(state) if files else state
    carried, stacks, counters = tf.while_loop(
        pending, step, (carried, stacks, counters), maximum_iterations=max_iterations
    )
    return unpacked(carried), stacks, counters if profile else None


_COMPILED = {}


def compiled(program, xla, profile=False):
    """`program` under tf.function (XLA when `xla`), traced once per signature."""
    key = (program, bool(xla), bool(profile))
    if key not in _COMPILED:
        traced = functools.partial(program, xla=bool(xla), profile=bool(profile))
        if xla:
            _COMPILED[key] = tf.function(traced, jit_compile=True, autograph=False)
        else:
            _COMPILED[key] = tf.function(traced, reduce_retracing=True, autograph=False)
    return _COMPILED[key]


def run_stackless(program, leaves, xla):
    """A stackless program on all examples: eagerly, or under XLA if asked."""
    if not xla:
        return program(*leaves, tf.ones([batch_size(*leaves)], tf.bool))
    key = (program, "stackless")
    if key not in _COMPILED:

        def whole_batch(*leaves):
            return program(*leaves, tf.ones([batch_size(*leaves)], tf.bool))

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
    if isinstance(value, (bool, int, float, complex)):
        value = np.asarray(value, dtype=dtype)
    if isinstance(value, np.ndarray) and value.dtype == object:
        raise TypeError(f"{function}: argument {name} is an object array, not numbers")
    value = tf.convert_to_tensor(value)
    if value.dtype.as_numpy_dtype != np.dtype(dtype):
        raise TypeError(
            f"{function}: argument {name} has dtype {value.dtype.name}; this "
            f"program was generated for {np.dtype(dtype).name} (call it through "
            "its Context to generate a program for the new signature)"
        )
    if value.shape.rank == len(event_shape):
        value = value[None]  # a single example: batch of one
    if tuple(value.shape[1:]) != tuple(event_shape):
        raise TypeError(
            f"{function}: argument {name} has per-example shape "
            f"{tuple(value.shape[1:])}; expected {tuple(event_shape)}"
        )
    return value


def broadcast_batch(function, names, leaves):
    """Broadcasts size-1 batch dimensions; all sizes must be equal or 1."""
    sizes = [int(leaf.shape[0]) for leaf in leaves]
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
