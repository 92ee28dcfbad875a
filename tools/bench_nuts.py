"""Benchmark: NUTS on a 100-d standard normal, ours against TFP's, in one run.

    python -m tools.bench_nuts                   # chains 1, 16, 64, 256
    python -m tools.bench_nuts --quick           # chains 16 and 64, few steps
    python -m tools.bench --programs nuts        # the same, through tools/bench.py

Step size 0.3, max tree depth 10, float64.  Samplers (cells):

- `ours-xla`, `ours-graph`, `ours-numpy`: examples/nuts.py through
  examples/nuts_sampler.Sampler, running the checked-in generated modules
  (`Context(frozen=True)`: nothing is generated).  The Sampler calls the
  batched NUTS step once per step from Python.
- `tfp-xla`: TFP's hand-batched `tfp.mcmc.NoUTurnSampler` in
  `tfp.mcmc.sample_chain` under `tf.function(jit_compile=True)`.
- `pred-xla`: the predecessor, TFP's auto-batched
  `tfp.experimental.mcmc.NoUTurnSampler` (nuts_autobatching.py), the same way.
  It runs in a subprocess with a time limit (`--predecessor-timeout`), so a
  build that does not finish gives a "did not finish" cell, not a hang.

Each cell: the first call builds the sampler and runs `--steps` steps (for
ours: generated-module import -- cached, so only in the process's first cell
of a backend -- trace, compile; for TFP: trace and compile), then `--repeats`
warm calls of `--steps` steps each, continuing from the last state with fresh
seeds.  "build" is first call minus the median warm call.  Per chain-step is
wall time / (steps x chains); per gradient is wall time / leapfrog steps
taken, summed over all chains (TFP's `leapfrogs_taken`, our
`Samples.leapfrogs`): useful gradient evaluations, not the padded ones a
batch computes.  Best and median are over the warm calls.  Utilization
(ours): one NUTS step from the warm state with `profile=True` on the NumPy
backend (the block schedule is the same on every backend; profiling the TF
ones would compile each again).  Check: mean and variance of all warm draws
(steps x chains x dims) must be near 0 and 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

DIMS = 100
STEP_SIZE = 0.3
MAX_TREE_DEPTH = 10
OURS = {
    "ours-xla": ("tensorflow", True),
    "ours-graph": ("tensorflow", False),
    "ours-numpy": ("numpy", False),
}


def initial_state(chains):
    """Exact draws from the target, the same for every sampler at a chain count."""
    return np.random.default_rng(1000 + chains).normal(size=(chains, DIMS))


def check(draws):
    """Mean and variance of all draws; sane if near 0 and 1."""
    mean, var = float(np.mean(draws)), float(np.var(draws))
    return mean, var, abs(mean) < 0.1 and abs(var - 1.0) < 0.2


def summarize(first, warm, chains, steps, draws):
    """warm: [(seconds, leapfrogs)] per warm call."""
    chain_steps = [t / (steps * chains) for t, _ in warm]
    per_grad = [t / lf for t, lf in warm]
    mean, var, good = check(draws)
    return {
        "first": first,
        "build": first - statistics.median(t for t, _ in warm),
        "step_best": min(chain_steps),
        "step_median": statistics.median(chain_steps),
        "grad_best": min(per_grad),
        "grad_median": statistics.median(per_grad),
        "leapfrogs": statistics.mean(lf for _, lf in warm) / (steps * chains),
        "mean": mean,
        "var": var,
        "check": "ok" if good else "BAD",
    }


# ---- our NUTS ---------------------------------------------------------------


def run_ours(mode, chains, steps, repeats):
    from examples import nuts_sampler
    from examples.nuts import standard_normal
    from transpiler import Context

    backend, xla = OURS[mode]
    x = initial_state(chains)
    seeds = np.arange(chains, dtype=np.int64)
    start = time.perf_counter()
    sampler = nuts_sampler.Sampler(
        standard_normal,
        STEP_SIZE,
        MAX_TREE_DEPTH,
        backend=backend,
        xla=xla,
        context=Context(frozen=True),
    )
    out = sampler.sample(x, seeds, steps)
    first = time.perf_counter() - start
    warm, draws = [], []
    for _ in range(repeats):
        x = out.x[-1]
        seeds = seeds + chains  # fresh streams for every call
        start = time.perf_counter()
        out = sampler.sample(x, seeds, steps)
        elapsed = time.perf_counter() - start
        warm.append((elapsed, int(np.sum(out.leapfrogs))))
        draws.append(out.x)
    result = summarize(first, warm, chains, steps, np.stack(draws))
    if backend == "numpy":
        point = sampler.initial_point(out.x[-1])
        _, profile = sampler.step(
            point,
            seeds + chains,
            np.zeros(chains, np.int64),
            backend="numpy",
            max_stack_depth=sampler.max_stack_depth,
            profile=True,
        )
        result["utilization"] = profile.utilization
        result["iterations"] = profile.iterations
    return result


# ---- TFP --------------------------------------------------------------------


def run_tfp(kind, chains, steps, repeats, report=None):
    """kind: "tfp" (hand-batched) or "pred" (the predecessor, auto-batched)."""
    import tensorflow as tf
    import tensorflow_probability as tfp

    def log_prob(x):
        return -0.5 * tf.reduce_sum(x * x, axis=-1)

    step_size = tf.constant(STEP_SIZE, tf.float64)
    start = time.perf_counter()
    if kind == "tfp":
        kernel = tfp.mcmc.NoUTurnSampler(
            log_prob, step_size, max_tree_depth=MAX_TREE_DEPTH
        )

        def chain(x, seed):
            return tfp.mcmc.sample_chain(
                steps,
                x,
                kernel=kernel,
                trace_fn=lambda _, kr: kr.leapfrogs_taken,
                seed=seed,
            )

    else:
        kernel = tfp.experimental.mcmc.NoUTurnSampler(
            log_prob, step_size, max_tree_depth=MAX_TREE_DEPTH, seed=1
        )

        def chain(x, seed):
            del seed  # the predecessor's kernel draws from its own seed stream
            return tfp.mcmc.sample_chain(
                steps, x, kernel=kernel, trace_fn=lambda _, kr: kr.leapfrogs_taken
            )

    compiled = tf.function(chain, jit_compile=True, autograph=False)

    def call(x, r):
        samples, leapfrogs = compiled(tf.constant(x), tf.constant([r, 17], tf.int32))
        samples, leapfrogs = samples.numpy(), leapfrogs.numpy()
        if kind == "pred":
            # The predecessor's kernel results count leapfrogs cumulatively
            # from sample_chain's bootstrap: the last row is the call's total.
            return samples, int(np.sum(leapfrogs[-1]))
        return samples, int(np.sum(leapfrogs))

    samples, _ = call(initial_state(chains), 0)
    first = time.perf_counter() - start
    if report:
        report({"first": first})
    warm, draws = [], []
    for r in range(repeats):
        x = samples[-1]
        start = time.perf_counter()
        samples, leapfrogs = call(x, r + 1)
        warm.append((time.perf_counter() - start, leapfrogs))
        draws.append(samples)
    return summarize(first, warm, chains, steps, np.stack(draws))


def run_predecessor(chains, steps, repeats, timeout):
    """The predecessor in a subprocess; a result dict, or one saying why there is none."""
    command = [
        sys.executable,
        "-m",
        "tools.bench_nuts",
        "--cell",
        "pred",
        "--chains",
        str(chains),
        "--steps",
        str(steps),
        "--repeats",
        str(repeats),
    ]
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()  # the child this function started, by its own handle
        stdout, stderr = proc.communicate()
    results = [
        json.loads(line[len("RESULT ") :])
        for line in stdout.splitlines()
        if line.startswith("RESULT ")
    ]
    if results and "step_best" in results[-1]:
        return results[-1]
    partial = results[-1] if results else {}
    if timed_out:
        done = f"first call {partial['first']:.1f} s, " if "first" in partial else ""
        return {**partial, "error": f"did not finish in {timeout:.0f} s ({done}killed)"}
    last = (stderr.strip().splitlines() or ["no output"])[-1]
    return {**partial, "error": f"failed (rc {proc.returncode}): {last[:120]}"}


def _cell_main(args):
    """`--cell pred|tfp`: one TFP cell, printing RESULT lines (for run_predecessor)."""

    def report(result):
        print("RESULT " + json.dumps(result), flush=True)

    for chains in args.chains:
        report(run_tfp(args.cell, chains, args.steps, args.repeats, report=report))
    return 0


# ---- the table ----------------------------------------------------------------


def _us(seconds):
    return f"{seconds * 1e6:,.1f}" if seconds is not None else "-"


def table(rows, out=sys.stdout):
    print(
        "| chains | sampler | first call s | build s | µs/chain-step best | median "
        "| µs/gradient best | median | leapfrogs/chain-step | utilization | mean | var | check |",
        file=out,
    )
    print("|" + "---|" * 13, file=out)
    for chains, mode, r in rows:
        if "error" in r:
            first = f"{r['first']:.1f}" if "first" in r else "-"
            print(
                f"| {chains} | {mode} | {first} | {r['error']} |" + " |" * 9, file=out
            )
            continue
        util = f"{r['utilization']:.1%}" if "utilization" in r else ""
        print(
            f"| {chains} | {mode} | {r['first']:.1f} | {r['build']:.1f} | {_us(r['step_best'])} "
            f"| {_us(r['step_median'])} | {_us(r['grad_best'])} | {_us(r['grad_median'])} "
            f"| {r['leapfrogs']:.1f} | {util} | {r['mean']:+.4f} | {r['var']:.4f} | {r['check']} |",
            file=out,
        )


def ratios(rows, out=sys.stdout):
    by = {(c, m): r for c, m, r in rows if "error" not in r}
    print(
        "\n| chains | ours-xla / tfp-xla per gradient (best) | pred-xla / ours-xla per gradient "
        "(best) | ours-graph / tfp-xla | ours-numpy / tfp-xla | first call: ours-xla / pred-xla "
        "| utilization (ours) |",
        file=out,
    )
    print("|" + "---|" * 7, file=out)
    for chains in sorted({c for c, _, _ in rows}):
        ours, tfp, pred = (
            by.get((chains, "ours-xla")),
            by.get((chains, "tfp-xla")),
            by.get((chains, "pred-xla")),
        )

        profiled = by.get((chains, "ours-numpy"), {})
        util = f"{profiled['utilization']:.1%}" if "utilization" in profiled else "-"

        def ratio(a, b, key="grad_best"):
            return f"{a[key] / b[key]:.2f}x" if a and b else "-"

        print(
            f"| {chains} | {ratio(ours, tfp)} | {ratio(pred, ours)} "
            f"| {ratio(by.get((chains, 'ours-graph')), tfp)} "
            f"| {ratio(by.get((chains, 'ours-numpy')), tfp)} | {ratio(ours, pred, 'first')} "
            f"| {util} |",
            file=out,
        )


def run(chains_list, steps, repeats, modes, predecessor_timeout, out=sys.stdout):
    rows = []
    for chains in chains_list:
        for mode in modes:
            print(
                f"[{time.strftime('%H:%M:%S')}] chains {chains}: {mode} ...",
                file=sys.stderr,
                flush=True,
            )
            try:
                if mode in OURS:
                    result = run_ours(mode, chains, steps, repeats)
                elif mode == "tfp-xla":
                    result = run_tfp("tfp", chains, steps, repeats)
                else:
                    result = run_predecessor(
                        chains, steps, repeats, predecessor_timeout
                    )
            except Exception as e:  # noqa: BLE001 - reported in the table
                result = {"error": f"error: {type(e).__name__}: {str(e)[:100]}"}
            rows.append((chains, mode, result))
            print(f"    {json.dumps(result)}", file=sys.stderr, flush=True)
    print(file=out)
    table(rows, out)
    ratios(rows, out)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="chains 16 and 64, 3 steps, 2 repeats"
    )
    parser.add_argument(
        "--chains", type=int, nargs="*", help="chain counts (default 1 16 64 256)"
    )
    parser.add_argument(
        "--steps", type=int, help="NUTS steps per call (default 10; quick 3)"
    )
    parser.add_argument(
        "--repeats", type=int, help="warm calls per cell (default 3; quick 2)"
    )
    parser.add_argument(
        "--modes",
        nargs="*",
        default=None,
        help="a subset of: ours-xla ours-graph ours-numpy tfp-xla pred-xla",
    )
    parser.add_argument("--no-predecessor", action="store_true", help="skip pred-xla")
    parser.add_argument(
        "--predecessor-timeout",
        type=float,
        default=None,
        help="seconds per predecessor cell (a subprocess: its imports, build and runs; default 420, quick 180)",
    )
    parser.add_argument("--cell", choices=["pred", "tfp"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.chains = args.chains or ([16, 64] if args.quick else [1, 16, 64, 256])
    args.steps = args.steps or (3 if args.quick else 10)
    args.repeats = args.repeats or (2 if args.quick else 3)
    if args.cell:
        return _cell_main(args)
    modes = args.modes or [
        "ours-xla",
        "ours-graph",
        "ours-numpy",
        "tfp-xla",
        "pred-xla",
    ]
    if args.no_predecessor:
        modes = [m for m in modes if m != "pred-xla"]
    timeout = args.predecessor_timeout or (180.0 if args.quick else 420.0)
    command = "python -m tools.bench_nuts " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    print(f"command: {command.strip()}")
    print(
        f"{DIMS}-d standard normal, step size {STEP_SIZE}, max tree depth {MAX_TREE_DEPTH}, "
        f"float64; {args.steps} steps per call, {args.repeats} warm calls; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
    )
    start = time.perf_counter()
    run(args.chains, args.steps, args.repeats, modes, timeout)
    print(
        f"\nwall {time.perf_counter() - start:.0f} s; load average {os.getloadavg()[0]:.2f} at end. "
        "Ratios are time / time (above 1: the first is slower), all from this run."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
