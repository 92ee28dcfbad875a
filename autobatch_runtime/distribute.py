"""One batched call over many devices or machines, or in chunks on one.

A generated entry (`generated.examples.fib_tf.fib`, or what a Context
calls) runs its whole batch as one program: one loop, one set of stacks.
Examples are independent, so the batch can be cut into pieces that run
apart and whose outputs are put back together:

- over the replicas of a `tf.distribute.Strategy` (MirroredStrategy on the
  GPUs or logical CPUs of one machine, MultiWorkerMirroredStrategy across
  machines): one contiguous shard per replica, each running the program in
  its own `tf.while_loop` with its own stacks, so a replica whose examples
  finish early stops early instead of idling in a loop that waits for the
  slowest example of the whole batch;
- in chunks of at most `max_batch` examples per program call, one after
  another, when one call's stacks would not fit on the device (with a
  strategy: rounds of at most `max_batch` examples per replica).

The generated module knows nothing of this, so it can be imported and
checked in without any of it.  Its entry (`def fib(n, **options)`) hands
its options to the runtime's `rt.call` (`common.call`), which takes a
`runner`: an object that gets the traced program and the whole batch's
leaves and returns what the program would have returned for the whole
batch (results, errors, pc, counters).  The pieces' per-example outputs
come back concatenated in the caller's order, so `rt.call`'s own checks
(StackOverflowError, IndexError, IterationLimitError) name failing
examples by their index in the caller's batch, and its profile counts
every piece's iterations.

    import tensorflow as tf
    from autobatch_runtime.distribute import shard_call
    from generated.examples.fib_tf import fib

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    shard_call(fib, (n,), strategy=strategy, xla=True)   # == fib(n, xla=True)

Only NumPy is imported here; TensorFlow is imported when a TensorFlow
program runs, so NumPy modules can be chunked where TensorFlow is absent.
"""

import sys
import typing

import numpy as np


def shard_call(entry, args, strategy=None, max_batch=None, **options):
    """`entry(*args, **options)`, run over `strategy`'s replicas and/or in chunks.

    entry: a generated entry (a module's `fib`, or a factory's product such
    as `make_nuts_step_2(...)`); args: its positional arguments, each with a
    leading batch dimension; strategy: a `tf.distribute.Strategy` or None;
    max_batch: the most examples one program call holds, or None; options:
    the entry's keywords (xla, profile, max_stack_depth, ...).  The results
    equal the plain call's.  With `profile=True` the profile is a
    `ShardedProfile`: the per-block counters summed over pieces, plus each
    piece's own.
    """
    if strategy is None and max_batch is None:
        return entry(*args, **options)
    runner = Runner(strategy, max_batch)
    out = entry(*args, runner=runner, **options)
    if options.get("profile"):
        out, profile = out
        return out, runner.profile(profile)
    return out


def piece_bounds(start, stop, pieces):
    """Offsets cutting examples [start, stop) into `pieces` contiguous runs.

    Sizes differ by at most one, so a batch not divisible by the replica
    count still loads every replica evenly; a batch smaller than the
    replica count leaves some replicas an empty shard (they run a loop that
    ends at once, and take part in the gather).
    """
    size = stop - start
    return [start + (k * size) // pieces for k in range(pieces + 1)]


def plan(batch, replicas, max_batch=None):
    """The rounds of a call: per round, the bounds of each replica's shard.

    One round unless `max_batch` caps the examples per program call; then
    rounds of at most `max_batch * replicas` examples, run one after another.
    """
    per_round = batch if max_batch is None else max_batch * replicas
    rounds, start = [], 0
    while True:
        stop = batch if per_round == 0 else min(batch, start + per_round)
        rounds.append(piece_bounds(start, stop, replicas))
        start = stop
        if start >= batch:
            return rounds


class Piece(typing.NamedTuple):
    """One program call of a sharded or chunked call, and what it counted."""

    replica: int  # which replica ran it (0 without a strategy)
    start: int  # its examples are [start, stop) of the caller's batch
    stop: int
    block_runs: tuple  # loop iterations that ran each block
    block_active: tuple  # examples at each block, summed over its runs
    deepest_call: int

    @property
    def batch(self):
        return self.stop - self.start

    @property
    def iterations(self):
        return sum(self.block_runs)


class ShardedProfile(typing.NamedTuple):
    """The profile of a call run in pieces (from `shard_call(..., profile=True)`).

    Its first fields read as a one-device profile: block runs and active
    examples summed over every piece, the caller's batch, the deepest call
    of any piece.  Utilization is useful example-steps over the example
    slots the pieces' loops offered (each piece's iterations times its own
    batch): the fraction of replica time spent on active examples.
    """

    block_lines: tuple
    block_runs: tuple
    block_active: tuple
    batch: int
    deepest_call: int
    pieces: tuple  # Piece per program call, round by round, replica by replica

    @property
    def iterations(self):
        """Loop iterations of every piece together (replicas run theirs at once)."""
        return sum(self.block_runs)

    @property
    def utilization(self):
        offered = sum(p.iterations * p.batch for p in self.pieces)
        return sum(self.block_active) / offered if offered else 1.0

    def replica_utilization(self):
        """Per replica: active example-steps / (its iterations x its shard size)."""
        out = []
        for replica in sorted({p.replica for p in self.pieces}):
            mine = [p for p in self.pieces if p.replica == replica]
            offered = sum(p.iterations * p.batch for p in mine)
            out.append(sum(sum(p.block_active) for p in mine) / offered if offered else 1.0)
        return out

    def replica_iterations(self):
        """Per replica: loop iterations it ran (its rounds one after another)."""
        out = {}
        for p in self.pieces:
            out[p.replica] = out.get(p.replica, 0) + p.iterations
        return [out[r] for r in sorted(out)]

    def report(self):
        replicas = self.replica_iterations()
        lines = [
            f"{self.iterations} iterations over {self.batch} examples in "
            f"{len(self.pieces)} piece(s) on {len(replicas)} replica(s), utilization "
            f"{self.utilization:.1%}, deepest call {self.deepest_call}"
        ]
        for r, (its, use) in enumerate(zip(replicas, self.replica_utilization())):
            lines.append(f"  replica {r}: {its} iterations, utilization {use:.1%}")
        lines.append(f"{'block':>5} {'runs':>8} {'active/run':>10}  source")
        for k, (where, runs, active) in enumerate(
            zip(self.block_lines, self.block_runs, self.block_active)
        ):
            mean = active / runs if runs else 0.0
            lines.append(f"{k:>5} {runs:>8} {mean:>10.1f}  {where}")
        return "\n".join(lines)


class Runner:
    """Runs a generated program in pieces: the `runner` of `rt.call`.

    strategy: a `tf.distribute.Strategy` (one shard per replica) or None;
    max_batch: the most examples per program call, or None.  `pieces`
    records what each program call counted (with profile=True, eagerly).
    """

    def __init__(self, strategy=None, max_batch=None):
        if max_batch is not None:
            if int(max_batch) != max_batch or max_batch < 1:
                raise ValueError(f"max_batch must be a positive integer (or None), got {max_batch!r}")
            max_batch = int(max_batch)
        self.strategy = strategy
        self.max_batch = max_batch
        self.pieces = []

    @property
    def replicas(self):
        return 1 if self.strategy is None else int(self.strategy.num_replicas_in_sync)

    def largest_piece(self, leaves):
        """The leaves of the largest piece: whose stacks one program call allocates."""
        batch = _batch(leaves)
        if batch is None:
            return leaves
        largest = max(b - a for bounds in plan(batch, self.replicas, self.max_batch)
                      for a, b in zip(bounds, bounds[1:]))
        return [leaf[:largest] for leaf in leaves]

    def __call__(self, program, leaves):
        """(result, errors, pc, counters) of `program` over all `leaves`, in pieces.

        program: the entry's traced program, a function of [batch, *event]
        leaves returning (result leaves, error arrays, pc, counters or None),
        the per-example ones [batch, ...].
        """
        batch = _batch(leaves)
        if batch is None:
            raise ValueError(
                "strategy= and max_batch= need the batch size when the call is made "
                "(inside a tf.function, give the arguments a static batch dimension)"
            )
        numpy = _array_module(leaves)
        if numpy is not None and self.strategy is not None:
            raise ValueError("strategy= needs the TensorFlow backend (NumPy runs on the host)")
        self.pieces = []
        rounds = []
        for bounds in plan(batch, self.replicas, self.max_batch):
            if self.strategy is None or batch == 0:
                # Nothing to spread when there are no examples: every worker
                # of a strategy sees the same empty batch, so none waits in a
                # collective for the others.
                start, stop = bounds[0], bounds[-1]
                outputs = program(*[leaf[start:stop] for leaf in leaves])
                counters = outputs[3]
                rows = None if counters is None else tuple(_row(c, numpy) for c in counters)
                outputs = (*outputs[:3], rows)
                bounds = [start, stop]
            else:
                outputs = _replicated(self.strategy, program, leaves, bounds)
            self._record(bounds, outputs[3])
            rounds.append(outputs)
        return _combined(rounds, numpy)

    def _record(self, bounds, rows):
        """Notes each piece of a round and what it counted (rows: [replicas, ...])."""
        if rows is None:
            return
        try:
            runs, active, deepest = (np.asarray(r) for r in rows)
        except (TypeError, NotImplementedError, ValueError):  # symbolic: nothing to note
            return
        for k, (start, stop) in enumerate(zip(bounds, bounds[1:])):
            self.pieces.append(
                Piece(
                    k,
                    int(start),
                    int(stop),
                    tuple(int(x) for x in runs[k]),
                    tuple(int(x) for x in active[k]),
                    int(deepest[k]),
                )
            )

    def profile(self, single):
        """The entry's profile (`single`, counters summed) with every piece's own."""
        return ShardedProfile(
            tuple(single.block_lines),
            tuple(single.block_runs),
            tuple(single.block_active),
            int(single.batch),
            int(single.deepest_call),
            tuple(self.pieces),
        )


def _array_module(leaves):
    """`numpy` or `jax.numpy` for the leaves of a NumPy or JAX program (their
    pieces are joined with its ops); None for TensorFlow's."""
    if not leaves:
        return None
    if isinstance(leaves[0], np.ndarray):
        return np
    jax = sys.modules.get("jax")  # imported already if a leaf is JAX's
    if jax is not None and isinstance(leaves[0], jax.Array):
        return jax.numpy
    return None


def _row(counter, numpy):
    """A counter as one row of a [pieces, ...] table (`numpy`: the array
    module of a NumPy or JAX program, None for TensorFlow's)."""
    if numpy is not None:
        return numpy.asarray(counter)[None]
    import tensorflow as tf

    return tf.expand_dims(counter, 0)


def _batch(leaves):
    """The static batch size of the leaves (1 without any), or None if unknown."""
    if not leaves:
        return 1
    size = leaves[0].shape[0]
    return None if size is None else int(size)


def _replicated(strategy, program, leaves, bounds):
    """One round over the strategy's replicas: replica k runs examples
    [bounds[k], bounds[k + 1]); the per-example outputs are gathered in
    replica order (= the caller's order), the counters as one row per
    replica.  Under MultiWorkerMirroredStrategy every worker passes the
    whole batch, runs its own replicas' shards, and gathers everything.
    """

    def shard(context):
        k = context.replica_id_in_sync_group
        return tuple(leaf[bounds[k] : bounds[k + 1]] for leaf in leaves)

    shards = strategy.experimental_distribute_values_from_function(shard)
    return _replicated_function(strategy, program)(shards)


# (strategy, program) -> the tf.function that runs a round and gathers it.
_ROUNDS = {}


def _replicated_function(strategy, program):
    """A tf.function running `program` on every replica's shard and gathering.

    Eagerly, `strategy.run` starts a thread per replica and runs op by op
    (TensorFlow warns of its overhead); traced, it is one graph per round
    whose replicas' calls run in parallel.  Kept per strategy and program,
    so a call traces it once per shard shapes.

    On one machine every replica's outputs are local: they are concatenated
    in replica order, with no collective at all.  Across machines each
    replica all-gathers its outputs, one collective after another (chained
    by control dependencies): collectives launched together may run in a
    different order on different replicas, and then meet the wrong partner
    (TensorFlow aborts with "Shape mismatch in the collective instance").
    """
    import tensorflow as tf

    key = (id(strategy), program)
    if key in _ROUNDS and _ROUNDS[key][0] is strategy:
        return _ROUNDS[key][1]
    across_workers = len(strategy.extended.worker_devices) < strategy.num_replicas_in_sync

    def replica(shard):
        result, errors, pc, counters = program(*shard)
        parts = [tuple(result), tuple(errors), pc]
        if counters is not None:  # runs [halt], active [halt], deepest []: one row each
            parts.append(tuple(tf.expand_dims(c, 0) for c in counters))
        if not across_workers:
            return parts
        context = tf.distribute.get_replica_context()
        gathered, previous = [], []
        for value in tf.nest.flatten(parts):
            with tf.control_dependencies(previous):
                value = tf.identity(value)
            gathered.append(context.all_gather(value, axis=0))
            previous = [gathered[-1]]
        return tf.nest.pack_sequence_as(parts, gathered)

    def round_(shards):
        parts = strategy.run(replica, args=(shards,))
        if across_workers:  # every replica holds everything: take the first
            parts = tf.nest.map_structure(lambda x: strategy.experimental_local_results(x)[0], parts)
        else:
            parts = tf.nest.map_structure(
                lambda x: tf.concat(strategy.experimental_local_results(x), 0), parts
            )
        result, errors, pc = parts[:3]
        return result, errors, pc, parts[3] if len(parts) > 3 else None

    function = tf.function(round_, autograph=False, reduce_retracing=True)
    _ROUNDS[key] = (strategy, function)
    return function


def _combined(rounds, numpy):
    """What one program over the whole batch would return, from the rounds'.

    Per-example outputs are concatenated (rounds are in the caller's order);
    counter rows (one per piece) are summed, the deepest call maximized.
    """
    if numpy is not None:
        concat, total, deepest = numpy.concatenate, numpy.sum, numpy.max
    else:
        import tensorflow as tf

        concat, total, deepest = tf.concat, tf.reduce_sum, tf.reduce_max

    def joined(parts):
        return parts[0] if len(parts) == 1 else concat(parts, 0)

    results, errors, pcs, counters = zip(*rounds)
    result = tuple(joined(list(leaf)) for leaf in zip(*results))
    errors = tuple(joined(list(e)) for e in zip(*errors))
    pc = joined(list(pcs))
    if counters[0] is None:
        return result, errors, pc, None
    runs, active, deep = (joined(list(c)) for c in zip(*counters))  # [pieces, ...]
    return result, errors, pc, (total(runs, 0), total(active, 0), deepest(deep, 0))
