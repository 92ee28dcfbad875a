"""TFP 0.25's autobatched NUTS client, unchanged but for its import, on
`transpiler` against TFP's own run (issue 22, "Done when").

Skipped, with the reason printed, when TFP is not installed (a test-only
extra, see tests/peer/nuts_client.py).  The two runs draw different random
numbers (the client's stateful seeds advance with the ops each system
builds), so they are compared as distributions: the trajectory lengths
(leapfrog counts) a step takes and the moments of the draws, within
sampling error; a target that never turns makes the counts exact.

Each comparison runs in the three regimes of TFP's own tests
(`test_all_tf_execution_regimes`): a TF1 graph run by a Session (`graph`,
which once looped for ever: issue 35), eager execution (`eager`), and eager
with every `tf.function` run eagerly (`eager_no_tf_function`).  Graph-mode
sessions cancel a run past SESSION_TIMEOUT_MS, and conftest.py fails any
test past its time limit, so a regression fails instead of hanging.
"""

import sys

import numpy as np
import pytest

from tests.peer import nuts_client

REASON = nuts_client.missing_reason()
if REASON is not None:
    print(f"\ntests/peer/test_nuts_client.py skipped: {REASON}", file=sys.stderr)
    pytest.skip(REASON, allow_module_level=True)

import tensorflow as tf  # noqa: E402
import tensorflow_probability as tfp  # noqa: E402

tfd = tfp.distributions
CHAINS = 400
REGIMES = ["graph", "eager", "eager_no_tf_function"]
SESSION_TIMEOUT_MS = 240_000


def evaluate(regime, build):
    """`build()`'s tensors as NumPy values, built and run in `regime`."""
    if regime == "graph":
        with tf.Graph().as_default():
            out = build()
            config = tf.compat.v1.ConfigProto(operation_timeout_in_ms=SESSION_TIMEOUT_MS)
            with tf.compat.v1.Session(config=config) as session:
                return session.run(out)
    if regime == "eager_no_tf_function":
        tf.config.run_functions_eagerly(True)
        try:
            return tf.nest.map_structure(np.asarray, build())
        finally:
            tf.config.run_functions_eagerly(False)
    assert regime == "eager", regime
    return tf.nest.map_structure(np.asarray, build())


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    return nuts_client.on_transpiler(str(tmp_path_factory.mktemp("nuts-client")))


def standard_normal_3d(x):
    return tfd.MultivariateNormalDiag(tf.zeros(3)).log_prob(x)


def chain(module, steps, seed, chains=CHAINS, wrap=None):
    """(draws [steps, chains, 3], leapfrogs taken [steps, chains]) from
    `module`'s NUTS, as tensors of the regime it is called in."""
    kernel = module.NoUTurnSampler(
        standard_normal_3d,
        step_size=[0.3],
        max_tree_depth=4,
        unrolled_leapfrog_steps=2,
        seed=seed,
    )
    start = tfd.MultivariateNormalDiag(tf.zeros(3)).sample(chains, seed=seed + 1)

    def run():
        states, leapfrogs = tfp.mcmc.sample_chain(
            num_results=steps,
            num_burnin_steps=0,
            current_state=[start],  # a list of states, as the client's own tests pass
            kernel=kernel,
            parallel_iterations=1,
            trace_fn=lambda _, results: results.leapfrogs_taken,
        )
        return states[0], leapfrogs

    return (wrap(run) if wrap else run)()


def sample(module, steps, seed, chains=CHAINS, wrap=None, regime="eager"):
    """`chain`'s draws and leapfrog counts as NumPy arrays, run in `regime`."""
    return evaluate(regime, lambda: chain(module, steps, seed, chains, wrap))


# Statistical (400 chains, about 40 s a regime): run in graph mode only; the
# other regimes run the same kernel, and the tests below cover each of them.
@pytest.mark.parametrize("regime", ["graph"])
def test_trajectory_lengths_and_moments_match_tfps_own_run(ours, regime):
    theirs_draws, theirs_leapfrogs = sample(nuts_client.original(), 2, 11, regime=regime)
    our_draws, our_leapfrogs = sample(ours, 2, 11, regime=regime)
    # leapfrogs_taken accumulates: the second step's count includes the first's
    for step in range(2):
        a, b = our_leapfrogs[step], theirs_leapfrogs[step]
        assert set(np.unique(a)) <= {2 * k for k in range(1, 16)} | set(np.unique(b)) | {
            a.max()
        }
        error = np.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(a.mean() - b.mean()) < 4 * error, (a.mean(), b.mean())
    # the share of chains at each trajectory length, first step
    a, b = our_leapfrogs[0], theirs_leapfrogs[0]
    for length in np.union1d(a, b):
        p, q = np.mean(a == length), np.mean(b == length)
        pooled = (p + q) / 2
        assert abs(p - q) < 4 * np.sqrt(2 * pooled * (1 - pooled) / CHAINS) + 1e-9, (length, p, q)
    # moments of the draws: N(0, I), from both systems
    for draws in (our_draws[-1], theirs_draws[-1]):
        assert np.all(np.abs(draws.mean(0)) < 4 / np.sqrt(CHAINS))
        assert np.all(np.abs(draws.var(0) - 1) < 4 * np.sqrt(2 / CHAINS))
    assert np.all(
        np.abs(our_draws[-1].mean(0) - theirs_draws[-1].mean(0)) < 4 * np.sqrt(2 / CHAINS)
    )


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("depth,unrolled", [(2, 1), (3, 2)])
def test_leapfrog_counts_are_exact_where_trajectories_never_turn(ours, depth, unrolled, regime):
    def never_turns(x):
        return 1e-6 * x

    def leapfrogs(module):
        kernel = module.NoUTurnSampler(
            never_turns,
            step_size=[0.3],
            max_tree_depth=depth,
            unrolled_leapfrog_steps=unrolled,
            seed=1,
        )
        _, taken = tfp.mcmc.sample_chain(
            num_results=1,
            num_burnin_steps=0,
            current_state=[tf.ones([3])],
            kernel=kernel,
            parallel_iterations=1,
            trace_fn=lambda _, results: results.leapfrogs_taken,
        )
        return taken

    for module in (ours, nuts_client.original()):
        got = evaluate(regime, lambda: leapfrogs(module))
        assert got.tolist() == [[(2**depth - 1) * unrolled] * 3]


@pytest.mark.parametrize("regime", REGIMES)
def test_a_seeded_chain_draws_the_same_twice(ours, regime):
    # As TFP's own test: in graph mode both chains in one graph; eagerly the
    # global seed is set again before the second (a stateful op's draws also
    # depend on how many ops ran before it).
    def seeded_chain():
        if tf.executing_eagerly():
            tf.random.set_seed(7)
        return chain(ours, 3, 7, chains=5)[0]

    first, second = evaluate(regime, lambda: (seeded_chain(), seeded_chain()))
    assert np.array_equal(first, second)
    assert np.all(np.isfinite(first))


@pytest.mark.parametrize("regime", REGIMES)
def test_latents_of_mixed_rank(ours, regime):
    def log_prob(x, y):
        return -0.5 * (tf.reduce_sum(x**2, axis=[-1, -2]) + tf.reduce_sum(y**2, axis=-1))

    def build():
        kernel = ours.NoUTurnSampler(
            log_prob, step_size=0.3, max_tree_depth=3, unrolled_leapfrog_steps=2, seed=3
        )
        states, leapfrogs = tfp.mcmc.sample_chain(
            num_results=1,
            num_burnin_steps=0,
            current_state=[tf.ones([4, 3, 2]), tf.zeros([4, 7])],
            kernel=kernel,
            parallel_iterations=1,
            trace_fn=lambda _, results: results.leapfrogs_taken,
        )
        return states, leapfrogs

    (x, y), leapfrogs = evaluate(regime, build)
    assert x.shape == (1, 4, 3, 2) and y.shape == (1, 4, 7)
    assert np.all(np.isfinite(x)) and np.all(np.isfinite(y))
    assert np.all(leapfrogs >= 2)


def test_the_client_inside_a_users_tf_function(ours):
    draws, leapfrogs = sample(ours, steps=1, seed=5, chains=16, wrap=tf.function)
    assert draws.shape == (1, 16, 3) and np.all(np.isfinite(draws))
    assert set(np.unique(leapfrogs)) <= {2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
