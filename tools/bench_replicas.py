"""Benchmark: one batched call over 1, 2, 4 replicas (`bench.py --replicas 1 2 4`).

The CPU is split into logical devices (tf.config.set_logical_device_configuration,
before TensorFlow starts), one per replica of a MirroredStrategy; on a
2-core machine they share the same cores, so no speed-up is expected: what
this measures is the cost of sharding (splitting, one loop per replica,
gathering) and each replica's utilization (its active example-steps over
its iterations x its shard size, from the profile counters).

Programs under XLA: fib over 4096 examples (n in [5, 16]) and one NUTS step
of 256 chains (100-d standard normal, step 0.3, as tools/bench_nuts.py).

Then a paper estimate of a 64-GPU run.  The 64 shards' loops are run one
after another on this CPU (`max_batch` = batch / 64: each chunk is exactly
the shard a replica would get), so every replica's iteration count and
utilization is measured, not guessed; what is assumed is each GPU's cost
per loop iteration:
- latency-bound (small shards: a GPU iteration costs the same whatever
  its batch): speed-up = I_1 / max_r I_r, where I_1 is the whole batch's
  iterations on one device and I_r replica r's;
- compute-bound (cost proportional to the examples in the loop):
  speed-up = 64 x I_1 / max_r I_r.
A real run lies between; either way the slowest replica sets the time.
"""

from __future__ import annotations

import functools
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _interleaved(calls, repeats):
    """(first call s, best warm s) per call, the calls taking turns.

    Each repeat times every call once, one after another, so a change in the
    machine's load (this 2-core machine is shared) falls on all of them
    alike.  Timed one after another in blocks (all of `none`'s repeats, then
    all of 1 replica's, ...), a load change between blocks once read as a
    one-replica strategy costing 2.24x no strategy; taking turns, and
    measured apart, the two are equal (best 60.7 against 59.7 ms).
    """
    first, warm = {}, {key: [] for key in calls}
    for key, call in calls.items():
        start = time.perf_counter()
        call()
        first[key] = time.perf_counter() - start
    for _ in range(repeats):
        for key, call in calls.items():
            start = time.perf_counter()
            call()
            warm[key].append(time.perf_counter() - start)
    return first, {key: min(times) for key, times in warm.items()}


def _programs():
    """name -> (batch, call(strategy=..., max_batch=..., profile=...), check(out))."""
    import tensorflow as tf

    from examples import fib
    from examples.nuts import Point, make_nuts, standard_normal
    from transpiler import Context

    n = np.random.default_rng(0).integers(5, 17, 4096)
    expected_fib = np.asarray(fib.fib(n, xla=True))

    def fib_call(**options):
        return fib.fib(n, xla=True, **options)

    chains, dims = 256, 100
    target = standard_normal
    step = make_nuts(target, 0.3, 10, Context(frozen=True))
    x0 = np.random.default_rng(1).normal(size=(chains, dims))
    log_prob, grad = (np.asarray(v) for v in target(tf.constant(x0)))
    point = Point(x0, log_prob, grad)
    seeds, counter = np.arange(chains, dtype=np.int64), np.zeros(chains, np.int64)

    def nuts_call(**options):
        return step(point, seeds, counter, backend="tensorflow", xla=True, max_stack_depth=12, **options)

    expected_nuts = np.asarray(nuts_call().point.x)
    return {
        "fib": (4096, fib_call, lambda out: np.array_equal(np.asarray(out), expected_fib)),
        "nuts": (
            chains,
            nuts_call,
            lambda out: np.allclose(np.asarray(out.point.x), expected_nuts, rtol=1e-12, atol=1e-12),
        ),
    }


def main(replicas, repeats=3, estimate_gpus=64, out=sys.stdout):
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(max(replicas))]
    )
    programs = _programs()
    print(
        f"{'program':<8} {'replicas':>8} {'first s':>8} {'best ms':>9} {'vs 1 device':>11}  "
        "per-replica utilization (iterations)",
        file=out,
    )
    for name, (batch, call, check) in programs.items():
        strategies = {
            count: tf.distribute.MirroredStrategy([f"/cpu:{k}" for k in range(count)])
            for count in replicas
        }
        calls = {"none": call}
        calls.update({count: functools.partial(call, strategy=s) for count, s in strategies.items()})
        first, best = _interleaved(calls, repeats)
        plain = best["none"]
        print(f"{name:<8} {'none':>8} {'':>8} {plain * 1e3:>9.1f} {1.0:>10.2f}x  (one device, no strategy)", file=out)
        for count, strategy in strategies.items():
            result, profile = call(strategy=strategy, profile=True)
            assert check(result), f"{name} on {count} replicas differs from one device"
            uses = " ".join(
                f"{u:.1%} ({i})"
                for u, i in zip(profile.replica_utilization(), profile.replica_iterations())
            )
            print(
                f"{name:<8} {count:>8} {first[count]:>8.2f} {best[count] * 1e3:>9.1f} "
                f"{best[count] / plain:>10.2f}x  {uses}",
                file=out,
            )
        _estimate(name, batch, call, estimate_gpus, out)
    return 0


def _estimate(name, batch, call, gpus, out):
    """The paper estimate for `gpus` replicas (see the module docstring)."""
    _, whole = call(profile=True)
    shard = -(-batch // gpus)
    _, split = call(max_batch=shard, profile=True)
    iterations = [p.iterations for p in split.pieces]
    # Each chunk is run alone, so its own utilization is its replica's.
    uses = [sum(p.block_active) / (p.iterations * p.batch) for p in split.pieces if p.iterations]
    ratio = whole.iterations / max(iterations)
    print(
        f"  {name}, {gpus} GPUs (paper estimate, {shard} examples each): one device "
        f"{whole.iterations} iterations at utilization {whole.utilization:.1%}; replicas "
        f"{min(iterations)}-{max(iterations)} iterations, utilization {min(uses):.1%}-"
        f"{max(uses):.1%} (mean {np.mean(uses):.1%}); speed-up {ratio:.2f}x if latency-bound, "
        f"{gpus * ratio:.1f}x if compute-bound (efficiency {ratio:.1%})",
        file=out,
    )
