"""NUTS with warm-up, written for one chain; autobatch runs a batch of chains.

The transition is NUTS as Stan runs it (Hoffman & Gelman 2014, "The
No-U-Turn Sampler", JMLR 15, with Betancourt's 2017 multinomial sampling):
a trajectory doubled until it turns, each point drawn with probability
proportional to its density exp(-H) (progressive uniform sampling inside a
subtree, biased toward the new subtree at the top), Hoffman & Gelman's
end-to-end U-turn criterion on every aligned block of every subtree, and a
diagonal or a dense mass matrix.

Each subtree is built leaf by leaf in a loop, not by recursion: the same
leapfrog steps in the same order, stopped by the same divergence and U-turn
checks as the recursive doubling (each block's first leaf kept as a
checkpoint, `ops.turn_checkpoints`), so a leapfrog step is one trip of the
batched loop.  Written recursively (as examples/nuts.py is, and this module
was) a step costs about four trips (the call, its test, the two halves'
returns): on the 100-d Gaussian the batched program ran 3.6x as many trips
for the same number of leapfrog steps (docs/sampler.md).  Warm-up
is Stan's:

- the step size by dual averaging (Hoffman & Gelman, section 3.2, with Stan's
  constants gamma = 0.05, t0 = 10, kappa = 0.75) toward a target mean
  acceptance probability (0.8 by default), restarted at mu = log(10 eps)
  after each metric update, and set to exp(x_bar) when warm-up ends;
- the inverse mass diagonal (or, dense, matrix) from windowed variance (or
  covariance) estimates of the draws (an initial fast window of 75
  transitions, slow windows of 25, 50, 100... transitions, a terminal fast
  window of 50), regularized as Stan does (n / (n + 5) cov + 1e-3 * 5 /
  (n + 5) I); after each slow window the step
  size is searched again (Stan's init_stepsize: double or halve until the
  acceptance of one leapfrog step crosses 0.8).

Whether the metric is diagonal or dense is decided by its shape, so one
source serves both: `inv_mass` is the inverse mass diagonal [dims] or the
lower Cholesky factor L of the dense inverse mass matrix (M^-1 = L L^T)
[dims, dims], and the Welford sum `m2` is [dims] or [dims, dims];
`autobatch.mcmc.ops` (`momentum`, `kinetic`, `velocity`, `add_comoment`,
`regularized_metric`) does the arithmetic of either.  The two are two
signatures of the same program.

Everything below is per chain: the step size, the inverse mass matrix and
the adaptation's sums are each chain's own state, so each chain adapts on
its own clock, and a chain whose trees are short runs ahead of the others
instead of waiting for them.

The model comes in as a closure: `target(x) -> (log_prob, grad)`, batched
over x: [chains, dims] (TensorFlow ops for the TensorFlow backend, NumPy for
NumPy).  `autobatch.mcmc.ops` supplies the batched helpers and a
counter-based random number generator: a chain's draws depend on its own seed
and counter only, never on which chains share its batch.
"""

import collections
import math

from autobatch import Context
from autobatch.mcmc import ops

# A trajectory end: position, momentum and the log-density's gradient there.
Edge = collections.namedtuple("Edge", ["x", "r", "grad"])
# A point of the trajectory that may become the next draw.
Point = collections.namedtuple("Point", ["x", "log_prob", "grad"])
# One transition: the new point, the counter, leapfrog steps, tree depth,
# mean acceptance probability, divergence, and the energy (the Hamiltonian
# at the start, with the fresh momentum).
Step = collections.namedtuple(
    "Step", ["point", "counter", "leapfrogs", "depth", "accept", "diverging", "energy"]
)
# Dual averaging (mu, s_bar, x_bar, steps) and the current variance window
# (Welford's count, mean and sum of squares, [dims] or dense [dims, dims];
# the window's last transition and size).
Adaptation = collections.namedtuple(
    "Adaptation",
    ["mu", "s_bar", "x_bar", "steps", "n", "mean", "m2", "window_end", "window_size"],
)
# Warm-up's schedule, the same for every chain: transitions of warm-up,
# the first transition of the slow windows and of the terminal window, and
# whether the mass matrix is adapted.
Schedule = collections.namedtuple(
    "Schedule", ["num_warmup", "slow_start", "terminal_start", "adapt_mass"]
)
# A chain between two chunks: everything it needs to go on.  inv_mass: the
# inverse mass diagonal [dims], or the Cholesky factor of the dense inverse
# mass matrix [dims, dims].
State = collections.namedtuple("State", ["point", "counter", "step_size", "inv_mass", "adaptation"])
# What a chunk returns: the state, and per transition (the buffers' leading axis).
Chunk = collections.namedtuple(
    "Chunk",
    [
        "state",
        "draws",
        "lps",
        "diverging",
        "depths",
        "leapfrogs",
        "energies",
        "step_sizes",
        "accepts",
    ],
)

# A leapfrog step whose energy error exceeds this is a divergence: stop.
MAX_ENERGY_ERROR = 1000.0
# Stan's dual averaging constants.
GAMMA = 0.05
T0 = 10.0
KAPPA = 0.75
# Stan's step size search: at most this many doublings or halvings.
MAX_SEARCH = 100


def make_programs(target, max_tree_depth=10, target_accept=0.8, context=None):
    """`nuts_chunk` for the model `target`: the batched whole-chain program.

    `nuts_chunk(state, seed, first, count, schedule, draws, lps, diverging,
    depths, leapfrogs, energies, step_sizes, accepts)` runs transitions
    `first .. first + count - 1` of each chain (warm-up while the index is
    below `schedule.num_warmup`), writing transition `first + k` into row `k`
    of each chain's buffers, and returns a `Chunk`.
    """
    ctx = Context() if context is None else context

    def leapfrog_joint(x, r, grad, eps, inv_mass):
        """The log joint density after one leapfrog step of size eps."""
        r = r + 0.5 * eps[:, None] * grad
        if ops.is_dense(inv_mass):
            x = x + eps[:, None] * ops.velocity(inv_mass, r)
        else:
            x = x + eps[:, None] * inv_mass * r  # this rounding order, as before dense
        log_prob, grad = target(x)
        r = r + 0.5 * eps[:, None] * grad
        return log_prob - ops.kinetic(r, inv_mass)

    def no_u_turn(minus, plus, inv_mass):
        span = plus.x - minus.x
        return (ops.dot(span, ops.velocity(inv_mass, minus.r)) >= 0) & (
            ops.dot(span, ops.velocity(inv_mass, plus.r)) >= 0
        )

    @ctx.batch
    def nuts_step(point, step_size, inv_mass, seed, counter):
        r = ops.momentum(seed, counter, inv_mass)
        joint0 = point.log_prob - ops.kinetic(r, inv_mass)
        counter = counter + 2
        minus = Edge(point.x, r, point.grad)
        plus = minus
        sample = point
        size = 0.0  # log weight of the trajectory so far: the start, exp(0)
        depth = 0
        leapfrogs = 0
        accept = 0.0
        diverging = False
        going = True
        # The first position and velocity of each open block of the subtree
        # being built: [max_tree_depth, dims] each (ops.turn_checkpoints).
        ends_x = ops.checkpoints(point.x, max_tree_depth)
        ends_v = ops.checkpoints(point.x, max_tree_depth)
        while going and depth < max_tree_depth:
            direction = -1.0 if ops.uniform(seed, counter) < 0.5 else 1.0
            counter = counter + 1
            edge = minus if direction < 0 else plus
            eps = direction * step_size
            # A subtree of 2**depth leapfrog steps beyond `edge`, built leaf
            # by leaf; it stops at a divergence or at a U-turn of any block
            # of it (the recursive doubling's order and checks, in a loop).
            leaf = 0
            leaves = 2**depth
            subtree_size = -math.inf  # log of its points' summed weights
            subtree_sample = sample
            ok = True
            while ok and leaf < leaves:
                r = edge.r + 0.5 * eps * edge.grad
                x = edge.x + eps * ops.velocity(inv_mass, r)
                log_prob, grad = target(x)
                r = r + 0.5 * eps * grad
                joint = log_prob - ops.kinetic(r, inv_mass)
                edge = Edge(x, r, grad)
                # The point's log weight; NaN (a diverged step) weighs nothing.
                weight = ops.finite_or(joint - joint0, -math.inf)
                accept = accept + ops.accept_probability(joint - joint0)
                # Progressive uniform sampling inside the subtree: the new
                # point with probability (its weight) / (the subtree's so far).
                total = ops.log_add_exp(subtree_size, weight)
                take = ops.log_uniform(seed, counter, total) < weight - total
                new = Point(x, log_prob, grad)
                if take:
                    subtree_sample = new
                subtree_size = total
                counter = counter + 1
                v = ops.velocity(inv_mass, r)
                first, last = ops.turn_checkpoints(leaf, max_tree_depth)
                turn = ops.turned(ends_x, ends_v, x, v, first, last, direction)
                starts = leaf % 2 == 0
                ends_x = ops.checkpoint(ends_x, last, x, starts)
                ends_v = ops.checkpoint(ends_v, last, v, starts)
                diverging = weight <= -MAX_ENERGY_ERROR
                ok = not diverging and not turn
                leaf = leaf + 1
                leapfrogs = leapfrogs + 1
            if direction < 0:
                minus = edge
            else:
                plus = edge
            # Biased progressive sampling: the new subtree's draw with
            # probability min(1, its weight / the old trajectory's weight).
            if ok and ops.log_uniform(seed, counter, size) < subtree_size - size:
                sample = subtree_sample
            counter = counter + 1
            size = ops.log_add_exp(size, subtree_size)
            going = ok and no_u_turn(minus, plus, inv_mass)
            depth = depth + 1
        return Step(sample, counter, leapfrogs, depth, accept / leapfrogs, diverging, -joint0)

    @ctx.batch
    def find_step_size(point, step_size, inv_mass, seed, counter):
        """Stan's init_stepsize: from `step_size`, double (or halve) it until
        one leapfrog step's acceptance falls below (or rises above) 0.8."""
        r = ops.momentum(seed, counter, inv_mass)
        joint0 = point.log_prob - ops.kinetic(r, inv_mass)
        eps = step_size
        change = ops.finite_or(
            leapfrog_joint(point.x, r, point.grad, eps, inv_mass) - joint0, -math.inf
        )
        larger = change > math.log(0.8)
        tries = 0
        while tries < MAX_SEARCH and (change > math.log(0.8)) == larger:
            eps = eps * 2.0 if larger else eps * 0.5
            change = ops.finite_or(
                leapfrog_joint(point.x, r, point.grad, eps, inv_mass) - joint0, -math.inf
            )
            tries = tries + 1
        return eps, counter + 1

    @ctx.batch
    def adapt(state, accept, t, schedule, seed):
        """Warm-up after transition t (0-based): dual averaging, the variance window."""
        a = state.adaptation
        steps = a.steps + 1.0
        eta = 1.0 / (steps + T0)
        s_bar = (1.0 - eta) * a.s_bar + eta * (target_accept - min(accept, 1.0))
        log_step = a.mu - s_bar * math.sqrt(steps) / GAMMA
        weight = steps ** (-KAPPA)
        x_bar = (1.0 - weight) * a.x_bar + weight * log_step
        step_size = math.exp(log_step)
        mu = a.mu
        counter = state.counter
        inv_mass = state.inv_mass
        n, mean, m2 = a.n, a.mean, a.m2
        window_end, window_size = a.window_end, a.window_size
        if schedule.adapt_mass and schedule.slow_start <= t < schedule.terminal_start:
            # Welford's running mean and sum of squares (dense: of outer
            # products) of this window's draws.
            n = n + 1.0
            delta = state.point.x - mean
            mean = mean + delta / n
            m2 = ops.add_comoment(m2, delta, state.point.x - mean)
        if schedule.adapt_mass and t == window_end and t < schedule.num_warmup - 1:
            inv_mass = ops.regularized_metric(m2, n)
            n = 0.0
            mean = mean * 0.0
            m2 = m2 * 0.0
            # Stan's compute_next_window.
            if window_end != schedule.terminal_start - 1:
                window_size = window_size * 2
                window_end = t + window_size
                if window_end != schedule.terminal_start - 1:
                    if window_end + 2 * window_size >= schedule.terminal_start:
                        window_end = schedule.terminal_start - 1
            step_size, counter = find_step_size(state.point, step_size, inv_mass, seed, counter)
            mu = math.log(10.0 * step_size)
            steps = 0.0
            s_bar = 0.0
            x_bar = 0.0
        if t == schedule.num_warmup - 1:
            step_size = math.exp(x_bar)
        adaptation = Adaptation(mu, s_bar, x_bar, steps, n, mean, m2, window_end, window_size)
        return State(state.point, counter, step_size, inv_mass, adaptation)

    @ctx.batch
    def nuts_chunk(
        state,
        seed,
        first,
        count,
        schedule,
        draws,
        lps,
        diverging,
        depths,
        leapfrogs,
        energies,
        step_sizes,
        accepts,
    ):
        for k in range(count):
            t = first + k
            if t == 0 and schedule.num_warmup > 0:
                step_size, counter = find_step_size(
                    state.point, state.step_size, state.inv_mass, seed, state.counter
                )
                mu = math.log(10.0 * step_size)
                adaptation = state.adaptation._replace(mu=mu)
                state = State(state.point, counter, step_size, state.inv_mass, adaptation)
            step = nuts_step(state.point, state.step_size, state.inv_mass, seed, state.counter)
            draws[k] = step.point.x
            lps[k] = step.point.log_prob
            diverging[k] = step.diverging
            depths[k] = step.depth
            leapfrogs[k] = step.leapfrogs
            energies[k] = step.energy
            step_sizes[k] = state.step_size
            accepts[k] = step.accept
            state = State(
                step.point, step.counter, state.step_size, state.inv_mass, state.adaptation
            )
            if t < schedule.num_warmup:
                state = adapt(state, step.accept, t, schedule, seed)
        return Chunk(state, draws, lps, diverging, depths, leapfrogs, energies, step_sizes, accepts)

    return nuts_chunk
