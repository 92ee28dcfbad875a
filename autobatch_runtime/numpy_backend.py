"""The runtime of generated NumPy modules (`from autobatch_runtime import
numpy_backend as rt`); it imports NumPy only.

The NumPy twin of `tensorflow_backend.py`: the same names with the same
meaning, so block functions read the same for both backends.  Stacks are updated in
place (the loop owns them); registers are replaced, never mutated.
"""

import functools
import sys

import numpy as np

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
from autobatch_runtime.builtins_numpy import *  # noqa: F401,F403 - rt.py_*: Python's builtins per example


def select(active, new, old):
    """Per example: `new` where `active`, else `old`.

    active: [batch] bool; old: [batch, *event]; new: broadcastable to old.
    """
    old = np.asarray(old)
    new = np.asarray(new).astype(old.dtype, copy=False)
    mask = active.reshape(active.shape + (1,) * (old.ndim - 1))
    return np.where(mask, new, old)


def choose(condition, if_true, if_false):
    """Per example: block `if_true` where `condition` holds, else `if_false`."""
    return np.where(np.asarray(condition).astype(bool), if_true, if_false)


def where(condition, if_true, if_false):
    """Per example: `if_true` where `condition` holds, else `if_false`.

    condition: [batch] (any dtype: its truth is used); the sides:
    [batch, *event] or broadcastable.
    """
    condition = np.asarray(condition).astype(bool)
    if_true, if_false = np.asarray(if_true), np.asarray(if_false)
    extra = max(if_true.ndim, if_false.ndim) - condition.ndim
    if condition.ndim == 1 and extra > 0:
        condition = condition.reshape(condition.shape + (1,) * extra)
    return np.where(condition, if_true, if_false)


def safe_divisor(active, value):
    """`value` where `active`, else 1: no integer division by zero in idle lanes.

    Modules generated before `divisor_or_one` load a dividing block's integer
    inputs through it; new ones guard the divisor where it divides."""
    value = np.asarray(value)
    mask = active.reshape(active.shape + (1,) * (value.ndim - 1))  # [batch, 1, ...]
    return np.where(mask, value, np.ones_like(value))


def divisor_or_one(value):
    """An integer divisor with 1 where it is 0 (`a % divisor_or_one(b)`):
    examples elsewhere in the program divide by junk, and must not raise."""
    value = np.asarray(value)
    if value.dtype.kind not in "iub":
        return value
    return np.where(value == 0, np.ones_like(value), value)


def exponent_or_zero(value):
    """An integer exponent with 0 where it is negative: NumPy raises on an
    integer to a negative integer power, which junk may ask for."""
    value = np.asarray(value)
    if value.dtype.kind not in "iu":
        return value
    return np.where(value < 0, np.zeros_like(value), value)


def cast(value, dtype):
    return np.asarray(value).astype(dtype)


def index_key(batch, event_shape, items):
    """The NumPy key of a per-example subscript `x[items]` on [batch, *event].

    items: one per leading event axis, each a slice (static) or an integer,
    a Python int or a [batch] array (per example).  Negative integers count
    from the end, as on one example; out-of-range ones are clipped (idle
    examples compute junk indices; `index_fault` reports active ones).
    Advanced indices put the batch axis first: the value is [batch, *rest].
    """
    key = [np.arange(batch)]
    for size, item in zip(event_shape, items):
        if isinstance(item, slice):
            key.append(item)
        else:
            item = np.asarray(item)
            key.append(np.clip(np.where(item < 0, item + size, item), 0, size - 1))
    return tuple(key)


def take(array, items):
    """Per example: array[b][items] (see `index_key`); [batch, *rest]."""
    array = np.asarray(array)
    return array[index_key(array.shape[0], array.shape[1:], items)]


def stack_items(items):
    """A tuple of like per-example arrays side by side, for indexing it per
    example (`gaps[k]`): [batch, len(items), ...]."""
    return np.stack([np.asarray(v) for v in items], axis=1)


def unpack_rows(value, spec):
    """`a, b = edge` of a per-example array of n rows (spec n): [batch, n,
    ...] -> n arrays [batch, ...], the rows Python's unpacking gives each
    example (common.unpack_by)."""
    return common.unpack_by(value, spec, lambda v, n: tuple(np.asarray(v)[:, k] for k in range(n)))


def lookup(table, items):
    """Per example: table[items] of a constant table (module-level array,
    tuple or list), with per-example integer items; [batch, *rest]."""
    table = np.asarray(table)
    batch = max((np.shape(i)[0] for i in items if np.ndim(i) == 1), default=1)
    return take(np.broadcast_to(table, (batch, *table.shape)), items)


def spread(active, value, which=None):
    """A value that is the same for every example, given the batch axis:
    [batch, *shape] (a copy per example, so it can be updated per example).

    active: [batch] (only its length is used).  A tuple (or namedtuple)
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
    value = np.asarray(value)
    return np.broadcast_to(value, np.shape(active) + value.shape).copy()


def put(array, items, value):
    """Per example: a copy of array[b] with [items] set to value[b] (the
    functional form of `x[items] = value`); value is cast to array's dtype."""
    array = np.array(array)
    key = index_key(array.shape[0], array.shape[1:], items)
    value = np.asarray(value).astype(array.dtype, copy=False)
    array[key] = np.broadcast_to(value, array[key].shape)
    return array



def repeat(value, n, axis=0):
    """`[value for _ in range(n)]` (and `[value] * n`): n copies of value
    along a new axis: [n, *shape] for a constant (axis 0), [batch, n,
    *shape] for a per-example value (axis 1, after the batch axis).  Python
    numbers become int64 / float64 / bool, as type inference typed them."""
    value = np.asarray(value)
    return np.repeat(np.expand_dims(value, axis), max(int(n), 0), axis=axis)


def index_fault(active, array, items, batched=True):
    """[batch] bool: the active examples whose integer items are out of range
    of `array`'s event axes (of a constant table's axes if not `batched`)."""
    shape = np.shape(array)[1:] if batched else np.shape(array)
    fault = np.zeros(np.shape(active), bool)
    for size, item in zip(shape, items):
        if not isinstance(item, slice):
            item = np.asarray(item)
            fault = fault | (item < -size) | (item >= size)
    return fault & active


def negative_power(active, exponent):
    """[batch] bool: the active examples whose integer exponent is negative
    (anywhere in it, for a vector of exponents).  Python's `2 ** -1` is the
    float 0.5, and the program typed the power an int: those examples stop,
    and the entry says so (common.check_index), instead of `exponent_or_zero`'s
    1 standing in for Python's 0.5."""
    negative = np.asarray(exponent) < 0  # [batch, *event]
    return active & negative.any(axis=tuple(range(1, negative.ndim)))


def zeros(leading, shape, dtype):
    """A [*leading, *shape] array of zeros (False for bool)."""
    return np.zeros((*leading, *shape), dtype)


def event_size(leaf, axis):
    """A symbolic size (`size_n` in a block) read off a [batch, *event] value:
    its per-example axis `axis`, a Python int wherever the shape is known
    (the program is traced, and compiled, once per set of sizes)."""
    return int(leaf.shape[axis + 1])


def batch_size(*leaves):
    return leaves[0].shape[0] if leaves else 1


def read(stack, index):
    """stack[index[b], b] for every example b: [batch, *event]."""
    index = np.clip(index, 0, stack.shape[0] - 1)
    return stack[index, np.arange(index.shape[0])]


def push(stack, sp, value, active):
    """Pushes `value` for every active example: (new sp, write, overflow).

    `save` at `sp` (the next free slot, [batch] int32), and the pointer
    moved for the examples it wrote.
    """
    write, overflow = save(stack, sp, value, active)
    return np.where(write[0], sp + 1, sp).astype(np.int32), write, overflow


def save(stack, frame, value, active):
    """Saves `value` at level `frame` (return_sp) for every active example.

    Returns (write, overflow): the write (mask, index, value) that `run`
    applies after the block, and the active examples whose stack was full.
    """
    fits = frame < stack.shape[0]
    return (active & fits, frame, value), active & ~fits


def stack_writes(stacks, **writes):
    """The block's writes by stack name (NumPy applies only these)."""
    return writes


# One masked write-back per block, one call per frame of saves (common.py).
select_fields, save_all = common.field_helpers(select, save)


def apply_write(stack, write):
    """stack[index[b], b] = value[b] where mask[b], in place."""
    mask, index, value = write
    lanes = np.nonzero(mask)[0]
    if lanes.size:
        value = np.broadcast_to(np.asarray(value, dtype=stack.dtype), stack.shape[1:])
        stack[index[lanes], lanes] = value[lanes]


def pop(stack, sp, active):
    """Pops every active example's top: (value [batch, *event], new sp)."""
    sp = np.where(active, sp - 1, sp).astype(np.int32)
    return read(stack, sp), sp


def pop_return(stack, sp, active, halt):
    """Return: the block each active example resumes at, and the new pointer.

    An example whose return stack is empty returns from the entry function:
    it halts.
    """
    empty = sp <= 0
    target, sp = pop(stack, sp, active & ~empty)
    return np.where(empty, halt, target), sp


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
    parallel_iterations=None,
):
    """Runs the program until every example has halted (pc == len(blocks)).

    Each iteration runs, for the whole batch, one block that some example is
    waiting at (`next_block`: the lowest-numbered, or with per-example
    vectors the busiest); the block changes only the examples at it.
    Floating-point warnings are silenced: lanes not at a block compute junk.
    With `profile`, counts runs and active examples per block and the
    deepest call.  (`looping` and `writes` matter to the TensorFlow driver
    only: here a dispatch costs no more than a repeat, and a register that a
    block leaves alone costs nothing; `parallel_iterations` is
    TensorFlow's `while_loop` setting.)  `max_iterations` (None: no
    limit) stops the loop after that many iterations, examples still
    pending (the caller raises).
    """
    halt = len(blocks)
    busiest = busiest_first(state)
    runs = np.zeros(halt, np.int64)
    active = np.zeros(halt, np.int64)
    deepest = 0
    iterations = 0
    with np.errstate(all="ignore"):
        while True:
            index = next_block(state.pc, halt, busiest)
            if index >= halt or iterations == max_iterations:
                return state, stacks, (runs, active, deepest) if profile else None
            iterations += 1
            if profile:
                runs[index] += 1
                active[index] += np.count_nonzero(state.pc == index)
                deepest = max(deepest, int(state.return_sp.max(initial=0)))
            state, writes = blocks[index](state, stacks)
            for name, write in writes.items():
                apply_write(getattr(stacks, name), write)


def busiest_first(state):
    """Whether the loop runs the block most examples wait at: when a register
    holds per-example vectors (the TensorFlow driver's rule and reasons,
    `tensorflow_loop.busiest_first`, so both run the same blocks)."""
    return any(np.ndim(x) > 1 for x in state)


def next_block(pc, halt, busiest):
    """The block to run next, `halt` once no example waits: the busiest (the
    lowest of equals) or the lowest pending, as `busiest` says."""
    if not busiest:
        return pc.min(initial=halt)
    waiting = np.bincount(pc, minlength=halt + 1)[:halt]  # [halt]
    return int(np.argmax(waiting)) if waiting.any() else halt


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
    """`program` as a function of the leaves alone (as in TensorFlow's runtime;
    nothing is traced here, so `trace_after` means nothing)."""
    if xla:
        raise ValueError("xla=True needs the TensorFlow backend")
    return functools.partial(
        program, max_stack_depth=max_stack_depth, max_iterations=max_iterations,
        xla=False, profile=profile,
    )


def static_batch(leaves, result):
    """The results as they are (NumPy shapes are always known)."""
    return result


def checked(function, result, errors, pc, error_lines, max_stack_depth, max_iterations):
    """`result`, once no example stopped early (else the error is raised)."""
    check_results(function, errors, pc, error_lines, max_stack_depth, max_iterations)
    return result


def run_stackless(program, leaves, xla):
    """A stackless program on all examples."""
    if xla:
        raise ValueError("xla=True needs the TensorFlow backend")
    return program(*leaves, np.ones(batch_size(*leaves), bool))


def check_stackless(function, recursive):
    """NumPy always runs eagerly: recursion is fine."""


def to_leaf(function, name, value, dtype, event_shape):
    """One argument leaf as a [batch, *event] array of `dtype`, or a clear error."""
    value = common.python_numbers(function, name, value, dtype)
    value = np.asarray(value)
    if value.dtype == object:
        raise TypeError(f"{function}: argument {name} is an object array, not numbers")
    if value.dtype != np.dtype(dtype):
        raise TypeError(
            f"{function}: argument {name} has dtype {value.dtype.name}; this "
            f"program was generated for {np.dtype(dtype).name} (a call through "
            "its Context builds the program for the new signature)"
        )
    if value.ndim == len(event_shape):
        value = value[None]  # a single example: batch of one
    if not common.fits(tuple(value.shape[1:]), event_shape):
        raise TypeError(
            f"{function}: argument {name} has per-example shape "
            f"{tuple(value.shape[1:])}; expected {common.shape_text(event_shape)}"
        )
    return value


def broadcast_batch(function, names, leaves):
    """Broadcasts size-1 batch dimensions; all sizes must be equal or 1."""
    sizes = [leaf.shape[0] for leaf in leaves]
    others = sorted(set(sizes) - {1})
    batch = others[0] if others else 1
    if len(others) > 1:
        described = ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))
        raise ValueError(
            f"{function}: batch sizes must be equal or 1, got {described}"
        )
    return [np.broadcast_to(leaf, (batch, *leaf.shape[1:])) for leaf in leaves]


def call(entry, values, **options):
    """Runs a generated program on a batch with this backend's helpers
    (see autobatch_runtime.common.call): (result leaves, Profile or None)."""
    return _call(sys.modules[__name__], entry, values, **options)
