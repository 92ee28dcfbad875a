"""A sampler's first call on a model, and one chain's time per gradient: ours against TFP and blackjax.

    JAX_PLATFORMS=cpu python tools/first_call_mcmc.py --targets eight_schools funnel --rounds 3
    JAX_PLATFORMS=cpu python tools/first_call_mcmc.py --per-gradient --targets eight_schools funnel

First calls: every measurement is a fresh Python process, and the time is
its first `run` (4 chains, 200 warm-up + 200 draws; imports, ArviZ's
among them, and building the model left out), so it pays tracing and XLA's compilation:
- `ours-jax, new model` / `ours, new model`: a model never run on this
  machine.  The batched program (one per model dimension, shared by all
  models) is already in the per-user cache, written by a throw-away process
  first; XLA's compilation is not on disk.
- `ours-jax, later process`: the same model again in a new process, XLA's
  compilation on disk (`autobatch.mcmc.compile_cache`, on by default).
- `ours (TF_XLA_FLAGS cache), later process`: the same on TensorFlow, whose
  cache the user turns on in the environment
  (`TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR`).
- `tfp`, `blackjax`: their first call in a new process, at their defaults
  (they keep nothing on disk unless their user sets it up).
Rounds alternate between the samplers; the medians are printed.

`--per-gradient`: one chain, 1,000 warm-up + 1,000 draws, the median of
`--rounds` later calls over its gradient evaluations (leapfrog steps,
warm-up included), ours on TensorFlow's XLA against TFP's NUTS with dual
averaging, in one process.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tools import bench_mcmc  # noqa: E402

# (label, runner name in bench_mcmc.RUNNERS, options for ours, keeps XLA's
# compilation on disk: JAX's by the sampler, TensorFlow's by TF_XLA_FLAGS)
FIRST_CALLS = (
    ("ours-jax, new model", "ours-jax", {"compilation_cache": True}, False),
    ("ours-jax, later process", "ours-jax", {"compilation_cache": True}, True),
    ("ours, new model", "ours", {}, False),
    ("ours (TF_XLA_FLAGS cache), later process", "ours", {}, True),
    ("tfp", "tfp", {}, False),
    ("blackjax", "blackjax", {}, False),
)


def child(sampler, target_name, chains, warmup, draws, options):
    """In the fresh process: the first call's seconds, printed as JSON."""
    import arviz  # noqa: F401 - ours converts its draws; the peers do not

    if sampler in bench_mcmc.ON_JAX:
        target = bench_mcmc.JAX_TARGETS[target_name]()
    else:
        target = bench_mcmc._targets()[target_name]()
    runner = bench_mcmc.RUNNERS[sampler]
    times, _, _ = runner(target, chains, warmup, draws, **options)
    print(json.dumps({"first": times[0]}))


def first_call(sampler, target, args, options, cache, tf_cache=False):
    """One fresh process's first call, in seconds."""
    env = dict(os.environ, AUTOBATCH_CACHE_DIR=cache, TF_CPP_MIN_LOG_LEVEL="3")
    if tf_cache:
        flag = f"--tf_xla_persistent_cache_directory={os.path.join(cache, 'xla', 'tensorflow')}"
        env["TF_XLA_FLAGS"] = f"{env.get('TF_XLA_FLAGS', '')} {flag}".strip()
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        sampler,
        target,
        str(args.chains),
        str(args.warmup),
        str(args.draws),
        json.dumps(options),
    ]
    out = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{sampler} on {target} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["first"]


def first_calls(args):
    for target in args.targets:
        cache = tempfile.mkdtemp(prefix="first-call-mcmc-")
        try:
            # The batched programs (one per backend and dimension) written
            # once, as any earlier model of this dimension would have; the
            # XLA caches this leaves are removed.
            for sampler in ("ours", "ours-jax"):
                first_call(sampler, target, args, {"compilation_cache": False}, cache)
            seconds = {label: [] for label, *_ in FIRST_CALLS}
            for _ in range(args.rounds):
                for label, sampler, options, keep in FIRST_CALLS:
                    if not keep:
                        shutil.rmtree(os.path.join(cache, "xla"), ignore_errors=True)
                    elif sampler == "ours":  # its compilation first put on disk
                        first_call(sampler, target, args, options, cache, tf_cache=True)
                    seconds[label].append(
                        first_call(sampler, target, args, options, cache, tf_cache=keep)
                    )
            tfp = statistics.median(seconds["tfp"])
            for label, values in seconds.items():
                median = statistics.median(values)
                print(
                    f"{target:14} {label:46} first call {median:6.2f} s "
                    f"({tfp / median:.2f}x TFP's speed; {', '.join(f'{v:.2f}' for v in values)})",
                    flush=True,
                )
        finally:
            shutil.rmtree(cache, ignore_errors=True)


def per_gradient(args):
    """One chain's later calls over its gradient evaluations, ours against TFP.

    Each sampler runs the same seed `--rounds` times after its first call,
    the two alternating (so a busy spell of the machine falls on both); the
    medians are printed.  One run of each was not enough on this 2-core
    machine: blr's ratio read 1.86x and 2.01x in single runs where the
    medians of five read 1.2x.
    """
    import numpy as np
    import tensorflow as tf
    import tensorflow_probability as tfp

    from autobatch.mcmc import MCMC, NUTS

    warmup = draws = 1000
    for name in args.targets:
        target = bench_mcmc._targets()[name]()
        mcmc = MCMC(
            NUTS(target.log_density),
            num_warmup=warmup,
            num_samples=draws,
            num_chains=1,
            progress_bar=False,
            compilation_cache=False,
        )
        mcmc.run(seed=0, dims=target.dims)
        kernel = bench_mcmc.tfp_kernel(target, warmup)

        # Every transition kept (no burn-in), so the trace counts the
        # warm-up's leapfrog steps too; the kernel adapts all the same.
        @tf.function(jit_compile=True)
        def sample(x0, seed):
            return tfp.mcmc.sample_chain(
                warmup + draws,
                x0,
                kernel=kernel,
                trace_fn=lambda _, r: r.inner_results.leapfrogs_taken,
                seed=seed,
            )

        x0 = tf.constant(np.random.default_rng(0).uniform(-2, 2, (1, target.dims)))
        sample(x0, tf.constant([0, 7]))
        ours_times, tfp_times = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            mcmc.run(seed=1, dims=target.dims)
            ours_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            _, leapfrogs = sample(x0, tf.constant([1, 7]))
            tfp_gradients = int(np.sum(leapfrogs.numpy()))
            tfp_times.append(time.perf_counter() - start)
        ours_gradients = int(mcmc.stats["n_steps"].sum() + mcmc.warmup_stats["n_steps"].sum())
        ours = statistics.median(ours_times)
        tfp_seconds = statistics.median(tfp_times)
        ours_each = ours / ours_gradients
        tfp_each = tfp_seconds / tfp_gradients
        print(
            f"{name:14} one chain, medians of {args.rounds}: ours {1e6 * ours_each:.1f} us per "
            f"gradient ({ours_gradients} in {ours:.3f} s), TFP {1e6 * tfp_each:.1f} us "
            f"({tfp_gradients} in {tfp_seconds:.3f} s): ours {ours_each / tfp_each:.2f}x TFP's "
            f"time per gradient, {ours / tfp_seconds:.2f}x its whole run",
            flush=True,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=["eight_schools", "funnel"])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-gradient", action="store_true")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sampler, target, chains, warmup, draws, options = args.child
        child(sampler, target, int(chains), int(warmup), int(draws), json.loads(options))
    elif args.per_gradient:
        per_gradient(args)
    else:
        first_calls(args)


if __name__ == "__main__":
    main()
