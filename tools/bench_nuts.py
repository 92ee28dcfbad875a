"""Benchmark: NUTS, ours against TFP's and blackjax's, in one run.

    python -m tools.bench_nuts                   # 100-d normal; chains 1, 16, 64, 256
    python -m tools.bench_nuts --quick           # chains 16 and 64, few steps
    python -m tools.bench_nuts --target funnel   # heterogeneous: 256 chains, 1000 transitions
    python -m tools.bench --programs nuts        # the same, through tools/bench.py

Targets (`--target`), float64, max tree depth 10, a fixed step size:

- `normal100` (default): 100-d standard normal, step size 0.3.  Every chain
  takes about the same number of leapfrogs per transition.
- `funnel`: Neal's funnel, v ~ N(0, 3^2) and 9 x_i ~ N(0, e^v), step 0.3
  (`examples/nuts_sampler.Funnel`).  Trajectories are long in the mouth and
  short (or divergent) in the neck: tree depth varies across chains and
  transitions.
- `illcond`: 10-d Gaussian with standard deviations spread from 0.1 to 10
  (log-spaced), step 0.1.

Samplers (cells):

- `ours-xla`, `ours-graph`, `ours-numpy`: examples/nuts.py through
  examples/nuts_sampler.Sampler.  `sample` runs every transition of every
  chain in one batched `nuts_chain` call (chains drift out of step).  The
  benchmark's programs (10-d targets, 100-d chains, 1024-row buffers) are
  not in the checked-in artifact: a Context whose `generated_dir` is a
  cache folder (`--cache-dir`, default $AUTOBATCH_BENCH_CACHE or
  ~/.cache/autobatch-bench; one subfolder per target) generates them
  there, before and outside the timed calls ("generate s": generating, or
  finding the module fresh in the cache, and importing it), so neither
  generated/ nor autobatch.lock changes.
- `ours-xla-step`: the same, but `sample(per_transition=True)`: the batched
  one-transition `nuts_step` called from Python once per transition, so each
  transition waits for its slowest chain.
- `tfp-xla`: TFP's hand-batched `tfp.mcmc.NoUTurnSampler` in
  `tfp.mcmc.sample_chain` under `tf.function(jit_compile=True)`.
- `blackjax-jit`: blackjax's `nuts`, one chain's `lax.scan` over transitions
  `jax.vmap`-ed over chains under `jax.jit` (`pip install -e ".[bench]"`;
  without jax and blackjax the cell prints a note and is skipped).
- `pred-xla`: the predecessor, TFP's auto-batched
  `tfp.experimental.mcmc.NoUTurnSampler` (nuts_autobatching.py), the same way.
  It runs in a subprocess with a time limit (`--predecessor-timeout`), so a
  build that does not finish gives a "did not finish" cell, not a hang.

Each cell: the first call builds the sampler and runs `--steps` steps (for
ours: trace and compile, the module generated and imported beforehand; for
TFP and blackjax: trace and compile),
then `--repeats` warm calls of `--steps` steps each, continuing from the
last state with fresh seeds.  "build" is first call minus the median warm
call, "-" where the warm calls took longer than the first (on the funnel
the chains leave the start for the neck, where trees are deeper, so the
difference says nothing about building).  Per chain-step is wall time / (steps x chains); per gradient is wall
time / leapfrog steps taken, summed over all chains (TFP's
`leapfrogs_taken`, blackjax's `num_integration_steps`, our
`Samples.leapfrogs`): useful gradient evaluations, not the padded ones a
batch computes.  Best and median are over the warm calls.  "leapfrogs
min/median/max" is the spread of leapfrogs per transition over chains and
transitions of the warm calls.  Utilization (ours): one NUTS step from the
warm state with `profile=True` on the NumPy backend (the block schedule is
the same on every backend).  Check: moments of all warm draws (steps x
chains x dims) near the target's (normal: mean 0, variance 1; illcond:
the same after dividing by each coordinate's sd; funnel: v's mean 0 and
variance 9, loosely, since a fixed step undersamples the neck).
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

MAX_TREE_DEPTH = 10
CACHE_DIR = os.environ.get("AUTOBATCH_BENCH_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "autobatch-bench"
)
OURS = {
    "ours-xla": ("tensorflow", True, False),
    "ours-xla-step": ("tensorflow", True, True),
    "ours-graph": ("tensorflow", False, False),
    "ours-numpy": ("numpy", False, False),
}
ALL_MODES = [*OURS, "tfp-xla", "blackjax-jit", "pred-xla"]


class Target:
    """A benchmark target: its dims, step size, exact initial draws, the
    (log_prob, grad) our sampler takes, and the log density alone for the
    peers (TFP and JAX differentiate it themselves)."""

    def __init__(self, name, dims, step_size, scales=None):
        self.name, self.dims, self.step_size = name, dims, step_size
        self.scales = scales  # illcond: [dims] standard deviations

    def describe(self):
        if self.name == "normal100":
            return f"{self.dims}-d standard normal, step size {self.step_size}"
        if self.name == "funnel":
            return f"Neal's funnel (v and {self.dims - 1} x), step size {self.step_size}"
        return (
            f"{self.dims}-d Gaussian, sds {self.scales[0]:g} to {self.scales[-1]:g} "
            f"(log-spaced), step size {self.step_size}"
        )

    def initial_state(self, chains):
        """Exact draws from the target, the same for every sampler at a chain count."""
        rng = np.random.default_rng(1000 + chains)
        if self.name == "funnel":
            from examples.nuts_sampler import Funnel

            return Funnel(self.dims).exact(rng, chains)
        z = rng.normal(size=(chains, self.dims))
        return z * self.scales if self.scales is not None else z

    def ours(self):
        """`target(x) -> (log_prob, grad)` for examples/nuts_sampler."""
        from examples import nuts_sampler

        if self.name == "funnel":
            return nuts_sampler.Funnel(self.dims)
        if self.scales is not None:
            return nuts_sampler.Gaussian(np.zeros(self.dims), np.diag(self.scales**2))
        from examples.nuts import standard_normal

        return standard_normal

    def log_prob(self, ops):
        """The log density for TFP (ops = tf.math) or JAX (ops = jax.numpy)."""
        if self.name == "funnel":
            k = self.dims - 1

            def funnel(z):
                v, x = z[..., 0], z[..., 1:]
                squares = ops.reduce_sum(x * x, axis=-1) if hasattr(ops, "reduce_sum") else ops.sum(x * x, axis=-1)
                return -v * v / 18.0 - 0.5 * squares * ops.exp(-v) - 0.5 * k * v

            return funnel
        inverse = 1.0 if self.scales is None else 1.0 / self.scales**2

        def gaussian(x):
            terms = x * x * inverse
            total = ops.reduce_sum(terms, axis=-1) if hasattr(ops, "reduce_sum") else ops.sum(terms, axis=-1)
            return -0.5 * total

        return gaussian

    def check(self, draws):
        """Mean and variance of the draws in the target's own units; sane or not."""
        draws = np.asarray(draws)
        if self.name == "funnel":
            v = draws[..., 0]
            mean, var = float(np.mean(v)), float(np.var(v))
            return mean, var, abs(mean) < 1.0 and abs(var - 9.0) < 4.5
        if self.scales is not None:
            draws = draws / self.scales
        mean, var = float(np.mean(draws)), float(np.var(draws))
        return mean, var, abs(mean) < 0.1 and abs(var - 1.0) < 0.2


TARGETS = {
    "normal100": Target("normal100", 100, 0.3),
    "funnel": Target("funnel", 10, 0.3),
    "illcond": Target("illcond", 10, 0.1, np.logspace(-1.0, 1.0, 10)),
}


def summarize(target, first, warm, chains, steps, draws, leapfrogs):
    """warm: [(seconds, leapfrogs)] per warm call; leapfrogs: every warm
    transition's count, any shape."""
    chain_steps = [t / (steps * chains) for t, _ in warm]
    per_grad = [t / lf for t, lf in warm]
    mean, var, good = target.check(draws)
    leapfrogs = np.asarray(leapfrogs)
    return {
        "leapfrogs_min": int(np.min(leapfrogs)),
        "leapfrogs_median": float(np.median(leapfrogs)),
        "leapfrogs_max": int(np.max(leapfrogs)),
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


def generate_ours(sampler, x, seeds, steps, per_transition):
    """Generates the module `sample` will run into the sampler's Context's
    folder (the cache), or finds it there fresh, without running it: seconds.

    A program is generated for the signature of its call's arguments, so
    the call's own arguments are built and the function prepared for them
    (`BatchedFunction.prepare`, what a call does before it runs).
    """
    if per_transition:
        fn = sampler.step
        args = (sampler.initial_point(x), seeds, np.zeros(len(seeds), np.int64))
    else:
        fn = sampler.chain
        args = sampler.chain_arguments(x, seeds, steps)
    start = time.perf_counter()
    fn.prepare(*args, backend=sampler.backend)
    return time.perf_counter() - start


def run_ours(mode, target, chains, steps, repeats, cache_dir=CACHE_DIR):
    from examples import nuts_sampler
    from transpiler import Context

    backend, xla, per_transition = OURS[mode]
    x = target.initial_state(chains)
    seeds = np.arange(chains, dtype=np.int64)
    # Not the project's generated/: the benchmark's programs stay out of the
    # checked-in artifact and autobatch.lock (a Context with its own folder
    # keeps the programs its modules hold and reads no lock).
    context = Context(generated_dir=os.path.join(cache_dir, target.name), frozen=False)
    sampler = nuts_sampler.Sampler(
        target.ours(), target.step_size, MAX_TREE_DEPTH, backend=backend, xla=xla, context=context
    )
    generate = generate_ours(sampler, x, seeds, steps, per_transition)
    start = time.perf_counter()
    out = sampler.sample(x, seeds, steps, per_transition=per_transition)
    first = time.perf_counter() - start
    warm, draws, leapfrogs = [], [], []
    for _ in range(repeats):
        x = out.x[-1]
        seeds = seeds + chains  # fresh streams for every call
        start = time.perf_counter()
        out = sampler.sample(x, seeds, steps, per_transition=per_transition)
        elapsed = time.perf_counter() - start
        warm.append((elapsed, int(np.sum(out.leapfrogs))))
        draws.append(out.x)
        leapfrogs.append(out.leapfrogs)
    result = summarize(target, first, warm, chains, steps, np.stack(draws), leapfrogs)
    result["generate"] = generate
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


# ---- blackjax ---------------------------------------------------------------


def blackjax_missing():
    """A note saying why the blackjax cell cannot run, or None."""
    try:
        import blackjax  # noqa: F401
        import jax  # noqa: F401
    except ImportError as e:
        return f"not installed ({e.name}): pip install -e \".[bench]\""
    return None


def run_blackjax(target, chains, steps, repeats):
    """blackjax's NUTS, one chain written with lax.scan, vmapped over chains
    under jax.jit: every chain's tree doubling is one `while_loop` that the
    vmap runs until the slowest chain of the batch is done (lockstep)."""
    import blackjax
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    start = time.perf_counter()
    nuts = blackjax.nuts(
        target.log_prob(jnp),
        target.step_size,
        jnp.ones(target.dims, jnp.float64),
        max_num_doublings=MAX_TREE_DEPTH,
    )

    def one_chain(x0, key):
        def transition(state, key):
            state, info = nuts.step(key, state)
            return state, (state.position, info.num_integration_steps)

        _, (xs, leapfrogs) = jax.lax.scan(transition, nuts.init(x0), jax.random.split(key, steps))
        return xs, leapfrogs  # [steps, dims], [steps]

    compiled = jax.jit(jax.vmap(one_chain))

    def call(x, r):
        keys = jax.random.split(jax.random.key(r), chains)
        xs, leapfrogs = compiled(jnp.asarray(x), keys)
        # [chains, steps, ...] -> [steps, chains, ...], as the others give.
        return np.swapaxes(np.asarray(xs), 0, 1), np.asarray(leapfrogs).T

    samples, _ = call(target.initial_state(chains), 0)
    first = time.perf_counter() - start
    warm, draws, counts = [], [], []
    for r in range(repeats):
        x = samples[-1]
        start = time.perf_counter()
        samples, leapfrogs = call(x, r + 1)
        warm.append((time.perf_counter() - start, int(np.sum(leapfrogs))))
        draws.append(samples)
        counts.append(leapfrogs)
    return summarize(target, first, warm, chains, steps, np.stack(draws), counts)


# ---- TFP --------------------------------------------------------------------


def run_tfp(kind, target, chains, steps, repeats, report=None):
    """kind: "tfp" (hand-batched) or "pred" (the predecessor, auto-batched)."""
    import tensorflow as tf
    import tensorflow_probability as tfp

    log_prob = target.log_prob(tf.math)
    step_size = tf.constant(target.step_size, tf.float64)
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
            per_transition = np.diff(leapfrogs, axis=0, prepend=0)
            return samples, int(np.sum(leapfrogs[-1])), per_transition
        return samples, int(np.sum(leapfrogs)), leapfrogs

    samples, _, _ = call(target.initial_state(chains), 0)
    first = time.perf_counter() - start
    if report:
        report({"first": first})
    warm, draws, counts = [], [], []
    for r in range(repeats):
        x = samples[-1]
        start = time.perf_counter()
        samples, leapfrogs, per_transition = call(x, r + 1)
        warm.append((time.perf_counter() - start, leapfrogs))
        draws.append(samples)
        counts.append(per_transition)
    return summarize(target, first, warm, chains, steps, np.stack(draws), counts)


def run_predecessor(target, chains, steps, repeats, timeout):
    """The predecessor in a subprocess; a result dict, or one saying why there is none."""
    command = [
        sys.executable,
        "-m",
        "tools.bench_nuts",
        "--cell",
        "pred",
        "--target",
        target.name,
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
        report(
            run_tfp(args.cell, TARGETS[args.target], chains, args.steps, args.repeats, report=report)
        )
    return 0


# ---- the table ----------------------------------------------------------------


def _us(seconds):
    return f"{seconds * 1e6:,.1f}" if seconds is not None else "-"


def _build(seconds):
    return f"{seconds:.1f}" if seconds >= 0 else "-"


def table(rows, out=sys.stdout):
    print(
        "| chains | sampler | generate s | first call s | build s | µs/chain-step best | median "
        "| µs/gradient best | median | leapfrogs/chain-step | leapfrogs min/median/max "
        "| utilization | mean | var | check |",
        file=out,
    )
    print("|" + "---|" * 15, file=out)
    for chains, mode, r in rows:
        if "error" in r:
            first = f"{r['first']:.1f}" if "first" in r else "-"
            print(
                f"| {chains} | {mode} | | {first} | {r['error']} |" + " |" * 10, file=out
            )
            continue
        util = f"{r['utilization']:.1%}" if "utilization" in r else ""
        generate = f"{r['generate']:.1f}" if "generate" in r else ""
        print(
            f"| {chains} | {mode} | {generate} | {r['first']:.1f} | {_build(r['build'])} | {_us(r['step_best'])} "
            f"| {_us(r['step_median'])} | {_us(r['grad_best'])} | {_us(r['grad_median'])} "
            f"| {r['leapfrogs']:.1f} "
            f"| {r['leapfrogs_min']} / {r['leapfrogs_median']:g} / {r['leapfrogs_max']} "
            f"| {util} | {r['mean']:+.4f} | {r['var']:.4f} | {r['check']} |",
            file=out,
        )


def ratios(rows, out=sys.stdout):
    """Per useful gradient (best warm call), each of ours against each peer."""
    by = {(c, m): r for c, m, r in rows if "error" not in r}
    pairs = [
        ("ours-xla", "tfp-xla"),
        ("ours-xla", "blackjax-jit"),
        ("ours-xla", "ours-xla-step"),
        ("ours-xla-step", "tfp-xla"),
        ("ours-graph", "tfp-xla"),
        ("ours-numpy", "tfp-xla"),
        ("pred-xla", "ours-xla"),
        ("tfp-xla", "blackjax-jit"),
    ]
    modes = {m for _, m, _ in rows}
    pairs = [(a, b) for a, b in pairs if a in modes and b in modes]
    print(
        "\n| chains | "
        + " | ".join(f"{a} / {b} per gradient" for a, b in pairs)
        + " | first call ours-xla s | utilization (ours) |",
        file=out,
    )
    print("|" + "---|" * (len(pairs) + 3), file=out)
    for chains in sorted({c for c, _, _ in rows}):

        def ratio(a, b, key="grad_best"):
            a, b = by.get((chains, a)), by.get((chains, b))
            return f"{a[key] / b[key]:.2f}x" if a and b else "-"

        profiled = by.get((chains, "ours-numpy"), {})
        util = f"{profiled['utilization']:.1%}" if "utilization" in profiled else "-"
        ours = by.get((chains, "ours-xla"))
        first = f"{ours['first']:.1f}" if ours else "-"
        print(
            f"| {chains} | " + " | ".join(ratio(a, b) for a, b in pairs) + f" | {first} | {util} |",
            file=out,
        )


def run(target, chains_list, steps, repeats, modes, predecessor_timeout, out=sys.stdout, cache_dir=CACHE_DIR):
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
                    result = run_ours(mode, target, chains, steps, repeats, cache_dir)
                elif mode == "tfp-xla":
                    result = run_tfp("tfp", target, chains, steps, repeats)
                elif mode == "blackjax-jit":
                    missing = blackjax_missing()
                    if missing:
                        print(f"note: blackjax-jit skipped: {missing}", file=out)
                        continue
                    result = run_blackjax(target, chains, steps, repeats)
                else:
                    result = run_predecessor(
                        target, chains, steps, repeats, predecessor_timeout
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
        "--target",
        choices=sorted(TARGETS),
        default="normal100",
        help="normal100 (default), funnel or illcond (heterogeneous tree depths)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="chains 16 and 64, 3 steps, 2 repeats"
    )
    parser.add_argument(
        "--chains",
        type=int,
        nargs="*",
        help="chain counts (default 1 16 64 256; 256 for funnel and illcond)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        help="NUTS transitions per call (default 10, 1000 for funnel and illcond; quick 3)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        help="warm calls per cell (default 3, 1 for funnel and illcond; quick 2)",
    )
    parser.add_argument(
        "--modes",
        nargs="*",
        default=None,
        help="a subset of: " + " ".join(ALL_MODES),
    )
    parser.add_argument(
        "--cache-dir",
        default=CACHE_DIR,
        help="where our programs are generated (default $AUTOBATCH_BENCH_CACHE or ~/.cache/autobatch-bench)",
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
    heterogeneous = args.target != "normal100"
    target = TARGETS[args.target]
    default_chains = [256] if heterogeneous else [1, 16, 64, 256]
    args.chains = args.chains or ([16, 64] if args.quick else default_chains)
    args.steps = args.steps or (3 if args.quick else 1000 if heterogeneous else 10)
    args.repeats = args.repeats or (2 if args.quick else 1 if heterogeneous else 3)
    if args.cell:
        return _cell_main(args)
    if args.modes:
        modes = args.modes
    elif heterogeneous:
        modes = ["ours-xla", "ours-xla-step", "tfp-xla", "blackjax-jit"]
    else:
        modes = ["ours-xla", "ours-xla-step", "ours-graph", "ours-numpy", "tfp-xla", "blackjax-jit", "pred-xla"]
    unknown = [m for m in modes if m not in ALL_MODES]
    if unknown:
        parser.error(f"unknown modes {unknown}; choose from {ALL_MODES}")
    if args.no_predecessor:
        modes = [m for m in modes if m != "pred-xla"]
    timeout = args.predecessor_timeout or (180.0 if args.quick else 420.0)
    command = "python -m tools.bench_nuts " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    print(f"command: {command.strip()}")
    print(
        f"{target.describe()}, max tree depth {MAX_TREE_DEPTH}, "
        f"float64; {args.steps} transitions per call, {args.repeats} warm calls; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
    )
    start = time.perf_counter()
    print(f"our programs: generated into {args.cache_dir}/{target.name} (not generated/)")
    run(target, args.chains, args.steps, args.repeats, modes, timeout, cache_dir=args.cache_dir)
    print(
        f"\nwall {time.perf_counter() - start:.0f} s; load average {os.getloadavg()[0]:.2f} at end. "
        "Ratios are time / time (above 1: the first is slower), all from this run."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
