"""The runtime of generated JAX modules (`from autobatch_runtime import
jax_backend as rt`); it imports NumPy and JAX only, never TensorFlow.

Its block bodies' helpers are jax_ops.py's (re-exported here); the stacks,
the loop, the traced programs and the call's checks are below.

The same helper names exist in `numpy_backend.py` and
`tensorflow_backend.py`, which is why block functions read the same for all
three backends.  Shapes: `batch` is the number of examples, `depth` the
stack depth, `event` a variable's per-example shape.

How a program runs here (`compiled`, `run`): the whole program is one
`jax.jit` function, traced once per program, limits and leaf shapes (JAX's
own cache keys the shapes, the batch size among them); its loop is a
`jax.lax.while_loop` whose carry is the state and the stacks.  Stack writes
are scatters (`.at[].set(mode="drop")`, the idle examples' rows sent past
the last level, where they are dropped), which XLA applies in place inside
the loop.  Examples that overflow a stack or index out of range stop and
say so in the state (`overflow_at`, `index_error_at`), as on the other
backends; `checked` raises once the loop is over.

Python's ints and floats are 64-bit in this compiler (type inference
types `n + 1` as int64), and JAX narrows them to 32 bits unless
`jax_enable_x64` is on: importing this module turns it on, for the
process, as numpyro's `enable_x64` does.  Without it a program's int64
arithmetic would silently wrap at 2**31.

Composition with JAX (README, "JAX backend"):

- `jax.jit`: a generated entry can be called inside the user's jitted
  function; its jitted program is then inlined into the user's trace.  The
  errors cannot be read while tracing, so they become a `jax.debug.callback`
  that raises when the computation runs (a `JaxRuntimeError` whose message
  names the error, the examples and the source line).
- `jax.jvp` / `jax.jacfwd`: forward mode goes through `lax.while_loop`.
- `jax.grad` (reverse mode) cannot go through a `while_loop` of unknown trip
  count; with `max_iterations=N` the loop is a `lax.fori_loop` of N trips
  (JAX lowers it to a `scan`), whose trips past the end run no block, and
  reverse mode works.  It keeps every trip's residuals: memory grows with N.
- `jax.vmap`: the program batches like any JAX function (the per-call batch
  axis becomes an axis of the vmapped batch); blocks of examples in
  different vmapped rows then run under `select`, every block each trip.

Block selection: the TensorFlow runtime's two schemes, measured here on
JAX 0.10.2 (2-core CPU under load, 4096 examples, best of 7 warm calls,
interleaved): `lax.switch` over the blocks, one block per trip, against
the *sweep*, every block a while loop of its own that runs while it is the
block chosen next (see `run`).

    program   switch     sweep    hand-written lax.while_loop
    fib       874 ms     138 ms   134 ms
    collatz   6.6 ms     2.7 ms   2.1 ms
    gcd       6.0 ms     3.9 ms
    bisect    0.77 ms    0.72 ms

A switch is a conditional whose branches each pass the whole carry through,
and XLA copies what its branches pass through: fib's stacks, on every trip.
In the sweep the carry stays in the loops and every scatter is in place.
Unlike TensorFlow's XLA, JAX's is faster with the sweep for programs of
scalars too (Collatz, gcd), so it is the CPU's scheme; on a GPU, where
every while-loop trip reads its predicate back to the host, "masked" runs
every block once per trip instead (`selection`).
"""

import functools
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

# rt.jax_numpy: NumPy's functions of per-example values, as a JAX program calls
# them (transpiler/passes/numpy_on_jax.py: `np.abs(g)` is `rt.jax_numpy.abs(g)`)
jax_numpy = jnp

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

jax.config.update("jax_enable_x64", True)  # before the builtins make their constants

from autobatch_runtime.builtins_jax import *  # noqa: E402,F401,F403 - rt.py_*: Python's builtins per example
from autobatch_runtime.jax_ops import (  # noqa: E402,F401 - rt.<name>
    _array,
    select,
    choose,
    where,
    safe_divisor,
    divisor_or_one,
    exponent_or_zero,
    cast,
    index_key,
    take,
    stack_items,
    unpack_rows,
    lookup,
    spread,
    put,
    repeat,
    index_fault,
    negative_power,
    zeros,
    event_size,
    batch_size,
)

# "sweep", "switch" or "masked": how `run` picks the block each trip runs,
# where no `max_iterations` asks for a bounded loop (see `run` and the
# figures above; tests/test_jax_backend.py runs all three).  None: "masked"
# where JAX's default device is an accelerator, "sweep" on the CPU
# (`selection`); the environment's AUTOBATCH_JAX_SELECTION sets it at import.
SELECTION = os.environ.get("AUTOBATCH_JAX_SELECTION") or None

# "masked": how many passes over every block one trip of the loop makes
# (the loop's predicate, read back by the host on a GPU, once per trip),
# and how many times in a row each pass runs a block that loops on itself
# (`looping`: a NUTS subtree's leapfrog steps).
MASKED_PASSES = 1
MASKED_LOOPING_REPEATS = 4


def selection():
    """The block selection `run` uses: SELECTION, or by JAX's default device.

    On a GPU every trip of a `lax.while_loop` copies its predicate back to
    the host before the next trip starts.  The sweep runs a while loop per
    block inside each trip of the outer loop, so a trip costs as many of
    those round trips as the program has blocks, run or not (a 400-
    transition NUTS run at 1,024 chains did not finish in 174 s on an H100,
    docs/sampler.md).  "masked" runs every block once per trip, each
    changing only the examples waiting at it: one round trip per trip,
    every block's arithmetic whether or not an example waits at it, which a
    GPU's width pays for and a CPU's does not.
    """
    if SELECTION is not None:
        return SELECTION
    return "sweep" if jax.default_backend() == "cpu" else "masked"


def read(stack, index):
    """stack[index[b], b] for every example b: [batch, *event] (one gather;
    indices clamped, as XLA would clamp them anyway)."""
    index = jnp.clip(index, 0, stack.shape[0] - 1)
    return stack[index, jnp.arange(index.shape[0])]


def push(stack, sp, value, active):
    """Pushes `value` for every active example: (new sp, write, overflow).

    `save` at `sp` (the next free slot, [batch] int32), and the pointer
    moved for the examples it wrote.
    """
    write, overflow = save(stack, sp, value, active)
    return jnp.where(write[0], sp + 1, sp).astype(jnp.int32), write, overflow


def save(stack, frame, value, active):
    """Saves `value` at level `frame` (return_sp) for every active example.

    Returns (write, overflow): the write (mask, index, value) that `run`
    applies after the block, and the [batch] bool active examples whose
    stack was full (nothing is written for them).
    """
    fits = frame < stack.shape[0]
    value = jnp.broadcast_to(_array(value).astype(stack.dtype), stack.shape[1:])
    return (active & fits, frame, value), active & ~fits


def stack_writes(stacks, **writes):
    """The block's writes by stack name (`run` applies them)."""
    return writes


# One masked write-back per block, one call per frame of saves (common.py).
select_fields, save_all = common.field_helpers(select, save)


def apply_write(stack, write):
    """stack[index[b], b] = value[b] where mask[b]: one scatter, the idle
    examples' levels sent past the last one, which `mode="drop"` drops."""
    mask, index, value = write
    depth, batch = stack.shape[0], stack.shape[1]
    at = jnp.where(mask, index, depth)
    return stack.at[at, jnp.arange(batch)].set(value, mode="drop")


def after_reads(write, pc):
    """`write`, made to depend on the block's next `pc` (a mask that is
    always true there): the scatter then comes after the block's reads of
    the same stack, and XLA updates it in place instead of copying it first
    (tensorflow_stacks.after_reads measured it under TensorFlow's XLA)."""
    mask, index, value = write
    return mask & (pc >= 0), index, value


def pop(stack, sp, active):
    """Pops every active example's top: (value [batch, *event], new sp)."""
    sp = jnp.where(active, sp - 1, sp).astype(jnp.int32)
    return read(stack, sp), sp


def pop_return(stack, sp, active, halt):
    """Return: the block each active example resumes at, and the new pointer.

    An example whose return stack is empty returns from the entry function:
    it halts.
    """
    empty = sp <= 0
    target, sp = pop(stack, sp, active & ~empty)
    return jnp.where(empty, halt, target).astype(jnp.int32), sp


def busiest_first(state):
    """Whether the loop runs the block most examples wait at: when a register
    holds per-example vectors (the TensorFlow driver's rule and reasons,
    `tensorflow_loop.busiest_first`, so every backend runs the same blocks)."""
    return any(jnp.ndim(x) > 1 for x in state)


# Programs of at most this many blocks count the examples at each block by
# one [blocks, batch] compare; larger ones by a scatter-add over the batch.
COMPARE_BLOCKS = 64


def next_block(pc, halt, busiest):
    """The block the loop runs next ([] int32; `halt` once no example waits).

    The lowest block any example waits at, or with `busiest` the block the
    most examples wait at, the lowest of equals (see
    tensorflow_loop.next_block, which this follows step for step).
    """
    if not busiest:
        return jnp.min(pc, initial=halt).astype(jnp.int32)
    blocks = np.arange(halt, dtype=np.int64)
    weight = np.int64(halt + 1)
    if halt <= COMPARE_BLOCKS:
        at = blocks[:, None] == pc[None, :].astype(jnp.int64)  # [halt, batch]
        weighted = jnp.sum(jnp.where(at, weight, np.int64(0)), axis=1)
    else:
        counts = jnp.zeros(halt + 1, jnp.int64).at[pc].add(1)
        weighted = counts[:halt] * weight
    score = jnp.max(weighted + (halt - blocks), initial=0)
    chosen = jnp.where(score > halt, halt - score % weight, np.int64(halt))
    return chosen.astype(jnp.int32)


def _like(new, old):
    """`new` (a state or stacks namedtuple) with each leaf of `old`'s dtype:
    a loop's carry keeps its types (a weak-typed Python number that a block
    stored would otherwise change them)."""
    return jax.tree_util.tree_map(lambda n, o: jnp.asarray(n).astype(o.dtype), new, old)


def run(
    state,
    stacks,
    blocks,
    looping=(),
    writes=None,
    *,
    xla=True,
    profile=False,
    max_iterations=None,
    parallel_iterations=None,
):
    """Runs the program until every example has halted (pc == len(blocks)).

    Each trip runs, for the whole batch, one block that some example is
    waiting at (`next_block`: the lowest-numbered, or with per-example
    vectors the busiest); the block changes only the examples at it.  How:

    - without `max_iterations`, a `lax.while_loop`.  SELECTION "switch":
      its body is a `lax.switch` over the blocks, each branch applying its
      own stack writes.  "sweep" (the CPU's default): its body
      is a chain of while loops, one per block in block order, each running
      while its block is the one chosen next (the same blocks in the same
      order as the switch; see tensorflow_loop.run).  "masked" (an
      accelerator's default, `selection`): its body runs every block in
      block order, MASKED_PASSES times, a block in `looping`
      MASKED_LOOPING_REPEATS times in a row (a NUTS chain inside a subtree
      takes that many leapfrog steps a trip: 2.1-3.3x less time on an H200,
      docs/sampler.md); each changes only the examples waiting at it, so an example runs the blocks it would run under the
      others, though not in the same trips (`block_active` is the same,
      `block_runs` counts the trips a block changed an example in).
    - with `max_iterations=N`, a `lax.fori_loop` of N trips, each a
      `lax.cond` that runs the switch while an example waits: the same
      blocks, one per trip, and a loop that `jax.grad` differentiates.

    With `profile`, counters ride along in the carry: runs and active
    examples per block and the deepest call.  (`writes`, `xla` and
    `parallel_iterations` are the TensorFlow driver's, and `looping` too
    outside "masked": every JAX program is compiled by XLA, and its sweep
    carries every field.)
    """
    halt = len(blocks)
    choose = functools.partial(next_block, halt=halt, busiest=busiest_first(state))

    def applied(block, state, stacks):
        new_state, block_writes = block(state, stacks)
        new = {}
        for name, write in block_writes.items():
            write = after_reads(write, new_state.pc)
            new[name] = apply_write(getattr(stacks, name), write)
        return _like(new_state, state), stacks._replace(**new)

    def counted(index, state, counters, waiting_only=False):
        if not profile:
            return counters
        runs, active, deepest = counters
        at_block = jax.nn.one_hot(index, halt, dtype=jnp.int64)
        waiting = jnp.sum((state.pc == index).astype(jnp.int64))
        if waiting_only:  # "masked" runs every block: count those that changed an example
            at_block = at_block * (waiting > 0)
        deepest = jnp.maximum(deepest, jnp.max(state.return_sp, initial=0))
        return runs + at_block, active + at_block * waiting, deepest

    branches = [functools.partial(applied, block) for block in blocks]

    def step(carry):
        state, stacks, counters, index = carry
        counters = counted(index, state, counters)
        state, stacks = lax.switch(index, branches, state, stacks)
        return state, stacks, counters, choose(state.pc)

    counters = ()
    if profile:
        zeros_ = jnp.zeros([halt], jnp.int64)
        counters = (zeros_, zeros_, jnp.zeros([], jnp.int32))
    carry = (state, stacks, counters, choose(state.pc))
    if max_iterations is not None:

        def trip(_, carry):
            return lax.cond(carry[3] < halt, step, lambda carry: carry, carry)

        state, stacks, counters, _ = lax.fori_loop(0, int(max_iterations), trip, carry)
    elif selection() == "switch":
        state, stacks, counters, _ = lax.while_loop(lambda c: c[3] < halt, step, carry)
    elif selection() == "masked":

        def every_block(carry):
            state, stacks, counters = carry
            for _ in range(MASKED_PASSES):
                for k, block in enumerate(blocks):
                    for _ in range(MASKED_LOOPING_REPEATS if k in looping else 1):
                        counters = counted(k, state, counters, waiting_only=True)
                        state, stacks = applied(block, state, stacks)
            return state, stacks, counters

        state, stacks, counters = lax.while_loop(
            lambda c: jnp.any(c[0].pc < halt), every_block, carry[:3]
        )
    else:

        def sweep(carry):
            for k, block in enumerate(blocks):

                def body(carry, k=k, block=block):
                    state, stacks, counters, index = carry
                    counters = counted(k, state, counters)
                    state, stacks = applied(block, state, stacks)
                    return state, stacks, counters, choose(state.pc)

                carry = lax.while_loop(lambda c, k=k: c[3] == k, body, carry)
            return carry

        state, stacks, counters, _ = lax.while_loop(lambda c: c[3] < halt, sweep, carry)
    return state, stacks, counters if profile else None


_COMPILED = {}


def release_compiled():
    """Forgets every program jitted so far and JAX's own compiled code, so
    that both can be freed.

    The cache holds a `jax.jit` per program, mode and limits for the life of
    the process, and each keeps an executable per shape; a process that
    builds many programs (a test suite, a notebook re-running its cells)
    grows without bound otherwise.  The next call of each program compiles
    it again.
    """
    _COMPILED.clear()
    jax.clear_caches()


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
    """`program` as a jitted function of the leaves alone.

    One `jax.jit` per program, mode and limits; JAX traces and compiles it
    once per leaf signature (dtypes and shapes, the batch size among them)
    and caches the result.  Called inside the user's own `jax.jit` (or
    under `grad`, `vmap`), it is traced into theirs.  (`trace_after`,
    TensorFlow's op-by-op start, has no JAX counterpart: jit always traces.)
    """
    key = (program, bool(profile), max_stack_depth, max_iterations, selection())
    key += (MASKED_PASSES, MASKED_LOOPING_REPEATS)
    if key not in _COMPILED:
        _COMPILED[key] = jax.jit(
            functools.partial(
                program,
                max_stack_depth=max_stack_depth,
                max_iterations=max_iterations,
                xla=True,
                profile=bool(profile),
            )
        )
    return _COMPILED[key]


def static_batch(leaves, result):
    """The results as they are (JAX shapes are always known)."""
    return result


def _concrete(values):
    """`values` as NumPy arrays, or None inside a trace (the user's
    `jax.jit`, `grad`, `vmap`), where they have no values yet."""
    try:
        return [np.asarray(v) for v in values]
    except TypeError:  # jax.errors.TracerArrayConversionError
        return None


def checked(function, result, errors, pc, error_lines, max_stack_depth, max_iterations):
    """`result`, once no example stopped early; else the error.

    Called outside any transformation (the usual call), the loop's final
    state is read and an early stop raises StackOverflowError, IndexError
    or IterationLimitError.  Inside the user's `jax.jit` (or `grad`,
    `vmap`) nothing can be read yet: the same check runs as a
    `jax.debug.callback` when the computation runs, and its error stops it
    (JAX raises a `JaxRuntimeError` carrying the message).
    """
    concrete = _concrete([*errors, pc])
    if concrete is not None:
        check_results(
            function, concrete[:-1], concrete[-1], error_lines, max_stack_depth, max_iterations
        )
        return result

    def check(*values):
        values = [np.asarray(v) for v in values]
        if values[-1].ndim > 1:  # under vmap: every row's examples, one batch
            values = [v.reshape(-1) for v in values]
        check_results(
            function, values[:-1], values[-1], error_lines, max_stack_depth, max_iterations
        )

    jax.debug.callback(check, *errors, pc)
    return result


def run_stackless(program, leaves, xla):
    """A stackless program on all examples, jitted.  Only programs without
    recursion: `check_stackless` refuses the others while tracing."""
    key = (program, "stackless")
    if key not in _COMPILED:

        def whole_batch(*leaves):
            return program(*leaves, jnp.ones([batch_size(*leaves)], bool))

        _COMPILED[key] = jax.jit(whole_batch)
    return _COMPILED[key](*leaves)


def check_stackless(function, recursive):
    """Recursion in stackless mode is the host's, which a JAX trace cannot
    hold: a data-dependent depth would trace for ever."""
    if recursive:
        raise RuntimeError(
            f"{function}: stackless mode runs recursive programs on the host's "
            "recursion, which JAX cannot trace; on the JAX backend drop "
            "stackless=True (the stack-based program batches the recursion), or "
            "use the NumPy or TensorFlow backend"
        )


def to_leaf(function, name, value, dtype, event_shape):
    """One argument leaf as a [batch, *event] JAX array of `dtype`, or a clear error."""
    value = common.python_numbers(function, name, value, dtype)
    if isinstance(value, np.ndarray) and value.dtype == object:
        raise TypeError(f"{function}: argument {name} is an object array, not numbers")
    if (
        hasattr(value, "numpy")
        and not hasattr(value, "__jax_array__")
        and not isinstance(value, (np.ndarray, jax.Array))
    ):
        value = value.numpy()  # a TensorFlow eager tensor, say
    value = jnp.asarray(value)
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
        raise ValueError(f"{function}: batch sizes must be equal or 1, got {described}")
    return [
        leaf if leaf.shape[0] == batch else jnp.broadcast_to(leaf, (batch, *leaf.shape[1:]))
        for leaf in leaves
    ]


def call(entry, values, **options):
    """Runs a generated program on a batch with this backend's helpers
    (see autobatch_runtime.common.call): (result leaves, Profile or None)."""
    return _call(sys.modules[__name__], entry, values, **options)
