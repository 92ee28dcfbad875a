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
    """Pushes `value` on the stack of every active example.

    stack: [depth, batch, *event]; sp: [batch] int32, the next free slot;
    value: [batch, *event] or broadcastable.  Writes with a one-hot mask over
    the depth (one fused elementwise op; under XLA on CPU it beat a scatter
    for shallow stacks).  Returns the new stack and pointer, and `overflow`:
    [batch] bool, the active examples whose stack was full (nothing written).
    """
    depth = stack.shape[0]
    fits = sp < depth
    slot = tf.equal(tf.range(depth)[:, None], sp[None, :])  # [depth, batch]
    write = tf.logical_and(slot, tf.logical_and(active, fits)[None, :])
    write = tf.reshape(write, [depth, -1] + [1] * (stack.shape.rank - 2))
    stack = tf.where(write, tf.cast(value, stack.dtype), stack)
    sp = tf.where(tf.logical_and(active, fits), sp + 1, sp)
    return stack, sp, tf.logical_and(active, tf.logical_not(fits))


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


def run(state, blocks):
    """Runs the program until every example has halted (pc == len(blocks)).

    Each iteration runs, for the whole batch, the lowest-numbered block that
    some example is waiting at; the block changes only the examples at it.
    """
    halt = len(blocks)

    def pending(state):
        return tf.reduce_any(state.pc < halt)

    def step(state):
        index = tf.reduce_min(state.pc)
        branches = [functools.partial(block, state) for block in blocks]
        return [tf.switch_case(index, branches)]

    return tf.while_loop(pending, step, [state])[0]


_COMPILED = {}


def compiled(program, xla):
    """`program` under tf.function (XLA when `xla`), traced once per signature."""
    key = (program, bool(xla))
    if key not in _COMPILED:
        if xla:
            _COMPILED[key] = tf.function(program, jit_compile=True)
        else:
            _COMPILED[key] = tf.function(program, reduce_retracing=True)
    return _COMPILED[key]


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
