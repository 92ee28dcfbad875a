"""NUTS with Stan's warm-up, each chain adapting on its own, in one batched program.

    import tensorflow as tf
    from autobatch.mcmc import MCMC, NUTS

    def log_density(x):                       # x: float64 [chains, dims]
        return -0.5 * tf.reduce_sum(x * x, axis=-1)

    mcmc = MCMC(NUTS(log_density), num_warmup=1000, num_samples=1000, num_chains=4)
    idata = mcmc.run(seed=0, dims=2)          # ArviZ InferenceData
    mcmc.summary()                            # az.summary: R-hat, bulk and tail ESS

The per-chain algorithm is `autobatch.mcmc.nuts` (plain Python for one
chain, batched by autobatch); the API is `autobatch.mcmc.sampler`.
"""

from autobatch.mcmc.sampler import MCMC, NUTS, SAMPLE_STATS, chain_seeds, warmup_schedule

__all__ = ["MCMC", "NUTS", "SAMPLE_STATS", "chain_seeds", "warmup_schedule"]
