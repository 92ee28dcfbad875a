"""The flagship: NUTS written per chain (examples/nuts.py), batched over chains.

Statistical tests use fixed seeds, so each is deterministic; the figures
below say how often a *random* seed would fail a correct sampler.

- Distribution tests compare the empirical CDF of many independent chains'
  final states with the exact CDF.  By the Dvoretzky-Kiefer-Wolfowitz
  inequality, P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2); eps is chosen for
  a false-failure rate of 1e-3 per comparison, assuming the chains have
  mixed (NUTS on a Gaussian forgets its start in a few steps; 20 are run).
- Moment tests allow 5 standard errors (false-failure rate about 6e-7 each,
  normal approximation).

Everything runs the checked-in generated modules (frozen Contexts).
"""

import math

import numpy as np
import pytest

from examples import nuts_sampler
from examples.nuts import Point
from transpiler import Context

FALSE_FAILURE = 1e-3
CHAINS = 500

MEAN_3D = np.array([1.0, -1.0, 0.5])
COVARIANCE_3D = np.array([[1.0, 0.8, -0.3], [0.8, 2.0, 0.0], [-0.3, 0.0, 0.5]])


def sampler(target, step_size, backend="numpy", xla=False):
    return nuts_sampler.Sampler(
        target, step_size, backend=backend, xla=xla, context=Context(frozen=True)
    )


GAUSSIAN_3D = nuts_sampler.Gaussian(MEAN_3D, COVARIANCE_3D)
_SHARED = {}


def shared_sampler(backend, xla):
    """One 3-d sampler per backend, shared: TensorFlow traces each sampler once."""
    if (backend, xla) not in _SHARED:
        _SHARED[backend, xla] = sampler(GAUSSIAN_3D, 0.4, backend, xla)
    return _SHARED[backend, xla]


def normal_cdf(x, mean, sd):
    return np.array([0.5 * (1.0 + math.erf((v - mean) / (sd * math.sqrt(2.0)))) for v in x])


def dkw_distance(draws, mean, sd):
    """sup_x |F_n(x) - F(x)| between the draws and N(mean, sd^2)."""
    xs = np.sort(np.asarray(draws))
    n = len(xs)
    exact = normal_cdf(xs, mean, sd)
    return max(np.max(np.arange(1, n + 1) / n - exact), np.max(exact - np.arange(n) / n))


def dkw_bound(n, rate=FALSE_FAILURE):
    return math.sqrt(math.log(2.0 / rate) / (2.0 * n))


def assert_gaussian(draws, mean, covariance):
    """Marginals and two fixed projections of [n, dims] draws match N(mean, cov)."""
    n, dims = draws.shape
    directions = [np.eye(dims)[k] for k in range(dims)]
    if dims > 1:
        directions += [np.ones(dims) / math.sqrt(dims), np.linspace(-1.0, 1.0, dims)]
    for a in directions:
        sd = math.sqrt(a @ covariance @ a)
        distance = dkw_distance(draws @ a, a @ mean, sd)
        assert distance < dkw_bound(n), (a, distance)
        standard_error = sd / math.sqrt(n)
        assert abs(np.mean(draws @ a) - a @ mean) < 5 * standard_error


def test_one_dimensional_normal():
    target = nuts_sampler.Gaussian([1.0], [[4.0]])
    x0 = np.random.default_rng(1).normal(1.0, 3.0, size=(CHAINS, 1))
    out = sampler(target, 0.8).sample(x0, np.arange(CHAINS) + 1000, 20)
    last = out.x[-1]
    assert_gaussian(last, np.array([1.0]), np.array([[4.0]]))
    # The variance of n normal draws: standard error sigma^2 sqrt(2 / n).
    assert abs(np.var(last) - 4.0) < 5 * 4.0 * math.sqrt(2.0 / CHAINS)


def test_correlated_gaussian_moments_and_distribution():
    target = nuts_sampler.Gaussian(MEAN_3D, COVARIANCE_3D)
    x0 = np.random.default_rng(2).normal(0.0, 2.0, size=(CHAINS, 3))
    out = sampler(target, 0.4).sample(x0, np.arange(CHAINS) + 2000, 20)
    last = out.x[-1]
    assert_gaussian(last, MEAN_3D, COVARIANCE_3D)
    sample_cov = np.cov(last, rowvar=False)
    for i in range(3):
        for j in range(3):
            s_ii, s_jj, s_ij = COVARIANCE_3D[i, i], COVARIANCE_3D[j, j], COVARIANCE_3D[i, j]
            standard_error = math.sqrt((s_ii * s_jj + s_ij**2) / CHAINS)
            assert abs(sample_cov[i, j] - s_ij) < 5 * standard_error, (i, j)


def test_a_chain_started_at_the_target_stays_there():
    """Detailed balance, smoke test: one step from exact draws keeps the law."""
    target = nuts_sampler.Gaussian(MEAN_3D, COVARIANCE_3D)
    x0 = np.random.default_rng(3).multivariate_normal(MEAN_3D, COVARIANCE_3D, size=CHAINS)
    assert_gaussian(x0, MEAN_3D, COVARIANCE_3D)  # the start itself passes
    out = sampler(target, 0.4).sample(x0, np.arange(CHAINS) + 3000, 1)
    assert not np.allclose(out.x[-1], x0)
    assert_gaussian(out.x[-1], MEAN_3D, COVARIANCE_3D)


def test_trajectories_differ_across_chains():
    target = nuts_sampler.Gaussian(MEAN_3D, COVARIANCE_3D)
    x0 = np.random.default_rng(4).normal(size=(64, 3))
    out = sampler(target, 0.4).sample(x0, np.arange(64), 3)
    assert len(np.unique(out.leapfrogs)) > 2
    assert len(np.unique(out.depth)) > 1
    assert np.all(out.leapfrogs >= 1) and np.all(out.leapfrogs < 2 ** (out.depth + 1))
    assert np.all((0.0 <= out.accept) & (out.accept <= 1.0))


def plain_chain(target, step_size, x0, seed, steps):
    """The per-chain NUTS in plain Python (dry run), one chain at a time.

    `dry_run="as_given"`: the model is a batched primitive (x: [chains,
    dims]), so each chain runs as a batch of one."""
    step = sampler(target, step_size).step
    log_prob, grad = target(x0[None])
    point = Point(x0[None], log_prob, grad)
    counter = np.zeros(1, np.int64)
    for _ in range(steps):
        result = step(point, np.array([seed]), counter, dry_run="as_given")
        point, counter = result.point, result.counter
    return point.x[0]


@pytest.mark.parametrize(
    "backend, xla", [("numpy", False), ("tensorflow", False), ("tensorflow", True)]
)
def test_batched_chains_equal_plain_python_chains_on_every_backend(backend, xla):
    x0 = np.random.default_rng(5).normal(size=(6, 3))
    seeds = np.array([11, 12, 13, 14, 15, 16])
    out = shared_sampler(backend, xla).sample(x0, seeds, 3)
    for k in range(6):
        expected = plain_chain(GAUSSIAN_3D, 0.4, x0[k], seeds[k], 3)
        np.testing.assert_allclose(out.x[-1, k], expected, rtol=1e-9, atol=1e-12)


def test_a_chain_alone_equals_the_same_chain_in_a_batch():
    target = nuts_sampler.Gaussian(MEAN_3D, COVARIANCE_3D)
    x0 = np.random.default_rng(6).normal(size=(32, 3))
    seeds = np.arange(32) * 17
    batch = sampler(target, 0.4).sample(x0, seeds, 4)
    for k in (0, 9, 31):
        alone = sampler(target, 0.4).sample(x0[k : k + 1], seeds[k : k + 1], 4)
        # The same path (every leapfrog count), and the same draws up to the
        # rounding of the model's batched matmul: TensorFlow's CPU kernels
        # (oneDNN) may sum in another order for 1 row than for 32 (seen here:
        # 1 ulp, 3e-16, on this machine's AVX-512 build).
        np.testing.assert_array_equal(alone.leapfrogs[:, 0], batch.leapfrogs[:, k])
        np.testing.assert_allclose(alone.x[:, 0], batch.x[:, k], rtol=1e-13, atol=1e-15)


def test_same_seed_same_samples_on_every_backend():
    x0 = np.random.default_rng(7).normal(size=(6, 3))  # 6: the compiled batch size above
    runs = [
        shared_sampler(backend, xla).sample(x0, np.arange(6) + 40, 4)
        for backend, xla in [("numpy", False), ("tensorflow", False), ("tensorflow", True)]
    ]
    for other in runs[1:]:
        np.testing.assert_allclose(other.x, runs[0].x, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(other.leapfrogs, runs[0].leapfrogs)


def test_different_seeds_give_different_chains():
    target = nuts_sampler.standard_normal(3)
    x0 = np.zeros((2, 3))
    out = sampler(target, 0.5).sample(x0, np.array([1, 2]), 2)
    assert not np.allclose(out.x[:, 0], out.x[:, 1])


@pytest.mark.parametrize(
    "backend, xla", [("numpy", False), ("tensorflow", False), ("tensorflow", True)]
)
def test_whole_chains_in_one_program_equal_the_one_transition_loop(backend, xla):
    """`sample` (every transition of every chain in one nuts_chain call, the
    chains out of step) against `sample(per_transition=True)` (one batched
    nuts_step call per transition): the same draws, leapfrog counts, depths
    and acceptance statistics, burn-in included, on each backend."""
    x0 = np.random.default_rng(8).normal(size=(6, 3))
    seeds = np.arange(6) + 70
    s = shared_sampler(backend, xla)
    whole = s.sample(x0, seeds, 5, num_burnin=3)
    loop = s.sample(x0, seeds, 5, num_burnin=3, per_transition=True)
    assert whole.x.shape == loop.x.shape == (5, 6, 3)
    # The chains took different numbers of leapfrogs: they were out of step.
    assert len(np.unique(np.sum(loop.leapfrogs, axis=0))) > 1
    np.testing.assert_array_equal(whole.leapfrogs, loop.leapfrogs)
    np.testing.assert_array_equal(whole.depth, loop.depth)
    np.testing.assert_allclose(whole.x, loop.x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(whole.accept, loop.accept, rtol=1e-12, atol=1e-14)


def test_whole_chain_buffers_are_rounded_up_and_only_the_results_kept():
    """The buffers' rows are a power of two >= 32 (a declared program's
    static shape); 20 results take 32 rows, of which `sample` returns the
    20 the chains wrote (each a real transition: at least one leapfrog)."""
    assert [nuts_sampler.buffer_rows(n) for n in (1, 32, 33, 250, 1000)] == [32, 32, 64, 256, 1024]
    x0 = np.random.default_rng(9).normal(size=(4, 3))
    out = shared_sampler("numpy", False).sample(x0, np.arange(4), 20)
    assert out.x.shape == (20, 4, 3)
    assert np.all(out.leapfrogs >= 1) and np.all(out.depth >= 1)
