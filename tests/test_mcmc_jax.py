"""autobatch.mcmc on the JAX backend: MCMC(NUTS(log_density), backend="jax").

The log density is written with `jax.numpy` over x: [chains, dims]; its
gradient comes from `jax.vjp`.  The whole-chain program is the generated
`*_jax.py` module (one `jax.jit` of a `lax.while_loop`), built on first use
into the per-user cache like the TensorFlow one.  The tests that are about
equality run few transitions (every chunk shares one program: 64 rows);
those about the distribution run enough for their Monte Carlo error.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jnp = pytest.importorskip("jax.numpy")

from autobatch.mcmc import MCMC, NUTS, SAMPLE_STATS  # noqa: E402

SCALES = np.array([0.1, 1.0, 10.0])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scaled_normal_jax(x):
    """log N(x; 0, diag(SCALES^2)) for x: [chains, 3] -> [chains], jax.numpy."""
    z = x / SCALES
    return -0.5 * jnp.sum(z * z, axis=-1)


def scaled_normal_numpy(x):
    """The same density and its gradient in NumPy, for the NumPy backend."""
    z = x / SCALES
    return -0.5 * np.sum(z * z, axis=-1), -z / SCALES


def init(chains, seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=(chains, 3))


def jax_mcmc(chains, warmup=30, draws=10, log_density=scaled_normal_jax, **kwargs):
    return MCMC(
        NUTS(log_density, **kwargs),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        backend="jax",
        progress_bar=False,
    )


@pytest.fixture(scope="module")
def small_runs():
    """Seed 7 on 4 chains (twice), chain 0 alone, and seed 8: 30 warm-up
    transitions and 10 draws each."""
    x0 = init(4, seed=2)
    runs = {}
    for name, chains, seed in (("batch", 4, 7), ("again", 4, 7), ("alone", 1, 7), ("other", 4, 8)):
        mcmc = jax_mcmc(chains)
        mcmc.run(seed=seed, init=x0[:chains])
        runs[name] = mcmc
    return runs


def test_same_seed_same_draws(small_runs):
    batch, again, other = small_runs["batch"], small_runs["again"], small_runs["other"]
    np.testing.assert_array_equal(batch.samples, again.samples)
    for name in batch.stats:
        np.testing.assert_array_equal(batch.stats[name], again.stats[name])
    assert not np.allclose(other.samples, batch.samples)


def test_a_chain_alone_equals_it_in_a_batch(small_runs):
    """Leapfrog for leapfrog over all 40 transitions, draws within float
    tolerance: XLA rounds exp and log differently for 1 lane than for 4
    (measured: the draws differ by up to 5e-5 relative after 40
    transitions), so it is not bit for bit, as on TensorFlow's XLA
    (tests/test_mcmc.py); on NumPy it is."""
    batch, alone = small_runs["batch"], small_runs["alone"]
    np.testing.assert_array_equal(
        alone.warmup_stats["n_steps"][0], batch.warmup_stats["n_steps"][0]
    )
    np.testing.assert_array_equal(alone.stats["n_steps"][0], batch.stats["n_steps"][0])
    np.testing.assert_allclose(alone.samples[0], batch.samples[0], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(
        alone.warmup_stats["step_size"][0], batch.warmup_stats["step_size"][0], rtol=1e-4
    )


def test_jax_follows_the_numpy_backend(small_runs):
    """The same seed on the NumPy backend (its own gradient) takes the same
    trees: ops.py's random stream and arithmetic are the same on jax.numpy."""
    x0 = init(4, seed=2)
    numpy_run = MCMC(
        NUTS(value_and_grad=scaled_normal_numpy),
        num_warmup=30,
        num_samples=10,
        num_chains=4,
        backend="numpy",
        progress_bar=False,
    )
    numpy_run.run(seed=7, init=x0)
    batch = small_runs["batch"]
    np.testing.assert_array_equal(numpy_run.warmup_stats["n_steps"], batch.warmup_stats["n_steps"])
    np.testing.assert_array_equal(numpy_run.stats["n_steps"], batch.stats["n_steps"])
    np.testing.assert_allclose(numpy_run.samples, batch.samples, rtol=1e-3, atol=1e-5)


def test_mcmc_objects_of_one_model_share_its_program():
    """A second MCMC of the same model reuses the program (and so its
    jax.jit compilations); another model, depth or backend gets its own."""
    first, second = jax_mcmc(2), jax_mcmc(3)
    assert first.program is second.program
    assert jax_mcmc(2, log_density=correlated_gaussian).program is not first.program
    assert jax_mcmc(2, max_tree_depth=5).program is not first.program
    on_numpy = MCMC(NUTS(value_and_grad=scaled_normal_numpy), backend="numpy")
    assert on_numpy.program is not first.program


def test_a_jax_user_never_imports_tensorflow_and_a_later_process_skips_compiling(tmp_path):
    """Two fresh processes: import autobatch.mcmc, sample on JAX, read the
    InferenceData; TensorFlow is never imported.  The first keeps XLA's
    compilation in the per-user cache; the second finds it there (JAX's
    cache hit) instead of compiling; JAX's own setting (no cache
    directory) is the user's again after each run.  The chains' starts are
    evaluated as one jax.jit: op by op, JAX compiled each of the model's
    ops apart (this model: 23 compilations in the second process, now 10,
    of which 8 are JAX moving the arguments)."""
    script = textwrap.dedent("""
        import sys
        import jax
        import jax.numpy as jnp
        import numpy as np
        from autobatch.mcmc import MCMC, NUTS

        hits = []
        jax.monitoring.register_event_listener(
            lambda event, **kwargs: hits.append(event)
            if event == "/jax/compilation_cache/cache_hits" else None
        )
        compiled = []
        jax.monitoring.register_event_duration_secs_listener(
            lambda event, seconds, **kwargs: compiled.append(event)
            if event == "/jax/core/compile/backend_compile_duration" else None
        )

        def log_density(x):
            softplus = jnp.log1p(jnp.exp(x))
            return -0.5 * jnp.sum(x * x, axis=-1) - jnp.sum(softplus, axis=-1)

        mcmc = MCMC(NUTS(log_density), num_warmup=30, num_samples=10, num_chains=2,
                    backend="jax", progress_bar=False)
        idata = mcmc.run(seed=0, dims=3)
        assert idata.posterior["x"].shape == (2, 10, 3)
        assert np.all(np.isfinite(mcmc.samples))
        assert jax.config.jax_compilation_cache_dir is None
        print("tensorflow" in sys.modules, len(hits), len(compiled))
        """)
    env = dict(
        os.environ,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
        AUTOBATCH_CACHE_DIR=str(tmp_path / "cache"),
    )
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.strip().splitlines()[-1])
    imported, hits, compilations = outputs[1].split()
    assert outputs[0].startswith("False 0 "), outputs
    assert imported == "False" and int(hits) > 0, outputs
    assert int(compilations) <= 12, outputs
    assert os.listdir(tmp_path / "cache" / "xla" / "jax")


def test_a_users_own_jax_cache_directory_is_kept(tmp_path):
    """With the user's own directory set, the sampler neither moves nor
    clears it (its programs go there, as the user's)."""
    from autobatch.mcmc import compile_cache

    jax = pytest.importorskip("jax")
    mine = str(tmp_path / "mine")
    previous = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", mine)
    try:
        with compile_cache.jax_cache(str(tmp_path / "ours")):
            assert jax.config.jax_compilation_cache_dir == mine
        assert jax.config.jax_compilation_cache_dir == mine
    finally:
        jax.config.update("jax_compilation_cache_dir", previous)
    assert not os.path.exists(tmp_path / "ours")
    assert compile_cache.directory("jax", False) is None
    assert compile_cache.directory("tensorflow", True) is None


# A correlated Gaussian whose covariance a rotation diagonalizes:
# cov = R diag(ROTATED_SCALES^2) R^T, R a rotation by 30 degrees in the
# (x0, x1) plane; x2 stays uncorrelated.
MEAN = np.array([1.0, -1.0, 0.5])
ROTATED_SCALES = np.array([0.5, 2.0, 3.0])
_ANGLE = np.pi / 6
ROTATION = np.array(
    [
        [np.cos(_ANGLE), -np.sin(_ANGLE), 0.0],
        [np.sin(_ANGLE), np.cos(_ANGLE), 0.0],
        [0.0, 0.0, 1.0],
    ]
)
COVARIANCE = ROTATION @ np.diag(ROTATED_SCALES**2) @ ROTATION.T


def correlated_gaussian(x):
    """log N(x; MEAN, COVARIANCE) up to a constant: [chains, 3] -> [chains]."""
    z = (x - MEAN) @ ROTATION / ROTATED_SCALES  # [chains, 3]: the rotated, whitened draw
    return -0.5 * jnp.sum(z * z, axis=-1)


@pytest.fixture(scope="module")
def gaussian_run():
    """4 chains, 500 warm-up transitions, 500 draws: 2,000 draws."""
    mcmc = jax_mcmc(4, warmup=500, draws=500, log_density=correlated_gaussian)
    mcmc.run(seed=1, dims=3)
    return mcmc


def test_the_moments_of_a_correlated_gaussian(gaussian_run):
    """Means and sds within Monte Carlo error of the exact ones; the
    correlation of (x0, x1) too."""
    # R-hat < 1.01 on its value: ArviZ's printed two decimals make 1.005 read 1.01.
    summary = gaussian_run.summary(round_to="none")
    sd = np.sqrt(np.diag(COVARIANCE))
    assert np.all(summary["r_hat"] < 1.01)
    assert np.all(summary["ess_bulk"] > 300)
    assert np.all(np.abs(summary["mean"].values - MEAN) < 4 * summary["mcse_mean"].values)
    # sd: 4 MCSE, and at least 2%.
    tolerance = np.maximum(4 * summary["mcse_sd"].values, 0.02 * sd)
    assert np.all(np.abs(summary["sd"].values - sd) < tolerance)
    flat = gaussian_run.samples.reshape(-1, 3)
    exact = COVARIANCE[0, 1] / (sd[0] * sd[1])
    assert abs(np.corrcoef(flat[:, 0], flat[:, 1])[0, 1] - exact) < 0.05
    assert gaussian_run.stats["diverging"].sum() == 0


def test_warmup_adapts_each_chains_step_size_and_mass_matrix(gaussian_run):
    inv_mass = gaussian_run.last_state.inv_mass  # [chains, dims]: each chain's own
    # The diagonal mass matrix estimates the marginal variances, each chain
    # from its own last slow window: 200 draws of x0 and x1, correlated
    # (about 30 effective), so a chain's estimate has a relative sd of about
    # sqrt(2 / 30) = 0.26: within a factor of 2 per chain, within 25% on
    # average over the 4 chains.
    ratio = inv_mass / np.diag(COVARIANCE)
    assert np.all((0.5 < ratio) & (ratio < 2.0)), ratio
    np.testing.assert_allclose(ratio.mean(axis=0), 1.0, rtol=0.25)
    assert len(np.unique(inv_mass[:, 0])) == 4
    step_sizes = gaussian_run.stats["step_size"][:, 0]
    assert len(np.unique(step_sizes)) == 4
    warm = gaussian_run.warmup_stats["step_size"]  # [chains, warm-up transitions]
    assert np.all(np.std(warm, axis=1) > 0) and not np.allclose(warm[0], warm[1])
    assert 0.6 < np.mean(gaussian_run.stats["acceptance_rate"]) < 0.97


def test_inference_data(gaussian_run):
    idata = gaussian_run.inference_data
    assert idata.posterior["x"].shape == (4, 500, 3)
    # exactly the names the sampler documents, each [chains, draws]
    assert set(idata.sample_stats.data_vars) == set(SAMPLE_STATS)
    for name in SAMPLE_STATS:
        assert idata.sample_stats[name].shape == (4, 500), name
    assert idata.sample_stats["diverging"].dtype == bool
    np.testing.assert_allclose(
        idata.sample_stats["lp"].values,
        np.asarray(correlated_gaussian(gaussian_run.samples)),
        rtol=1e-9,
        atol=1e-12,
    )


EIGHT_SCHOOLS = "eight_schools-eight_schools_noncentered"


def eight_schools_jax():
    """Eight schools non-centered (tests/posteriordb_models.EightSchools) in
    jax.numpy: x = (theta_trans [8], mu, log tau), Stan's parameterisation."""
    with open(os.path.join(ROOT, "tests", "posteriordb", EIGHT_SCHOOLS, "data.json")) as f:
        data = json.load(f)
    y = np.asarray(data["y"], np.float64)
    sigma = np.asarray(data["sigma"], np.float64)
    J = data["J"]

    def log_density(x):  # x: [chains, J + 2] -> [chains]
        theta_trans, mu, log_tau = x[:, :J], x[:, J], x[:, J + 1]
        theta = theta_trans * jnp.exp(log_tau)[:, None] + mu[:, None]  # [chains, J]
        return (
            -0.5 * jnp.sum(theta_trans**2, axis=-1)
            - 0.5 * jnp.sum(((y - theta) / sigma) ** 2, axis=-1)
            - 0.5 * (mu / 5.0) ** 2
            - jnp.log1p((jnp.exp(log_tau) / 5.0) ** 2)
            + log_tau
        )

    def constrain(x):  # x: [n, J + 2] (NumPy)
        tau = np.exp(x[:, J + 1])
        mu = x[:, J]
        return {"theta": x[:, :J] * tau[:, None] + mu[:, None], "mu": mu, "tau": tau}

    return log_density, constrain, J + 2


def test_right_on_eight_schools():
    """posteriordb's rule at the defaults (4 chains, 1,000 + 1,000), as
    tests/test_mcmc_posteriordb.py judges the TensorFlow runs."""
    from tests import posteriordb_models as models

    log_density, constrain, dims = eight_schools_jax()
    mcmc = MCMC(
        NUTS(log_density, constrain=constrain),
        num_chains=4,
        backend="jax",
        progress_bar=False,
    )
    mcmc.run(seed=0, dims=dims)
    failures = models.judge(mcmc.get_samples(), EIGHT_SCHOOLS)
    assert not failures, "\n".join(failures)
    assert mcmc.stats["diverging"].sum() <= 4
