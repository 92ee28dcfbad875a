"""The sampler builds each NUTS subtree leaf by leaf (autobatch/mcmc/nuts.py):
its U-turn checks must be exactly those of the recursive doubling.

Two checks: the checkpoint scheme (`ops.turn_checkpoints`, `ops.turned`,
`ops.checkpoint`) against every aligned block checked by brute force, and
the sampler's trajectory lengths against a plain-Python recursive NUTS
written here (Hoffman and Gelman's doubling, one chain), in distribution.
"""

import math

import numpy as np
import pytest

from autobatch.mcmc import MCMC, NUTS, ops

LEVELS = 6


def no_u_turn(x_minus, r_minus, x_plus, r_plus):
    """Hoffman and Gelman's criterion between an earlier and a later end
    (positions x, momenta r)."""
    span = x_plus - x_minus
    return span @ r_minus >= 0 and span @ r_plus >= 0


def brute_force_turned(xs, rs, n, direction):
    """Whether leaf n closes an aligned block of 2, 4, ... leaves that turns."""
    size = 2
    while (n + 1) % size == 0:
        first = n + 1 - size
        if direction > 0:
            ahead = no_u_turn(xs[first], rs[first], xs[n], rs[n])
        else:  # built backwards in time: the new leaf is the earlier end
            ahead = no_u_turn(xs[n], rs[n], xs[first], rs[first])
        if not ahead:
            return True
        size *= 2
    return False


@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_checkpoints_check_every_block_a_leaf_closes(direction):
    """Random leaves (about half the blocks turn), 16 chains at once, every
    leaf of a 32-leaf subtree: the batched checks equal the brute force's,
    and both find turns and non-turns at every block size."""
    rng = np.random.default_rng(0)
    chains, leaves, dims = 16, 32, 3
    xs = rng.normal(size=(chains, leaves, dims))
    rs = rng.normal(size=(chains, leaves, dims)) + 0.5  # a drift: not every block turns
    ends_x = np.zeros((chains, LEVELS, dims))
    ends_r = np.zeros((chains, LEVELS, dims))
    directions = np.full(chains, direction)
    seen = set()
    for n in range(leaves):
        leaf = np.full(chains, n, np.int64)
        first, last = ops.turn_checkpoints(leaf, LEVELS)
        turn = ops.turned(ends_x, ends_r, xs[:, n], rs[:, n], first, last, directions)
        starts = leaf % 2 == 0
        ends_x = ops.checkpoint(ends_x, last, xs[:, n], starts)
        ends_r = ops.checkpoint(ends_r, last, rs[:, n], starts)
        expected = [brute_force_turned(xs[c], rs[c], n, direction) for c in range(chains)]
        np.testing.assert_array_equal(turn, expected, err_msg=f"leaf {n}")
        seen.update((n % 4 == 3, bool(t)) for t in expected)
    assert seen == {(False, False), (False, True), (True, False), (True, True)}


SCALES = np.array([0.5, 1.0, 3.0, 0.2, 2.0])
STEP = 0.25


def value_and_grad(x):
    z = x / SCALES
    return -0.5 * np.sum(z * z, axis=-1), -z / SCALES


def recursive_tree_lengths(transitions, seed, scales=SCALES):
    """Leapfrog steps per transition of a plain recursive NUTS on one chain
    (fixed step size, unit metric, multinomial sampling) on N(0,
    diag(scales^2)), started from the target's own distribution."""
    dims = len(scales)

    def value_and_grad(x):
        z = x / scales
        return -0.5 * np.sum(z * z, axis=-1), -z / scales

    rng = np.random.default_rng(seed)

    def leapfrog(x, r, grad, eps):
        r = r + 0.5 * eps * grad
        x = x + eps * r
        log_prob, grad = value_and_grad(x[None])
        r = r + 0.5 * eps * grad[0]
        return x, r, grad[0], log_prob[0] - 0.5 * r @ r

    def build(x, r, grad, direction, depth, joint0):
        """(x, r, grad) of the outer end, sample, log weight, ok, steps."""
        if depth == 0:
            x, r, grad, joint = leapfrog(x, r, grad, direction * STEP)
            weight = joint - joint0
            return (x, r, grad), (x, r, grad), x, weight, weight > -1000.0, 1
        inner, outer, sample, weight, ok, steps = build(x, r, grad, direction, depth - 1, joint0)
        if not ok:
            return inner, outer, sample, weight, ok, steps
        _, outer2, sample2, weight2, ok2, steps2 = build(*outer, direction, depth - 1, joint0)
        total = np.logaddexp(weight, weight2)
        if math.log(rng.uniform()) < weight2 - total:
            sample = sample2
        if direction > 0:
            ahead = no_u_turn(inner[0], inner[1], outer2[0], outer2[1])
        else:
            ahead = no_u_turn(outer2[0], outer2[1], inner[0], inner[1])
        return inner, outer2, sample, total, ok2 and ahead, steps + steps2

    x = rng.normal(size=dims) * scales
    lengths = []
    for _ in range(transitions):
        log_prob, grad = value_and_grad(x[None])
        r = rng.normal(size=dims)
        joint0 = log_prob[0] - 0.5 * r @ r
        minus = plus = (x, r, grad[0])
        sample, size, steps, depth, going = x, 0.0, 0, 0, True
        while going and depth < 10:
            direction = -1.0 if rng.uniform() < 0.5 else 1.0
            start = minus if direction < 0 else plus
            inner, outer, new, weight, ok, n = build(*start, direction, depth, joint0)
            steps += n
            if direction < 0:
                minus = outer
            else:
                plus = outer
            if ok and math.log(rng.uniform()) < weight - size:
                sample = new
            size = np.logaddexp(size, weight)
            going = ok and no_u_turn(minus[0], minus[1], plus[0], plus[1])
            depth += 1
        x = sample
        lengths.append(steps)
    return np.array(lengths)


def test_trajectory_lengths_match_a_recursive_nuts():
    """The same fixed step size and metric: the leaf-by-leaf sampler's mean
    number of leapfrog steps per transition equals the recursive one's,
    within 4 standard errors (about 21 steps, sd 13; a scheme that checked one
    block too few or too many moves it by far more), and so do the target's
    variances."""
    reference = recursive_tree_lengths(4000, seed=1)
    chains = 64
    mcmc = MCMC(
        NUTS(value_and_grad=value_and_grad, step_size=STEP, adapt_step_size=False,
             adapt_mass_matrix=False),
        num_warmup=0, num_samples=120, num_chains=chains, backend="numpy", progress_bar=False,
    )
    mcmc.run(seed=3, init=np.random.default_rng(4).normal(size=(chains, 5)) * SCALES)
    ours = mcmc.stats["n_steps"].ravel()
    error = math.sqrt(reference.var() / reference.size + ours.var() / ours.size)
    assert abs(ours.mean() - reference.mean()) < 4 * error, (ours.mean(), reference.mean())
    variance = mcmc.samples.reshape(-1, 5).var(axis=0) / SCALES**2
    np.testing.assert_allclose(variance, 1.0, atol=0.1)


def test_the_u_turn_check_is_the_same_in_any_metric():
    """N(0, diag(SCALES^2)) sampled with the inverse mass matrix
    diag(SCALES^2) is, in whitened coordinates x / SCALES, N(0, I) sampled
    with the unit metric: the trees must be as long as the recursive
    NUTS's on N(0, I).  A U-turn check that weighs the span by the velocity
    M^-1 r instead of the momentum r (as this sampler once did) weighs the
    widest coordinates most: its trees took 12.5 steps against 14.0, 25
    standard errors off."""
    reference = recursive_tree_lengths(4000, seed=1, scales=np.ones(5))
    chains = 64
    mcmc = MCMC(
        NUTS(value_and_grad=value_and_grad, step_size=STEP, adapt_step_size=False,
             adapt_mass_matrix=False, inverse_mass_matrix=SCALES**2),
        num_warmup=0, num_samples=120, num_chains=chains, backend="numpy", progress_bar=False,
    )
    mcmc.run(seed=3, init=np.random.default_rng(4).normal(size=(chains, 5)) * SCALES)
    ours = mcmc.stats["n_steps"].ravel()
    error = math.sqrt(reference.var() / reference.size + ours.var() / ours.size)
    assert abs(ours.mean() - reference.mean()) < 4 * error, (ours.mean(), reference.mean())
    np.testing.assert_array_equal(mcmc.inverse_mass_matrix, np.broadcast_to(SCALES**2, (64, 5)))


def test_between_two_subtrees_a_chain_runs_two_blocks():
    """One chain's trips of the batched loop are its leapfrog steps plus one
    per subtree (the branch-free block that ends one subtree and starts the
    next, or ends the transition and starts the next one; the outer loop's
    test runs in the leapfrog block, passes/branch_threading.py) plus a few
    per chunk.  Written with calls and `if`s, as the sampler was, a
    transition also took about fifteen blocks of bookkeeping, and 256
    drifting chains spread over them (docs/sampler.md); an `if` that splits
    the between-subtrees block, or a test block of its own, fails this test."""
    mcmc = MCMC(
        NUTS(value_and_grad=value_and_grad, step_size=STEP, adapt_step_size=False,
             adapt_mass_matrix=False),
        num_warmup=0, num_samples=60, num_chains=1, backend="numpy", progress_bar=False,
        chunk_size=32,
    )
    program, profiles = mcmc.program, []

    def profiled(*args, **kwargs):
        out, profile = program(*args, profile=True, **kwargs)
        profiles.append(profile)
        return out

    mcmc.program = profiled
    mcmc.run(seed=0, init=np.ones((1, 5)))
    trips = sum(p.iterations for p in profiles)
    steps = int(mcmc.stats["n_steps"].sum())
    subtrees = int(mcmc.stats["tree_depth"].sum())  # a transition of depth d built d subtrees
    assert len(profiles) == 2 and steps > subtrees > 0
    assert steps + subtrees < trips <= steps + subtrees + 4 * len(profiles)
