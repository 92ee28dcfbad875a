"""`autobatch demo`: batch every example, check it, time it against a Python loop.

For each program of examples/corpus.py: run the generated module on NumPy,
TensorFlow (graph), TensorFlow+XLA and JAX (when installed), check every result against the plain
per-example Python function, and print warm times next to the Python loop
over the examples.

It opens with a case where batching wins on a laptop CPU: Collatz step
counts over 4096 examples, a `while` loop whose trip count differs per
example (tens to hundreds of trips), about ten times faster than a Python
loop under XLA or JAX.  Then the table, then where batching does not win
here: doubly recursive fib over 4096 examples, whose per-example work is a
few additions, so a Python loop keeps up (printed as measured).  Last, the
flagship: NUTS (examples/nuts.py), written for one chain, sampling a
correlated 3-d Gaussian with a batch of chains under XLA, posterior moments
printed against the truth.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

import numpy as np

MODES = (
    ("numpy", dict(backend="numpy")),
    ("tf graph", dict(backend="tensorflow")),
    ("tf xla", dict(backend="tensorflow", xla=True)),
) + ((("jax", dict(backend="jax")),) if importlib.util.find_spec("jax") else ())


def _to_numpy(value):
    if isinstance(value, (tuple, list)):  # a list of arrays: a result kept a list
        return tuple(_to_numpy(v) for v in value)
    return np.asarray(value)


def _flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [np.asarray(value)]


def agrees(batched, expected_list):
    """True when the batched result equals the per-example results, leaf by leaf."""
    batched = _flatten(_to_numpy(batched))
    expected = [_flatten(e) for e in expected_list]
    for k, leaf in enumerate(batched):
        want = np.array([e[k] for e in expected]).reshape(leaf.shape)
        if leaf.dtype.kind == "f":
            if not np.allclose(leaf, want, rtol=1e-6, atol=1e-9, equal_nan=True):
                return False
        elif not np.array_equal(leaf, want):
            return False
    return True


def best_time(fn, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def python_loop(plain, inputs, batch):
    from examples.corpus import example

    return [plain(*example(inputs, i)) for i in range(batch)]


def run_case(case, inputs, batch, repeats=3):
    """{mode: (first-call seconds, warm seconds, agrees)} plus the Python loop time."""
    from examples.corpus import example

    ctx = case.function.context
    plain = ctx.plain(case.function.name)
    expected = [plain(*example(inputs, i)) for i in range(batch)]
    row = {}
    for mode, kwargs in MODES:
        call = lambda: case.function(  # noqa: E731
            *inputs, max_stack_depth=case.max_stack_depth, **kwargs
        )
        start = time.perf_counter()
        result = call()
        first = time.perf_counter() - start
        row[mode] = (first, best_time(call, repeats), agrees(result, expected))
    loop = best_time(lambda: python_loop(plain, inputs, batch), repeats)
    return row, loop


def main(batch=256, headline_batch=4096, out=sys.stdout):
    root = os.getcwd()
    if root not in sys.path:
        sys.path.insert(0, root)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from examples.collatz import collatz_steps
    from examples.corpus import CASES, Case
    from examples.fib import fib

    rng = np.random.default_rng(0)
    print(
        f"autobatch demo: Collatz step counts over {headline_batch} examples, x in [1, 100000]",
        file=out,
    )
    print("(one program for the whole batch; checked against the plain Python function)\n", file=out)
    ok = headline(Case("collatz", collatz_steps, None), (rng.integers(1, 100_001, headline_batch),), out)

    print(f"\nevery example on {batch} examples, warm times", file=out)
    print("(each checked against the plain Python function, example by example)\n", file=out)
    width = max(len("program"), *(len(case.name) for case in CASES))
    header = f"{'program':<{width}} " + " ".join(f"{m:>10}" for m, _ in MODES) + f" {'py loop':>10}  check"
    print(header, file=out)
    for case in CASES:
        inputs = case.inputs(rng, batch)
        row, loop = run_case(case, inputs, batch)
        good = all(r[2] for r in row.values())
        ok &= good
        cells = " ".join(f"{_ms(row[m][1]):>10}" for m, _ in MODES)
        print(f"{case.name:<{width}} {cells} {_ms(loop):>10}  {'ok' if good else 'MISMATCH'}", file=out)

    print(
        f"\nwhere batching does not win on a CPU: fib over {headline_batch} examples, n in [5, 16]"
        "\n(a few additions per call: a Python loop keeps up)",
        file=out,
    )
    ok &= headline(Case("fib", fib, None), (rng.integers(5, 17, headline_batch),), out)
    ok &= nuts_demo(out=out)
    print("\nall results agree with plain Python" if ok else "\nMISMATCHES FOUND", file=out)
    return 0 if ok else 1


def headline(case, inputs, out):
    """One program over a large batch in every mode: first call, warm time,
    and speed-up over the Python loop (above 1: faster).  True if every
    mode agrees with plain Python."""
    batch = len(inputs[0])
    row, loop = run_case(case, inputs, batch)
    ok = True
    print(f"{'mode':<10} {'first call':>11} {'warm':>10} {'speed-up':>9}  check", file=out)
    for mode, _ in MODES:
        first, warm, good = row[mode]
        ok &= good
        print(
            f"{mode:<10} {_ms(first):>11} {_ms(warm):>10} {loop / warm:>8.2f}x  "
            f"{'ok' if good else 'MISMATCH'}",
            file=out,
        )
    print(f"{'py loop':<10} {'':>11} {_ms(loop):>10} {1:>8.2f}x", file=out)
    return ok


def nuts_demo(chains=256, burnin=50, steps=32, out=sys.stdout):
    """NUTS on a correlated 3-d Gaussian: posterior mean and sd against the truth.

    The check allows 0.15 standard deviations per coordinate: with 256 chains
    of 32 correlated draws the Monte Carlo error is a few hundredths.  32
    draws fill the whole-chain program's smallest buffers (32 rows), the
    3-d program the checked-in artifact holds.
    """
    from examples.nuts_sampler import Gaussian, Sampler

    mean = np.array([1.0, -1.0, 0.5])
    covariance = np.array([[1.0, 0.8, -0.3], [0.8, 2.0, 0.0], [-0.3, 0.0, 0.5]])
    sampler = Sampler(Gaussian(mean, covariance), 0.4, backend="tensorflow", xla=True)
    x0 = np.random.default_rng(0).normal(size=(chains, 3))
    start = time.perf_counter()
    sampler.sample(x0, np.arange(chains), 1)
    first = time.perf_counter() - start
    start = time.perf_counter()
    run = sampler.sample(x0, np.arange(chains), steps, num_burnin=burnin)
    seconds = time.perf_counter() - start
    draws = run.x.reshape(-1, 3)
    sd = np.sqrt(np.diag(covariance))
    got_mean, got_sd = draws.mean(axis=0), draws.std(axis=0)
    good = bool(np.all(np.abs(got_mean - mean) < 0.15 * sd) and np.all(np.abs(got_sd - sd) < 0.15 * sd))
    print(
        f"\nNUTS (examples/nuts.py, one chain's code) on a correlated 3-d Gaussian: "
        f"{chains} chains x {steps} draws after {burnin} warm-up, XLA",
        file=out,
    )
    print(
        f"first call {first:.1f} s; {burnin + steps} steps in {seconds:.2f} s; "
        f"{run.leapfrogs.mean():.1f} leapfrog steps per draw on average "
        f"(from {run.leapfrogs.min()} to {run.leapfrogs.max()}), acceptance {run.accept.mean():.2f}",
        file=out,
    )
    print(f"{'':<6} {'true mean':>10} {'NUTS mean':>10} {'true sd':>8} {'NUTS sd':>8}", file=out)
    for k in range(3):
        print(
            f"{f'x[{k}]':<6} {mean[k]:>10.3f} {got_mean[k]:>10.3f} {sd[k]:>8.3f} {got_sd[k]:>8.3f}",
            file=out,
        )
    print("posterior moments " + ("agree with the truth" if good else "DO NOT AGREE"), file=out)
    return good


def _ms(seconds):
    return f"{seconds * 1000:.1f} ms"
