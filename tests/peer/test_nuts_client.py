"""TFP 0.25's autobatched NUTS client, unchanged but for its import, on
`transpiler` against TFP's own run (issue 22, "Done when").

Skipped, with the reason printed, when TFP is not installed (a test-only
extra, see tests/peer/nuts_client.py).  The two runs draw different random
numbers (the client's stateful seeds advance with the ops each system
builds), so they are compared as distributions: the trajectory lengths
(leapfrog counts) a step takes and the moments of the draws, within
sampling error; a target that never turns makes the counts exact.
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


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    return nuts_client.on_transpiler(str(tmp_path_factory.mktemp("nuts-client")))


def standard_normal_3d(x):
    return tfd.MultivariateNormalDiag(tf.zeros(3)).log_prob(x)


def sample(module, steps, seed, chains=CHAINS, wrap=None):
    """(draws [steps, chains, 3], leapfrogs taken [steps, chains]) from `module`'s NUTS."""
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

    states, leapfrogs = (wrap(run) if wrap else run)()
    return states.numpy(), leapfrogs.numpy()


def test_trajectory_lengths_and_moments_match_tfps_own_run(ours):
    theirs_draws, theirs_leapfrogs = sample(nuts_client.original(), steps=2, seed=11)
    our_draws, our_leapfrogs = sample(ours, steps=2, seed=11)
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


@pytest.mark.parametrize("depth,unrolled", [(2, 1), (3, 2)])
def test_leapfrog_counts_are_exact_where_trajectories_never_turn(ours, depth, unrolled):
    def never_turns(x):
        return 1e-6 * x

    for module in (ours, nuts_client.original()):
        kernel = module.NoUTurnSampler(
            never_turns,
            step_size=[0.3],
            max_tree_depth=depth,
            unrolled_leapfrog_steps=unrolled,
            seed=1,
        )
        _, leapfrogs = tfp.mcmc.sample_chain(
            num_results=1,
            num_burnin_steps=0,
            current_state=[tf.ones([3])],
            kernel=kernel,
            parallel_iterations=1,
            trace_fn=lambda _, results: results.leapfrogs_taken,
        )
        assert leapfrogs.numpy().tolist() == [[(2**depth - 1) * unrolled] * 3]


def test_the_client_inside_a_users_tf_function(ours):
    draws, leapfrogs = sample(ours, steps=1, seed=5, chains=16, wrap=tf.function)
    assert draws.shape == (1, 16, 3) and np.all(np.isfinite(draws))
    assert set(np.unique(leapfrogs)) <= {2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
