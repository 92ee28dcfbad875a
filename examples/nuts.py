"""The No-U-Turn Sampler, written for one chain and batched over chains.

This is the "efficient NUTS" of Hoffman & Gelman (2014), "The No-U-Turn
Sampler: Adaptively Setting Path Lengths in Hamiltonian Monte Carlo", JMLR 15,
Algorithm 3: slice sampling, a recursively doubled trajectory, progressive
sampling inside subtrees and a biased jump to the newest subtree at the top.
The step size is fixed (no dual averaging) and the mass matrix is the
identity.

Everything below is per chain, as the paper writes it: `build_tree` recurses
to a depth that depends on the chain's trajectory, and the `while` in
`nuts_step` doubles until that chain sees a U-turn.  autobatch runs a batch of
chains at once, each following its own path.

The model comes in as a closure: `target(x) -> (log_prob, grad)` is any
batched function (NumPy for the NumPy backend, TensorFlow for TensorFlow),
over `x` of shape [chains, dims].  `nuts_math` supplies the few batched
helpers the sampler needs (inner products, and a counter-based random number
generator: a chain's draws depend only on its own seed and counter, never on
which other chains share its batch).
"""

import collections

from examples import nuts_math
from autobatch import Context

# A trajectory end: position, momentum and the log-density's gradient there.
Edge = collections.namedtuple("Edge", ["x", "r", "grad"])
# A point of the trajectory that may become the next sample.
Point = collections.namedtuple("Point", ["x", "log_prob", "grad"])
# What building a subtree returns: both ends, the subtree's sample, how many
# of its points lie in the slice, whether it may be extended, and
# bookkeeping (the chain's random counter, leapfrog steps taken).
Tree = collections.namedtuple(
    "Tree", ["minus", "plus", "sample", "size", "ok", "accept", "counter", "leapfrogs"]
)

# What one transition returns for a chain: the new sample, the chain's random
# counter, leapfrog steps taken, tree depth reached, and the mean acceptance
# probability over the trajectory's points (the statistic step-size tuning uses).
Step = collections.namedtuple("Step", ["point", "counter", "leapfrogs", "depth", "accept"])

# What a whole chain returns: its last point and random counter (to go on
# from), and per kept transition (the leading axis of each buffer, per chain):
# the draw, leapfrog steps, tree depth and mean acceptance probability.
Chain = collections.namedtuple(
    "Chain", ["point", "counter", "draws", "leapfrogs", "depths", "accepts"]
)

# A leapfrog step whose energy error exceeds this is a divergence: stop.
MAX_ENERGY_ERROR = 1000.0


def make_nuts(target, step_size, max_tree_depth=10, context=None):
    """A batched NUTS transition for the model `target`.

    Returns `nuts_step(point, seed, counter)`, which moves each
    chain one NUTS step and returns a `Step`.
    `context` defaults to a new `Context()`; all samplers made here share
    the generated module `generated/examples/nuts_*.py`.
    """
    return make_nuts_programs(target, step_size, max_tree_depth, context)[0]


def make_nuts_programs(target, step_size, max_tree_depth=10, context=None):
    """`(nuts_step, nuts_chain)` for the model `target`, in one Context.

    `nuts_chain(point, seed, counter, num_burnin, num_results, draws,
    leapfrogs, depths, accepts)` runs a whole chain: `num_burnin` transitions,
    then `num_results` kept ones, written into the buffers (each chain's
    own `[rows, dims]` / `[rows]` arrays, rows >= num_results; the caller
    passes zeros).  Batched, every chain runs its own transitions: a chain
    whose tree stopped early starts its next transition while others are
    still doubling theirs, so no transition waits for the slowest chain.
    """
    ctx = Context() if context is None else context

    @ctx.batch
    def build_tree(edge, joint0, log_slice, direction, depth, seed, counter):
        if depth == 0:
            # One leapfrog step from `edge` in `direction`.
            eps = direction * step_size
            r = edge.r + 0.5 * eps * edge.grad
            x = edge.x + eps * r
            log_prob, grad = target(x)
            r = r + 0.5 * eps * grad
            joint = log_prob - 0.5 * nuts_math.dot(r, r)
            new = Edge(x, r, grad)
            size = nuts_math.as_count(log_slice <= joint)
            ok = joint > log_slice - MAX_ENERGY_ERROR
            accept = nuts_math.accept_probability(joint - joint0)
            return Tree(new, new, Point(x, log_prob, grad), size, ok, accept, counter, 1)
        # Build the first half, then (if it is fine) the second half beyond it.
        tree = build_tree(edge, joint0, log_slice, direction, depth - 1, seed, counter)
        if not tree.ok:
            return tree
        outer = tree.minus if direction < 0 else tree.plus
        more = build_tree(outer, joint0, log_slice, direction, depth - 1, seed, tree.counter)
        counter = more.counter
        sample = tree.sample
        total = tree.size + more.size
        if nuts_math.uniform(seed, counter) * total < more.size:
            sample = more.sample
        counter = counter + 1
        minus = more.minus if direction < 0 else tree.minus
        plus = tree.plus if direction < 0 else more.plus
        ok = more.ok and no_u_turn(minus, plus)
        accept = tree.accept + more.accept
        leapfrogs = tree.leapfrogs + more.leapfrogs
        return Tree(minus, plus, sample, total, ok, accept, counter, leapfrogs)

    def no_u_turn(minus, plus):
        span = plus.x - minus.x
        return (nuts_math.dot(span, minus.r) >= 0) & (nuts_math.dot(span, plus.r) >= 0)

    @ctx.batch
    def nuts_step(point, seed, counter):
        r = nuts_math.normal(seed, counter, point.x)
        joint0 = point.log_prob - 0.5 * nuts_math.dot(r, r)
        log_slice = joint0 + nuts_math.log_uniform(seed, counter + 1, joint0)
        counter = counter + 2
        minus = Edge(point.x, r, point.grad)
        plus = minus
        sample = point
        size = 1.0
        depth = 0
        leapfrogs = 0
        accept = 0.0
        going = True
        while going and depth < max_tree_depth:
            direction = -1.0 if nuts_math.uniform(seed, counter) < 0.5 else 1.0
            edge = minus if direction < 0 else plus
            tree = build_tree(edge, joint0, log_slice, direction, depth, seed, counter + 1)
            counter = tree.counter
            leapfrogs = leapfrogs + tree.leapfrogs
            accept = accept + tree.accept
            if direction < 0:
                minus = tree.minus
            else:
                plus = tree.plus
            if tree.ok and nuts_math.uniform(seed, counter) * size < tree.size:
                sample = tree.sample
            counter = counter + 1
            size = size + tree.size
            going = tree.ok and no_u_turn(minus, plus)
            depth = depth + 1
        return Step(sample, counter, leapfrogs, depth, accept / leapfrogs)

    @ctx.batch
    def nuts_chain(
        point, seed, counter, num_burnin, num_results, draws, leapfrogs, depths, accepts
    ):
        # Two loops, not one with `if t >= num_burnin:` around the writes:
        # each write is then an unconditional `draws[t] = ...`, one row per
        # chain, never a choice between two whole buffers.
        for _ in range(num_burnin):
            step = nuts_step(point, seed, counter)
            point = step.point
            counter = step.counter
        for t in range(num_results):
            step = nuts_step(point, seed, counter)
            point = step.point
            counter = step.counter
            draws[t] = point.x
            leapfrogs[t] = step.leapfrogs
            depths[t] = step.depth
            accepts[t] = step.accept
        return Chain(point, counter, draws, leapfrogs, depths, accepts)

    return nuts_step, nuts_chain


def standard_normal(x):
    """log N(x; 0, I) up to a constant, and its gradient: the reference model."""
    return -0.5 * nuts_math.dot(x, x), -x


# `autobatch generate` builds this file's programs without calling the factory:
# pyproject.toml's [tool.autobatch.closures] gives the values its closures
# close over (the reference model standard_normal, a step size), and the
# generated module's factory takes any model of the same types at run time.
