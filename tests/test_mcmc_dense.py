"""autobatch.mcmc with a dense mass matrix: NUTS(..., dense_mass=True).

Each chain adapts its own dense inverse mass matrix (the regularized
covariance of its draws, in Stan's windows), held as its Cholesky factor.
The NumPy test is about equality (a few transitions, bit for bit); the JAX
ones about the distribution, on a Gaussian whose correlation of 0.99 a
diagonal metric cannot undo.  kidiq (a -0.99 correlation) is in
tests/test_mcmc_posteriordb.py, on TensorFlow's XLA.
"""

import numpy as np
import pytest

from autobatch.mcmc import MCMC, NUTS

# A 2-d Gaussian with sds 1 and 3 and correlation 0.99.
MEAN = np.array([1.0, -2.0])
SDS = np.array([1.0, 3.0])
RHO = 0.99
COVARIANCE = np.array([[1.0, RHO], [RHO, 1.0]]) * np.outer(SDS, SDS)
PRECISION = np.linalg.inv(COVARIANCE)


def correlated_numpy(x):
    """log N(x; MEAN, COVARIANCE) and its gradient, NumPy, elementwise (no
    reduction whose order depends on the batch): [chains, 2] -> [chains], [chains, 2]."""
    d0, d1 = x[:, 0] - MEAN[0], x[:, 1] - MEAN[1]
    g0 = PRECISION[0, 0] * d0 + PRECISION[0, 1] * d1
    g1 = PRECISION[1, 0] * d0 + PRECISION[1, 1] * d1
    return -0.5 * (d0 * g0 + d1 * g1), -np.stack([g0, g1], axis=-1)


def numpy_mcmc(chains, dense_mass=True):
    """40 warm-up transitions (one slow window, 30 transitions long: the
    metric is adapted once) and 10 draws."""
    return MCMC(
        NUTS(value_and_grad=correlated_numpy, dense_mass=dense_mass),
        num_warmup=40,
        num_samples=10,
        num_chains=chains,
        backend="numpy",
        progress_bar=False,
    )


def test_a_chain_alone_equals_it_in_a_batch_numpy():
    """Bit for bit on NumPy: chain 0 alone gives the draws, step sizes and
    dense metric it gives among 5 chains."""
    x0 = np.random.default_rng(0).uniform(-2.0, 2.0, size=(5, 2))
    batch = numpy_mcmc(5)
    batch.run(seed=3, init=x0)
    alone = numpy_mcmc(1)
    alone.run(seed=3, init=x0[:1])
    chol = batch.last_state.inv_mass  # [chains, dims, dims]: each chain's Cholesky factor
    assert chol.shape == (5, 2, 2)
    assert np.all(chol[:, 0, 1] == 0.0) and np.all(chol[:, 1, 0] != 0.0)  # adapted, dense
    np.testing.assert_array_equal(alone.samples[0], batch.samples[0])
    np.testing.assert_array_equal(alone.stats["step_size"][0], batch.stats["step_size"][0])
    np.testing.assert_array_equal(alone.last_state.inv_mass[0], chol[0])
    assert not np.allclose(batch.samples[0], batch.samples[1])


def test_a_given_dense_metric_is_kept_and_a_bad_one_refused():
    """NUTS(inverse_mass_matrix=...) with dense_mass and no adaptation: each
    chain runs with that matrix (its Cholesky factor in the state).  A
    matrix that is not symmetric (Cholesky would read one triangle of it
    and say nothing), not positive definite, or of the wrong shape is
    refused with the reason."""
    mcmc = MCMC(
        NUTS(value_and_grad=correlated_numpy, dense_mass=True, adapt_mass_matrix=False,
             inverse_mass_matrix=COVARIANCE),
        num_warmup=5, num_samples=3, num_chains=2, backend="numpy", progress_bar=False,
    )
    mcmc.run(seed=0, dims=2)
    np.testing.assert_allclose(mcmc.inverse_mass_matrix, np.broadcast_to(COVARIANCE, (2, 2, 2)))
    for matrix, reason, dense in [
        (np.array([[1.0, 0.5], [0.0, 1.0]]), "not symmetric positive definite", True),
        (np.array([[1.0, 2.0], [2.0, 1.0]]), "not symmetric positive definite", True),
        (np.ones(3), "shape (3,)", False),
        (np.eye(2), "a matrix needs dense_mass=True", False),
        (np.array([1.0, 0.0]), "diagonal must be positive", False),
    ]:
        kernel = NUTS(value_and_grad=correlated_numpy, dense_mass=dense, inverse_mass_matrix=matrix)
        bad = MCMC(kernel, num_warmup=5, num_samples=3, num_chains=2, backend="numpy",
                   progress_bar=False)
        with pytest.raises(ValueError, match=reason.replace("(", r"\(").replace(")", r"\)")):
            bad.run(seed=0, dims=2)


jnp = pytest.importorskip("jax.numpy")


def correlated_jax(x):
    """The same density in jax.numpy: [chains, 2] -> [chains]."""
    d = x - MEAN
    return -0.5 * jnp.sum((d @ PRECISION) * d, axis=-1)


@pytest.fixture(scope="module")
def runs():
    """The defaults (4 chains, 1,000 warm-up transitions, 1,000 draws) on
    JAX, dense and diagonal, from the same seed and starts."""
    out = {}
    for dense in (True, False):
        mcmc = MCMC(
            NUTS(correlated_jax, dense_mass=dense),
            num_chains=4,
            backend="jax",
            progress_bar=False,
        )
        mcmc.run(seed=1, dims=2)
        out["dense" if dense else "diagonal"] = mcmc
    return out


def whitened_condition(inv_mass):
    """The condition number of COVARIANCE in the metric's coordinates, per
    chain: 1 for a metric equal to the covariance; [chains, 2, 2] -> [chains]."""
    chol = np.linalg.cholesky(inv_mass)  # [chains, 2, 2]
    inverse = np.linalg.inv(chol)
    whitened = inverse @ COVARIANCE @ np.swapaxes(inverse, -1, -2)
    return np.linalg.cond(whitened)


def test_the_adapted_matrix_is_the_covariance(runs):
    """Each chain's last slow window (500 draws, its own) estimates the
    covariance: the correlation within 0.01, the entries within Monte Carlo
    error (50%, as the diagonal tests in tests/test_mcmc.py), and in
    its coordinates the target is nearly round, where the diagonal metric
    leaves a condition number of 199."""
    inv_mass = runs["dense"].inverse_mass_matrix  # [chains, 2, 2]
    assert inv_mass.shape == (4, 2, 2)
    sd = np.sqrt(np.diagonal(inv_mass, axis1=1, axis2=2))  # [chains, 2]
    np.testing.assert_allclose(inv_mass[:, 0, 1] / (sd[:, 0] * sd[:, 1]), RHO, atol=0.01)
    np.testing.assert_allclose(inv_mass, np.broadcast_to(COVARIANCE, inv_mass.shape), rtol=0.5)
    assert np.all(whitened_condition(inv_mass) < 2.0)
    assert len(np.unique(inv_mass[:, 0, 1])) == 4  # per chain
    # The diagonal run's metric: the marginal variances, the correlation left.
    diagonal = runs["diagonal"].inverse_mass_matrix  # [chains, 2]
    np.testing.assert_allclose(diagonal, np.broadcast_to(SDS**2, diagonal.shape), rtol=0.5)
    assert np.all(whitened_condition(np.stack([np.diag(d) for d in diagonal])) > 100.0)


def test_dense_gets_the_moments_right(runs):
    dense = runs["dense"]
    # R-hat < 1.01 on its value: ArviZ's printed two decimals make 1.005 read 1.01.
    summary = dense.summary(round_to="none")
    assert np.all(summary["r_hat"] < 1.01)
    assert np.all(np.abs(summary["mean"].values - MEAN) < 4 * summary["mcse_mean"].values)
    tolerance = np.maximum(4 * summary["mcse_sd"].values, 0.02 * SDS)
    assert np.all(np.abs(summary["sd"].values - SDS) < tolerance)
    flat = dense.samples.reshape(-1, 2)
    assert abs(np.corrcoef(flat[:, 0], flat[:, 1])[0, 1] - RHO) < 0.005
    assert dense.stats["diverging"].sum() == 0


def test_dense_mixes_better_than_diagonal(runs):
    """With the metric undoing the correlation the trees are short and each
    gradient buys more effective draws: a diagonal metric leaves a
    condition number of 199, longer trees and less ESS per leapfrog
    (measured, seed 1: mean depth 1.8 and 3.2, bulk ESS per leapfrog 0.12
    and 0.014)."""
    stats = {}
    for name, mcmc in runs.items():
        ess = float(mcmc.summary()["ess_bulk"].min())
        stats[name] = (ess / mcmc.stats["n_steps"].sum(), mcmc.stats["tree_depth"].mean())
    (dense_rate, dense_depth), (diagonal_rate, diagonal_depth) = stats["dense"], stats["diagonal"]
    assert dense_depth + 1.0 < diagonal_depth, stats
    assert dense_rate > 3.0 * diagonal_rate, stats
