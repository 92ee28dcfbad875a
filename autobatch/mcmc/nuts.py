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
batched loop.  Everything between two subtrees (joining a subtree to the
trajectory, ending a transition, writing its row, adapting, starting the
next transition and subtree) is one more block, written without branches,
and Stan's step size search takes its leapfrog steps in the same loop: a
chain passes through two blocks, over and over (the leapfrog step, which
also tests the outer loop, and the step between two subtrees), so chains
that drift apart still meet at one of them (`make_programs`, docs/sampler.md).

Warm-up is Stan's:

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
# What the inner loop of `nuts_chunk` ran last.
START, TREE, SEARCH = 0, 1, 2


def make_programs(target, max_tree_depth=10, target_accept=0.8, context=None):
    """`nuts_chunk` for the model `target`: the batched whole-chain program.

    `nuts_chunk(state, seed, first, count, schedule, draws, lps, diverging,
    depths, leapfrogs, energies, step_sizes, accepts)` runs transitions
    `first .. first + count - 1` of each chain (warm-up while the index is
    below `schedule.num_warmup`), writing transition `first + k` into row `k`
    of each chain's buffers, and returns a `Chunk`.

    Chains pass through two blocks again and again: the leapfrog step (the
    inner `while`, whose exit tests the outer `while` at once: the
    compiler's jump threading), and the step between two subtrees (the top
    of the outer `while`), which ends a subtree and
    starts the next one, and at a transition's end writes the row, adapts,
    and starts the next transition.  That step is written without branches
    (each `x = a if c else b` is a per-chain choice, computed for every
    chain), so that it stays one block: chains that drift apart meet
    again, and each trip of the batched loop serves many of them.  Written
    with calls and `if`s (as examples/nuts.py is, and this module was) a
    transition passed through about fifteen blocks, and chains spread over
    them: eight schools at 256 chains ran 82,589 trips with 12% of the
    chains at the block each trip ran; now 12,551 trips at 51%
    (docs/sampler.md).  Stan's step size search runs its leapfrog steps in
    the same inner loop, one per trip (`phase` SEARCH); the tree's sums it
    disturbs there are reset when the next transition starts.
    """
    # The sampler's own functions need no check when decorated (it would
    # build them once more, 0.8 s of every new model's first MCMC object).
    ctx = Context(check_when_decorated=False) if context is None else context

    def no_u_turn(minus, plus):
        # Both ends move apart along the span: span . r, the momentum, not
        # the velocity M^-1 r, so that the test is the same in every
        # metric's coordinates (in whitened ones it is span' . r').
        span = plus.x - minus.x
        return (ops.dot(span, minus.r) >= 0) & (ops.dot(span, plus.r) >= 0)

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
        point, counter, step_size, inv_mass, a = state
        mu, s_bar, x_bar, steps, n, mean, m2, window_end, window_size = a
        k = 0
        # What the inner loop ran last: nothing yet (START), a subtree's
        # leapfrog steps (TREE), or one leapfrog step of the step size
        # search (SEARCH).
        phase = START
        # The transition: its start's energy, the trajectory's two ends, the
        # draw so far and the log of the trajectory's summed weights.
        joint0 = point.log_prob
        minus = Edge(point.x, point.grad, point.grad)
        plus = minus
        sample = point
        size = 0.0
        depth = 0
        steps_taken = 0
        accept = 0.0
        divergent = False
        # The subtree being built: its direction, the edge it grows from,
        # the signed step, its leaves so far and in all, its draw and weight.
        direction = 1.0
        edge = minus
        eps = step_size
        leaf = 0
        leaves = 0
        subtree_size = -math.inf
        subtree_sample = sample
        ok = False
        joint = joint0
        # The first position and momentum of each open block of the subtree
        # being built: [max_tree_depth, dims] each (ops.turn_checkpoints).
        ends_x = ops.checkpoints(point.x, max_tree_depth)
        ends_r = ops.checkpoints(point.x, max_tree_depth)
        # Stan's step size search (init_stepsize): its counter, momentum,
        # start energy, trial step, direction of travel and tries.
        searching = False
        search_counter = counter
        search_r = point.grad
        search_joint0 = joint0
        search_eps = step_size
        search_first = False
        larger = False
        tries = 0
        running = count > 0
        while running:
            # ---- A subtree has ended: join it to the trajectory.
            tree = phase == TREE
            minus = edge if tree and direction < 0 else minus
            plus = edge if tree and direction >= 0 else plus
            # Biased progressive sampling: the new subtree's draw with
            # probability min(1, its weight / the old trajectory's weight).
            biased = ops.log_uniform(seed, counter, size) < subtree_size - size
            sample = subtree_sample if tree and ok and biased else sample
            counter = counter + 1 if tree else counter
            size = ops.log_add_exp(size, subtree_size) if tree else size
            turning = not no_u_turn(minus, plus)
            depth = depth + 1 if tree else depth
            deeper = tree and ok and not turning and depth < max_tree_depth
            ended = tree and not deeper
            # ---- A transition has ended: its row of the buffers (every
            # trip rewrites a row, most with what it held; k < count here
            # but in a search after a chunk's last transition).
            row = min(k, count - 1)
            mean_accept = accept / max(steps_taken, 1)
            was_draws = draws[row]
            draws[row] = sample.x if ended else was_draws
            was_lps = lps[row]
            lps[row] = sample.log_prob if ended else was_lps
            was_diverging = diverging[row]
            diverging[row] = divergent if ended else was_diverging
            was_depths = depths[row]
            depths[row] = depth if ended else was_depths
            was_leapfrogs = leapfrogs[row]
            leapfrogs[row] = steps_taken if ended else was_leapfrogs
            was_energies = energies[row]
            energies[row] = -joint0 if ended else was_energies
            was_step_sizes = step_sizes[row]
            step_sizes[row] = step_size if ended else was_step_sizes
            was_accepts = accepts[row]
            accepts[row] = mean_accept if ended else was_accepts
            point = sample if ended else point
            t = first + k
            k = k + 1 if ended else k
            # Warm-up after transition t: dual averaging of the step size.
            warm = ended and t < schedule.num_warmup
            next_steps = steps + 1.0
            eta = 1.0 / (next_steps + T0)
            next_s_bar = (1.0 - eta) * s_bar + eta * (target_accept - min(mean_accept, 1.0))
            log_step = mu - next_s_bar * math.sqrt(next_steps) / GAMMA
            weight = next_steps ** (-KAPPA)
            next_x_bar = (1.0 - weight) * x_bar + weight * log_step
            steps = next_steps if warm else steps
            s_bar = next_s_bar if warm else s_bar
            x_bar = next_x_bar if warm else x_bar
            # exp and log run on every trip, kept only where chosen: one that
            # could raise inside `a if c else b` would run in a block of its
            # own (where Python evaluates it), a block more per trip.
            adapted_step = math.exp(log_step)
            step_size = adapted_step if warm else step_size
            # Welford's running mean and sum of squares (dense: of outer
            # products) of the slow window's draws.
            welford = warm and schedule.adapt_mass
            welford = welford and schedule.slow_start <= t < schedule.terminal_start
            next_n = n + 1.0
            delta = point.x - mean
            next_mean = mean + delta / next_n
            next_m2 = ops.add_comoment(m2, delta, point.x - next_mean)
            n = next_n if welford else n
            mean = next_mean if welford else mean
            m2 = next_m2 if welford else m2
            # A slow window's end: the metric, Stan's compute_next_window,
            # and a step size search (below).
            window = warm and schedule.adapt_mass and t == window_end
            window = window and t < schedule.num_warmup - 1
            inv_mass = ops.regularized_metric(m2, n) if window else inv_mass
            n = 0.0 if window else n
            mean = mean * 0.0 if window else mean
            m2 = m2 * 0.0 if window else m2
            last = schedule.terminal_start - 1
            grow = window and window_end != last
            next_size = window_size * 2
            next_end = t + next_size
            if next_end != last and next_end + 2 * next_size >= schedule.terminal_start:
                next_end = last
            window_size = next_size if grow else window_size
            window_end = next_end if grow else window_end
            final = warm and t == schedule.num_warmup - 1
            final_step = math.exp(x_bar)
            step_size = final_step if final else step_size
            # ---- A leapfrog step of the search has run: double (or halve)
            # the step until one step's acceptance crosses 0.8.
            search_step = phase == SEARCH
            change = ops.finite_or(joint - search_joint0, -math.inf)
            high = change > math.log(0.8)
            larger = high if search_step and search_first else larger
            tries = tries + 1 if search_step and not search_first else tries
            again = tries < MAX_SEARCH and high == larger
            more = search_step and again
            found = search_step and not again
            search_first = False if search_step else search_first
            search_eps = (search_eps * 2.0 if larger else search_eps * 0.5) if more else search_eps
            step_size = search_eps if found else step_size
            counter = search_counter + 1 if found else counter
            search_mu = math.log(10.0 * search_eps)  # search_eps > 0 always
            mu = search_mu if found else mu
            steps = 0.0 if found else steps
            s_bar = 0.0 if found else s_bar
            x_bar = 0.0 if found else x_bar
            # ---- What runs next: a search (at the start of warm-up and
            # after each slow window), a new transition, a new subtree.
            start = phase == START
            begin_search = window or (start and first == 0 and schedule.num_warmup > 0)
            r = ops.momentum(seed, counter, inv_mass)
            search_counter = counter if begin_search else search_counter
            search_r = r if begin_search else search_r
            kinetic = ops.kinetic(r, inv_mass)
            search_joint0 = point.log_prob - kinetic if begin_search else search_joint0
            search_eps = step_size if begin_search else search_eps
            search_first = True if begin_search else search_first
            tries = 0 if begin_search else tries
            fresh = (ended and not window) or found or (start and not begin_search)
            fresh = fresh and k < count
            # A new transition: fresh momentum at the current point.
            joint0 = point.log_prob - kinetic if fresh else joint0
            counter = counter + 2 if fresh else counter
            minus = Edge(point.x, r, point.grad) if fresh else minus
            plus = minus if fresh else plus
            sample = point if fresh else sample
            size = 0.0 if fresh else size
            depth = 0 if fresh else depth
            steps_taken = 0 if fresh else steps_taken
            accept = 0.0 if fresh else accept
            # A new subtree, of 2**depth leapfrog steps from one end.
            grows = fresh or deeper
            heads = ops.uniform(seed, counter) < 0.5
            direction = (-1.0 if heads else 1.0) if grows else direction
            counter = counter + 1 if grows else counter
            edge = (minus if direction < 0 else plus) if grows else edge
            eps = direction * step_size if grows else eps
            subtree_leaves = 2**depth
            leaves = subtree_leaves if grows else leaves
            subtree_size = -math.inf if grows else subtree_size
            subtree_sample = sample if grows else subtree_sample
            # Or one leapfrog step of the search, from the point.
            searching = begin_search or more
            edge = Edge(point.x, search_r, point.grad) if searching else edge
            eps = search_eps if searching else eps
            leaves = 1 if searching else leaves
            leaf = 0
            ok = grows or searching
            phase = SEARCH if searching else TREE
            running = k < count or searching
            # A subtree built leaf by leaf; it stops at a divergence or at a
            # U-turn of any block of it (the recursive doubling's order and
            # checks, in a loop).
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
                first_end, last_end = ops.turn_checkpoints(leaf, max_tree_depth)
                turn = ops.turned(ends_x, ends_r, x, r, first_end, last_end, direction)
                starts = leaf % 2 == 0
                ends_x = ops.checkpoint(ends_x, last_end, x, starts)
                ends_r = ops.checkpoint(ends_r, last_end, r, starts)
                divergent = weight <= -MAX_ENERGY_ERROR
                ok = not divergent and not turn
                leaf = leaf + 1
                steps_taken = steps_taken + 1
        adaptation = Adaptation(mu, s_bar, x_bar, steps, n, mean, m2, window_end, window_size)
        state = State(point, counter, step_size, inv_mass, adaptation)
        return Chunk(state, draws, lps, diverging, depths, leapfrogs, energies, step_sizes, accepts)

    return nuts_chunk
