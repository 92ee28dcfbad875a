"""autobatch.mcmc: MCMC(NUTS(...)) with per-chain warm-up inside the batched program.

The programs are generated into the per-user cache on first use (a
sampler's program closes over the user's model), never into generated/.
"""

import math

import numpy as np
import pytest

from autobatch.mcmc import MCMC, NUTS, SAMPLE_STATS, warmup_schedule

SCALES = np.array([0.1, 1.0, 10.0])


def scaled_normal_numpy(x):
    """log N(x; 0, diag(SCALES^2)) and its gradient, NumPy (elementwise: no
    reduction order that depends on the batch)."""
    z = x / SCALES
    return -0.5 * (z[:, 0] ** 2 + z[:, 1] ** 2 + z[:, 2] ** 2), -z / SCALES


def scaled_normal_tf(x):
    import tensorflow as tf

    z = x / tf.constant(SCALES, tf.float64)
    return -0.5 * tf.reduce_sum(z * z, axis=-1)


def numpy_mcmc(chains, warmup=30, draws=8, **kwargs):
    return MCMC(
        NUTS(value_and_grad=scaled_normal_numpy),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        backend="numpy",
        **kwargs,
    )


def init(chains, seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=(chains, 3))


def test_the_numpy_backend_says_it_needs_a_gradient():
    with pytest.raises(ValueError, match="needs the gradient"):
        MCMC(NUTS(scaled_normal_tf), backend="numpy")
    with pytest.raises(TypeError):
        NUTS(scaled_normal_tf, value_and_grad=scaled_normal_numpy)


def test_stans_warmup_windows():
    # 1000 transitions: 75 fast, slow windows 25, 50, 100, 200, 500, 50 fast.
    assert warmup_schedule(1000, True) == (75, 950, 99, 25, True)
    # Under 150 transitions the buffers are 15% and 10%; under 20, no mass matrix.
    assert warmup_schedule(100, True) == (15, 90, 89, 75, True)
    assert warmup_schedule(10, True)[-1] is False


def test_same_seed_same_draws_and_a_chain_alone_equals_it_in_a_batch_numpy():
    """Bit for bit on NumPy: the same seed gives the same draws, and chain 0
    alone gives the same draws, step sizes and mass matrix as chain 0 among 6."""
    x0 = init(6)
    batch = numpy_mcmc(6)
    batch.run(seed=3, init=x0)
    again = numpy_mcmc(6)
    again.run(seed=3, init=x0)
    np.testing.assert_array_equal(batch.samples, again.samples)
    alone = numpy_mcmc(1)
    alone.run(seed=3, init=x0[:1])
    np.testing.assert_array_equal(alone.samples[0], batch.samples[0])
    np.testing.assert_array_equal(alone.stats["step_size"][0], batch.stats["step_size"][0])
    np.testing.assert_array_equal(alone.last_state.inv_mass[0], batch.last_state.inv_mass[0])
    other = numpy_mcmc(6)
    other.run(seed=4, init=x0)
    assert not np.allclose(other.samples, batch.samples)


def test_chunks_give_the_same_draws_as_one_call():
    """The progress bar's chunks cut the batched program between transitions:
    the draws do not change."""
    x0 = init(3)
    whole = numpy_mcmc(3, warmup=30, draws=10)
    whole.run(seed=5, init=x0)
    chunked = numpy_mcmc(3, warmup=30, draws=10, chunk_size=8, progress_bar=True)
    chunked.run(seed=5, init=x0)
    np.testing.assert_array_equal(whole.samples, chunked.samples)
    for name in whole.stats:
        np.testing.assert_array_equal(whole.stats[name], chunked.stats[name])


@pytest.fixture(scope="module")
def xla_run():
    """500 warm-up transitions and 500 draws, 8 chains, on the XLA backend."""
    mcmc = MCMC(
        NUTS(scaled_normal_tf),
        num_warmup=500,
        num_samples=500,
        num_chains=8,
        backend="tensorflow",
        xla=True,
    )
    mcmc.run(seed=1, init=init(8, seed=1))
    return mcmc


def test_warmup_adapts_each_chains_step_size_and_mass_matrix(xla_run):
    inv_mass = xla_run.last_state.inv_mass  # [chains, dims]: each chain's own
    np.testing.assert_allclose(inv_mass / SCALES**2, 1.0, rtol=0.5)
    step_sizes = xla_run.stats["step_size"][:, 0]
    assert len(np.unique(step_sizes)) == 8  # per chain
    assert np.all((0.3 < step_sizes) & (step_sizes < 2.0))
    # Dual averaging's target is 0.8; its final averaged step size accepts a bit more.
    assert 0.7 < np.mean(xla_run.stats["acceptance_rate"]) < 0.97
    # With the mass matrix the scales no longer matter: short trees.
    assert np.mean(xla_run.stats["tree_depth"]) < 3.5
    assert not np.any(xla_run.stats["diverging"])
    # Warm-up's step sizes moved while it ran, each chain on its own path.
    warm = xla_run.warmup_stats["step_size"]
    assert np.all(np.std(warm, axis=1) > 0) and not np.allclose(warm[0], warm[1])


def test_inference_data_and_summary(xla_run):
    idata = xla_run.inference_data
    assert idata.posterior["x"].shape == (8, 500, 3)
    # exactly the names the sampler documents, each [chains, draws]
    assert set(idata.sample_stats.data_vars) == set(SAMPLE_STATS)
    for name in SAMPLE_STATS:
        assert idata.sample_stats[name].shape == (8, 500), name
    assert idata.sample_stats["diverging"].dtype == bool
    # R-hat < 1.01 on its value: ArviZ's printed two decimals make 1.005 read 1.01.
    summary = xla_run.summary(round_to="none")
    assert {"mean", "sd", "ess_bulk", "ess_tail", "r_hat"} <= set(summary.columns)
    assert np.all(summary["r_hat"] < 1.01)
    assert np.all(summary["ess_bulk"] > 1000)
    # The moments: 4,000 draws, ESS > 1000 each.
    np.testing.assert_allclose(summary["sd"], SCALES, rtol=0.15)
    assert np.all(np.abs(summary["mean"]) < 5 * SCALES / math.sqrt(1000))


def test_a_chain_alone_equals_it_in_a_batch_under_xla():
    """Within float tolerance under XLA, leapfrog for leapfrog, over the
    first 40 transitions.  Not bit for bit: XLA's exp and log round
    differently for 1 lane than for 8 or 16, so the dual averaging's step sizes
    differ from the 6th transition on (4e-7 relative after 40 transitions,
    measured), the draws with them, and such a difference eventually flips a discrete choice of
    a tree; from then on the chain is another (equally valid) chain.  On
    NumPy a chain alone is the same chain, bit for bit (above)."""
    x0 = init(8, seed=2)
    runs = []
    for chains in (8, 1):
        mcmc = MCMC(
            NUTS(scaled_normal_tf), num_warmup=30, num_samples=10, num_chains=chains, xla=True
        )
        mcmc.run(seed=7, init=x0[:chains])
        runs.append(mcmc)
    batch, alone = runs
    np.testing.assert_array_equal(
        alone.warmup_stats["n_steps"][0], batch.warmup_stats["n_steps"][0]
    )
    np.testing.assert_array_equal(alone.stats["n_steps"][0], batch.stats["n_steps"][0])
    # Measured: the draws agree to 2e-6 (absolute, on scales 0.1 to 10).
    np.testing.assert_allclose(alone.samples[0], batch.samples[0], rtol=1e-4, atol=1e-5)
