"""The TensorFlow runtime's driver: the loop that runs a program's blocks.

`run` (generated programs call `rt.run`) runs, while some example has not
halted, the block chosen next (`next_block`) for the whole batch: a
`switch_case` over the blocks, or under XLA a sweep of one loop per block.
An eager call not traced yet runs the same blocks op by op first
(tensorflow_compiled.py's tier, which `run` is handed).
"""

import functools

import numpy as np

from autobatch_runtime.quiet import import_tensorflow

tf = import_tensorflow()  # without its start-up log lines (quiet.py)

from autobatch_runtime import common
from autobatch_runtime.tensorflow_stacks import (
    after_reads,
    apply_write,
    carried_of,
    hide_constants,
    merged,
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

    `looping` names blocks that can jump to themselves and write no stack
    (a rotated loop body): under XLA's switch such a block repeats in an
    inner loop for as long as any example waits at it, without a dispatch
    per trip; examples that leave it wait until none is left there (any
    order of blocks gives the same results).  (The sweep does this for
    every block.)

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
        return tier.run(state, stacks, blocks, looping, parallel_iterations)
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
                # While any example is here: one compare per example is
                # cheaper than a minimum (Collatz over 4096 examples: 5.2
                # against 6.6 ms).
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
