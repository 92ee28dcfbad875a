"""autobatch.mcmc against TFP's, blackjax's and numpyro's NUTS: min bulk ESS per second, divergences.

    python tools/bench_mcmc.py                          # posteriordb's fast four, funnel, 100-d Gaussian; 4 and 256 chains
    python tools/bench_mcmc.py --targets eight_schools --chains 4 --warmup 200 --draws 200
    python tools/bench_mcmc.py --samplers ours-jax blackjax numpyro   # JAX only
    python tools/bench_mcmc.py --chains 1024 --out docs/bench_mcmc_1024.json   # rows as JSON too

Per target and chain count, each sampler runs twice in one process: the first
call (program generation, tracing and XLA compilation included) is reported
apart, and the second call's time (warm-up included) divides the minimum bulk
ESS over parameters.  Samplers (`--samplers`):

- `ours`: autobatch.mcmc on TensorFlow (XLA), the model in TF ops;
- `ours-jax`: autobatch.mcmc on JAX, the same model in jax.numpy;
- `tfp`: TFP's NUTS, chains vectorized (lockstep), with
  DualAveragingStepSizeAdaptation (no mass matrix), under tf.function with
  jit_compile=True;
- `blackjax`: blackjax's window_adaptation (Stan's windows: step size and
  diagonal mass matrix) then NUTS, one chain's code `jax.vmap`-ed over the
  chains (so trees run in lockstep) under one `jax.jit`;
- `numpyro`: numpyro's NUTS (diagonal mass matrix, Stan's windows) on a
  potential function, `chain_method="vectorized"`.  Its `MCMC.run` traces
  and compiles again on every call (about 3 s for eight schools on 2
  cores, measured: 4.3 s for 100 transitions, 3.4 s for 1,000), so its
  second call includes a compilation that the others' do not.

Peers are optional: one that is not installed (TFP: the `peer` extra;
blackjax: the `bench` extra; numpyro: `pip install numpyro`) prints a note and
is skipped.  Every sampler runs in float64 (importing autobatch's JAX runtime
turns on `jax_enable_x64`) and starts from uniform(-2, 2).

`--out FILE` writes the rows as JSON (`{"runs": [{...}], "rows": [...]}`:
per run the command line, package versions and settings; per row its run's
index in `run`), rewritten after every row so that a run cut short keeps
what it measured; with `--append` the rows of an existing FILE stay and this
run's follow.  `tools/plot_bench_mcmc.py` draws it.  `--skip SAMPLER:TARGET` leaves out one pair (a row with
`"skipped"` and the reason says so in the file, as for a JAX sampler on a
model with no jax.numpy version).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


POSTERIORDB = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "posteriordb"
)


def _targets():
    """{name: target class}, each with `name`, `dims` and `log_density(x)` in
    TensorFlow ops for x: [chains, dims]; `JAX_TARGETS` holds the same
    densities in jax.numpy."""
    import tensorflow as tf

    from tests import posteriordb_models as models

    class Funnel:
        name, dims = "funnel-10d", 10

        def log_density(self, z):
            v, x = z[:, 0], z[:, 1:]
            return (
                -v * v / 18.0
                - 0.5 * tf.reduce_sum(x * x, axis=-1) * tf.exp(-v)
                - 0.5 * (self.dims - 1) * v
            )

    class Gaussian100:
        name, dims = "gaussian-100d", 100
        scales = np.geomspace(0.1, 10.0, 100)

        def log_density(self, x):
            return -0.5 * tf.reduce_sum(tf.square(x / self.scales), axis=-1)

    return {
        "arK": models.ArK,
        "eight_schools": models.EightSchools,
        "kidiq": models.KidIQ,
        "blr": models.BLR,
        "gp_pois_regr": models.GpPoisRegr,
        "funnel": Funnel,
        "gaussian100": Gaussian100,
    }


def _posteriordb_data(name):
    import json

    with open(os.path.join(POSTERIORDB, name, "data.json")) as f:
        data = json.load(f)
    return {k: np.asarray(v, np.float64) if isinstance(v, list) else v for k, v in data.items()}


def _jax_normal(value, mean, sd):
    """log N(value; mean, sd) up to a constant, as tests/posteriordb_models._normal."""
    import jax.numpy as jnp

    return -0.5 * ((value - mean) / sd) ** 2 - jnp.log(sd)


def _jax_half_cauchy_log_sigma(log_sigma, scale):
    """Cauchy(0, scale) on sigma = exp(log_sigma), plus the log-Jacobian."""
    import jax.numpy as jnp

    return -jnp.log1p((jnp.exp(log_sigma) / scale) ** 2) + log_sigma


class JaxArK:
    """tests/posteriordb_models.ArK in jax.numpy: x = (alpha, beta [K], log sigma)."""

    def __init__(self):
        data = _posteriordb_data("arK-arK")
        self.K, y = int(data["K"]), data["y"]
        self.dims = self.K + 2
        T = len(y)
        # lags[t, k] = y[t - k - 1] for t = K .. T - 1: [T - K, K]
        self.lags = np.stack([y[self.K - k - 1 : T - k - 1] for k in range(self.K)], 1)
        self.y = y[self.K :]

    def log_density(self, x):  # x: [chains, K + 2] -> [chains]
        import jax.numpy as jnp

        alpha, beta, log_sigma = x[:, 0], x[:, 1 : 1 + self.K], x[:, -1]
        mu = alpha[:, None] + beta @ self.lags.T  # [chains, T - K]
        return (
            _jax_normal(alpha, 0.0, 10.0)
            + jnp.sum(_jax_normal(beta, 0.0, 10.0), axis=-1)
            + _jax_half_cauchy_log_sigma(log_sigma, 2.5)
            + jnp.sum(_jax_normal(self.y, mu, jnp.exp(log_sigma)[:, None]), axis=-1)
        )


class JaxEightSchools:
    """tests/posteriordb_models.EightSchools (non-centred) in jax.numpy."""

    def __init__(self):
        data = _posteriordb_data("eight_schools-eight_schools_noncentered")
        self.J, self.y, self.sigma = int(data["J"]), data["y"], data["sigma"]
        self.dims = self.J + 2

    def log_density(self, x):  # x: [chains, J + 2] = (theta_trans [J], mu, log tau)
        import jax.numpy as jnp

        theta_trans, mu, log_tau = x[:, : self.J], x[:, self.J], x[:, self.J + 1]
        theta = theta_trans * jnp.exp(log_tau)[:, None] + mu[:, None]  # [chains, J]
        return (
            -0.5 * jnp.sum(theta_trans**2, axis=-1)
            + jnp.sum(-0.5 * ((self.y - theta) / self.sigma) ** 2, axis=-1)
            + _jax_normal(mu, 0.0, 5.0)
            + _jax_half_cauchy_log_sigma(log_tau, 5.0)
        )


class JaxKidIQ:
    """tests/posteriordb_models.KidIQ in jax.numpy: x = (b1, b2, log sigma)."""

    dims = 3

    def __init__(self):
        data = _posteriordb_data("kidiq-kidscore_momiq")
        self.kid, self.mom = data["kid_score"], data["mom_iq"]

    def log_density(self, x):  # x: [chains, 3] -> [chains]
        import jax.numpy as jnp

        b1, b2, log_sigma = x[:, 0], x[:, 1], x[:, 2]
        mu = b1[:, None] + b2[:, None] * self.mom  # [chains, N]
        return _jax_half_cauchy_log_sigma(log_sigma, 2.5) + jnp.sum(
            _jax_normal(self.kid, mu, jnp.exp(log_sigma)[:, None]), axis=-1
        )


class JaxBLR:
    """tests/posteriordb_models.BLR in jax.numpy: x = (beta [D], log sigma)."""

    def __init__(self):
        data = _posteriordb_data("sblrc-blr")
        self.D, self.X, self.y = int(data["D"]), data["X"], data["y"]
        self.dims = self.D + 1

    def log_density(self, x):  # x: [chains, D + 1] -> [chains]
        import jax.numpy as jnp

        beta, log_sigma = x[:, : self.D], x[:, self.D]
        sigma = jnp.exp(log_sigma)
        mu = beta @ self.X.T  # [chains, N]
        return (
            jnp.sum(_jax_normal(beta, 0.0, 10.0), axis=-1)
            + _jax_normal(sigma, 0.0, 10.0)
            + log_sigma
            + jnp.sum(_jax_normal(self.y, mu, sigma[:, None]), axis=-1)
        )


class JaxFunnel:
    """Neal's funnel, 10-d: v ~ N(0, 3^2), x_i ~ N(0, e^v)."""

    dims = 10

    def log_density(self, z):  # z: [chains, 10] -> [chains]
        import jax.numpy as jnp

        v, x = z[:, 0], z[:, 1:]
        return (
            -v * v / 18.0 - 0.5 * jnp.sum(x * x, axis=-1) * jnp.exp(-v) - 0.5 * (self.dims - 1) * v
        )


class JaxGaussian100:
    """A 100-d Gaussian with standard deviations log-spaced from 0.1 to 10."""

    dims = 100
    scales = np.geomspace(0.1, 10.0, 100)

    def log_density(self, x):  # x: [chains, 100] -> [chains]
        import jax.numpy as jnp

        return -0.5 * jnp.sum((x / self.scales) ** 2, axis=-1)


JAX_TARGETS = {
    "arK": JaxArK,
    "eight_schools": JaxEightSchools,
    "kidiq": JaxKidIQ,
    "blr": JaxBLR,
    "funnel": JaxFunnel,
    "gaussian100": JaxGaussian100,
}


def min_ess(draws):
    """Minimum bulk ESS over parameters of [chains, draws, dims]."""
    import arviz as az

    ess = az.ess(az.convert_to_dataset(draws[None] if draws.ndim == 2 else draws))
    return float(np.min(ess["x"].values))


def run_ours(target, chains, warmup, draws, backend="tensorflow", compilation_cache=False):
    """Ours; its first call compiles as in a new process (no compilation
    kept on disk, as the peers keep none) unless `compilation_cache` says
    otherwise (tools/first_call_mcmc.py times the later process's)."""
    from autobatch.mcmc import MCMC, NUTS

    mcmc = MCMC(
        NUTS(target.log_density),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        backend=backend,
        progress_bar=False,
        compilation_cache=compilation_cache,
    )
    times = []
    for seed in (0, 1):
        start = time.perf_counter()
        mcmc.run(seed=seed, dims=target.dims)
        times.append(time.perf_counter() - start)
    return times, min_ess(mcmc.samples), int(mcmc.stats["diverging"].sum())


def tfp_kernel(target, warmup):
    """TFP's NUTS with dual averaging of the step size over 80% of warm-up."""
    import tensorflow as tf
    import tensorflow_probability as tfp

    return tfp.mcmc.DualAveragingStepSizeAdaptation(
        tfp.mcmc.NoUTurnSampler(target.log_density, step_size=tf.constant(0.1, tf.float64)),
        num_adaptation_steps=int(0.8 * warmup),
    )


def run_tfp(target, chains, warmup, draws):
    import tensorflow as tf
    import tensorflow_probability as tfp

    kernel = tfp_kernel(target, warmup)

    @tf.function(jit_compile=True)
    def sample(x0, seed):
        return tfp.mcmc.sample_chain(
            draws,
            x0,
            kernel=kernel,
            num_burnin_steps=warmup,
            trace_fn=lambda _, r: r.inner_results.has_divergence,
            seed=seed,
        )

    times = []
    for seed in (0, 1):
        x0 = tf.constant(np.random.default_rng(seed).uniform(-2, 2, (chains, target.dims)))
        start = time.perf_counter()
        x, divergent = sample(x0, tf.constant([seed, 7], tf.int32))
        x = np.asarray(x)
        times.append(time.perf_counter() - start)
    return times, min_ess(np.swapaxes(x, 0, 1)), int(np.sum(divergent))


def run_ours_jax(target, chains, warmup, draws, **options):
    return run_ours(target, chains, warmup, draws, backend="jax", **options)


def _one_chain(log_density):
    """A [chains, dims] -> [chains] density as the peers want it: [dims] -> []."""
    return lambda x: log_density(x[None])[0]


def _starts(seed, chains, dims):
    return np.random.default_rng(seed).uniform(-2, 2, (chains, dims))


def run_blackjax(target, chains, warmup, draws):
    """window_adaptation then NUTS, one chain's code vmapped over chains,
    the whole run (warm-up and draws) one jax.jit."""
    from autobatch_runtime import jax_backend  # noqa: F401 - float64 on
    import blackjax
    import jax

    logdensity = _one_chain(target.log_density)

    def one_chain(key, x0):  # x0: [dims]
        warm_key, draw_key = jax.random.split(key)
        adaptation = blackjax.window_adaptation(
            blackjax.nuts, logdensity, target_acceptance_rate=0.8
        )
        (state, parameters), _ = adaptation.run(warm_key, x0, num_steps=warmup)
        step = blackjax.nuts(logdensity, **parameters).step

        def transition(state, key):
            state, info = step(key, state)
            return state, (state.position, info.is_divergent)

        _, (xs, divergent) = jax.lax.scan(transition, state, jax.random.split(draw_key, draws))
        return xs, divergent  # [draws, dims], [draws]

    sample = jax.jit(jax.vmap(one_chain))
    times = []
    for seed in (0, 1):
        keys = jax.random.split(jax.random.PRNGKey(seed), chains)
        x0 = jax.numpy.asarray(_starts(seed, chains, target.dims))
        start = time.perf_counter()
        x, divergent = jax.block_until_ready(sample(keys, x0))
        times.append(time.perf_counter() - start)
    return times, min_ess(np.asarray(x)), int(np.sum(divergent))


def run_numpyro(target, chains, warmup, draws):
    """numpyro's NUTS on the potential -log_density, chains vectorized."""
    from autobatch_runtime import jax_backend  # noqa: F401 - float64 on
    import jax
    import numpyro.infer

    log_density = _one_chain(target.log_density)
    mcmc = numpyro.infer.MCMC(
        numpyro.infer.NUTS(potential_fn=lambda x: -log_density(x), target_accept_prob=0.8),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method="vectorized",
        progress_bar=False,
    )
    times = []
    for seed in (0, 1):
        x0 = jax.numpy.asarray(_starts(seed, chains, target.dims))
        start = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(seed), init_params=x0, extra_fields=("diverging",))
        x = np.asarray(mcmc.get_samples(group_by_chain=True))  # [chains, draws, dims]
        times.append(time.perf_counter() - start)
    divergent = mcmc.get_extra_fields(group_by_chain=True)["diverging"]
    return times, min_ess(x), int(np.sum(divergent))


RUNNERS = {
    "ours": run_ours,
    "ours-jax": run_ours_jax,
    "tfp": run_tfp,
    "blackjax": run_blackjax,
    "numpyro": run_numpyro,
}
# The module each sampler needs beyond ours: a missing one skips the sampler.
NEEDS = {"tfp": "tensorflow_probability", "blackjax": "blackjax", "numpyro": "numpyro"}
# Samplers whose model is written in jax.numpy (JAX_TARGETS).
ON_JAX = {"ours-jax", "blackjax", "numpyro"}


def available(samplers):
    """The samplers whose packages are installed; a note for each that is not."""
    import importlib.util

    kept = []
    for sampler in samplers:
        module = NEEDS.get(sampler)
        if module is not None and importlib.util.find_spec(module) is None:
            print(f"note: {sampler} skipped: {module} is not installed", flush=True)
        else:
            kept.append(sampler)
    return kept


def print_ratios(chains, rates):
    """ours (each backend) / each peer, in ESS per second, from this run."""
    for ours in ("ours", "ours-jax"):
        for other, rate in rates.items():
            if ours in rates and not other.startswith("ours") and rate > 0:
                print(
                    f"{'':16} {chains:6d} {ours} / {other} ESS per second: {rates[ours] / rate:.2f}x"
                )


def _versions(samplers):
    """{package: version} of what the samplers ran on."""
    from importlib import metadata

    versions = {}
    for package in (
        "tensorflow-cpu",
        "tensorflow",
        "tensorflow-probability",
        "jax",
        "jaxlib",
        "blackjax",
        "numpyro",
        "arviz",
        "numpy",
    ):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return versions


def _jax_device(samplers):
    """The device the JAX samplers ran on ("cpu", "NVIDIA H200"), or None."""
    if not set(samplers) & ON_JAX:
        return None
    import jax

    return jax.devices()[0].device_kind


def _write(path, runs, rows):
    """The rows so far as JSON, replacing the file whole (a temporary, then rename)."""
    import json

    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"runs": runs, "rows": rows}, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--targets",
        nargs="+",
        default=["arK", "eight_schools", "kidiq", "blr", "funnel", "gaussian100"],
    )
    parser.add_argument("--chains", nargs="+", type=int, default=[4, 256])
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument(
        "--samplers",
        nargs="+",
        choices=list(RUNNERS),
        default=["ours", "tfp", "ours-jax", "blackjax", "numpyro"],
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="also write the rows as JSON, rewritten after every row",
    )
    parser.add_argument(
        "--skip",
        nargs="+",
        default=[],
        metavar="SAMPLER:TARGET",
        help="pairs to leave out, e.g. tfp:gaussian100",
    )
    parser.add_argument(
        "--append", action="store_true", help="keep the rows already in --out's file, add these"
    )
    args = parser.parse_args(argv)
    skip = set()
    for pair in args.skip:
        sampler, _, target = pair.partition(":")
        if sampler not in RUNNERS or not target:
            parser.error(f"--skip wants SAMPLER:TARGET, got {pair!r}")
        skip.add((sampler, target))
    samplers = available(args.samplers)
    import platform

    meta = {
        "command": "python tools/bench_mcmc.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "warmup": args.warmup,
        "draws": args.draws,
        "samplers": samplers,
        "versions": _versions(samplers),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "jax_device": _jax_device(samplers),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    runs, rows = [], []
    if args.append and args.out and os.path.exists(args.out):
        import json

        with open(args.out) as f:
            kept = json.load(f)
        runs, rows = kept["runs"], kept["rows"]
    run = len(runs)
    runs.append(meta)
    tf_targets = _targets() if set(samplers) - ON_JAX else {}
    print(
        f"{'target':16} {'chains':>6} {'sampler':8} {'first s':>8} {'run s':>8} {'min ESS':>8} {'ESS/s':>8} {'div':>5}"
    )
    for name in args.targets:
        for chains in args.chains:
            rates = {}
            for sampler in samplers:
                if sampler in ON_JAX and name not in JAX_TARGETS:
                    print(
                        f"note: {sampler} skipped on {name}: no jax.numpy version",
                        flush=True,
                    )
                    rows.append(
                        {
                            "run": run,
                            "target": name,
                            "chains": chains,
                            "sampler": sampler,
                            "skipped": "no jax.numpy version of the model",
                        }
                    )
                    continue
                if (sampler, name) in skip:
                    print(f"note: {sampler} skipped on {name}: --skip", flush=True)
                    rows.append(
                        {
                            "target": name,
                            "chains": chains,
                            "sampler": sampler,
                            "skipped": "--skip",
                        }
                    )
                    continue
                target = (JAX_TARGETS if sampler in ON_JAX else tf_targets)[name]()
                (first, second), ess, div = RUNNERS[sampler](
                    target, chains, args.warmup, args.draws
                )
                rates[sampler] = ess / second
                print(
                    f"{name:16} {chains:6d} {sampler:8} {first:8.1f} {second:8.1f} {ess:8.0f} "
                    f"{ess / second:8.1f} {div:5d}",
                    flush=True,
                )
                rows.append(
                    {
                        "run": run,
                        "target": name,
                        "chains": chains,
                        "sampler": sampler,
                        "dims": int(target.dims),
                        "first_s": first,
                        "run_s": second,
                        "min_ess": ess,
                        "ess_per_s": ess / second,
                        "divergences": div,
                    }
                )
                if args.out:
                    meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
                    _write(args.out, runs, rows)
            print_ratios(chains, rates)
    if args.out:
        meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        _write(args.out, runs, rows)


if __name__ == "__main__":
    main()
