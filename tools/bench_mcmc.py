"""autobatch.mcmc against TFP's NUTS: min bulk ESS per second, divergences.

    python tools/bench_mcmc.py                          # posteriordb's fast four, funnel, 100-d Gaussian; 4 and 256 chains
    python tools/bench_mcmc.py --targets eight_schools --chains 4 --warmup 200 --draws 200

Per target and chain count, each sampler runs twice in one process: the first
call (program generation, tracing and XLA compilation included) is reported
apart, and the second call's time (warm-up included) divides the minimum bulk
ESS over parameters.  TFP's NUTS runs its chains vectorized (lockstep) with
DualAveragingStepSizeAdaptation (no mass matrix), under tf.function with
jit_compile=True.  numpyro and blackjax are not run yet (issue 32).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _targets():
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


def min_ess(draws):
    """Minimum bulk ESS over parameters of [chains, draws, dims]."""
    import arviz as az

    ess = az.ess(az.convert_to_dataset(draws[None] if draws.ndim == 2 else draws))
    return float(np.min(ess["x"].values))


def run_ours(target, chains, warmup, draws):
    from autobatch.mcmc import MCMC, NUTS

    mcmc = MCMC(
        NUTS(target.log_density),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        progress_bar=False,
    )
    times = []
    for seed in (0, 1):
        start = time.perf_counter()
        mcmc.run(seed=seed, dims=target.dims)
        times.append(time.perf_counter() - start)
    return times, min_ess(mcmc.samples), int(mcmc.stats["diverging"].sum())


def run_tfp(target, chains, warmup, draws):
    import tensorflow as tf
    import tensorflow_probability as tfp

    kernel = tfp.mcmc.DualAveragingStepSizeAdaptation(
        tfp.mcmc.NoUTurnSampler(target.log_density, step_size=tf.constant(0.1, tf.float64)),
        num_adaptation_steps=int(0.8 * warmup),
    )

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
    parser.add_argument("--samplers", nargs="+", default=["ours", "tfp"])
    args = parser.parse_args(argv)
    targets = _targets()
    runners = {"ours": run_ours, "tfp": run_tfp}
    print(
        f"{'target':16} {'chains':>6} {'sampler':8} {'first s':>8} {'run s':>8} {'min ESS':>8} {'ESS/s':>8} {'div':>5}"
    )
    for name in args.targets:
        target = targets[name]()
        for chains in args.chains:
            rates = {}
            for sampler in args.samplers:
                (first, second), ess, div = runners[sampler](
                    target, chains, args.warmup, args.draws
                )
                rates[sampler] = ess / second
                print(
                    f"{name:16} {chains:6d} {sampler:8} {first:8.1f} {second:8.1f} {ess:8.0f} "
                    f"{ess / second:8.1f} {div:5d}",
                    flush=True,
                )
            if "ours" in rates:
                for other, rate in rates.items():
                    if other != "ours":
                        print(
                            f"{'':16} {chains:6d} ours / {other} ESS per second: {rates['ours'] / rate:.2f}x"
                        )


if __name__ == "__main__":
    main()
