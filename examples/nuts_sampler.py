"""Running `examples/nuts.py`: Gaussian models and a sampler for a batch of chains."""

import collections

import numpy as np

from examples.nuts import Point, make_nuts_programs
from examples.nuts_math import is_tensor, tf  # tf: imported on first use


class Gaussian:
    """A multivariate normal target for NumPy arrays or TF tensors.

    `gaussian(x)` returns (log density up to a constant, its gradient) for
    x: [chains, dims].
    """

    def __init__(self, mean, covariance):
        self.mean = np.asarray(mean, np.float64)
        self.covariance = np.asarray(covariance, np.float64)
        self.precision = np.linalg.inv(self.covariance)

    def __call__(self, x):
        if is_tensor(x):
            # NumPy constants: TensorFlow embeds them in whatever graph traces this.
            centred = x - tf.constant(self.mean, x.dtype)
            grad = -tf.linalg.matmul(centred, tf.constant(self.precision, x.dtype))
            return 0.5 * tf.reduce_sum(centred * grad, axis=-1), grad
        centred = x - self.mean.astype(x.dtype)
        grad = -(centred @ self.precision.astype(x.dtype))
        return 0.5 * np.sum(centred * grad, axis=-1), grad


def standard_normal(dims):
    return Gaussian(np.zeros(dims), np.eye(dims))


class Funnel:
    """Neal's funnel: v ~ N(0, 3^2), then x_i ~ N(0, e^v) for i = 1..dims-1.

    `funnel(z)` returns (log density up to a constant, its gradient) for
    z = (v, x_1, ...): [chains, dims], NumPy arrays or TF tensors.  With a
    fixed step size the trajectory NUTS needs differs by orders of
    magnitude between the funnel's neck (v < 0: x scaled by e^(v/2)) and its
    mouth, so tree depths differ across chains and transitions.
    """

    def __init__(self, dims=10):
        self.dims = dims

    def __call__(self, z):
        tf_ = is_tensor(z)
        exp, total = (tf.exp, tf.reduce_sum) if tf_ else (np.exp, np.sum)
        v, x = z[:, 0], z[:, 1:]  # [chains], [chains, dims - 1]
        inverse_variance = exp(-v)
        squares = total(x * x, axis=-1)
        log_prob = -v * v / 18.0 - 0.5 * squares * inverse_variance - 0.5 * (self.dims - 1) * v
        grad_v = -v / 9.0 + 0.5 * squares * inverse_variance - 0.5 * (self.dims - 1)
        grad_x = -x * inverse_variance[:, None]
        if tf_:
            return log_prob, tf.concat([grad_v[:, None], grad_x], axis=-1)
        return log_prob, np.concatenate([grad_v[:, None], grad_x], axis=-1)

    def exact(self, rng, chains):
        """Independent draws from the funnel: [chains, dims]."""
        v = rng.normal(0.0, 3.0, size=chains)
        x = rng.normal(size=(chains, self.dims - 1)) * np.exp(v / 2.0)[:, None]
        return np.concatenate([v[:, None], x], axis=-1)


# Per step and chain: x [num_results, chains, dims]; the rest [num_results, chains].
Samples = collections.namedtuple("Samples", ["x", "leapfrogs", "depth", "accept"])


def buffer_rows(num_results):
    """Rows of the per-chain buffers for `num_results` kept transitions: a
    power of two, at least 32.

    The buffers' shape is part of the whole-chain program's signature (a
    generated program has static shapes), so rounding up keeps the number
    of programs to a few (`pyproject.toml` declares the 32-row ones the
    tests and demo use; a project Context generates others on first use);
    the program writes only the first `num_results` rows.
    """
    rows = 32
    while rows < num_results:
        rows *= 2
    return rows


class Sampler:
    """NUTS for a batch of chains: `Sampler(target, step_size).sample(x0, seeds, n)`.

    `target(x) -> (log_prob, grad)` must accept what the backend passes:
    NumPy arrays for backend="numpy", TF tensors for backend="tensorflow"
    (with `xla=True` the program is compiled by XLA).  Each chain has its own
    seed; its draws depend on that seed alone.

    `sample` runs every transition of every chain in one batched call of
    `nuts_chain` (chains drift out of step); `sample(..., per_transition=True)`
    calls the batched one-transition `step` from Python once per transition,
    as before.  Both give the same draws for the same seeds.
    """

    def __init__(
        self, target, step_size, max_tree_depth=10, backend="numpy", xla=False, context=None
    ):
        self.target = target
        self.backend = backend
        self.xla = xla
        self.step, self.chain = make_nuts_programs(target, step_size, max_tree_depth, context)
        # A tree of depth d recurses d deep, plus the top-level call.
        self.max_stack_depth = max_tree_depth + 2

    def initial_point(self, x0):
        x0 = np.asarray(x0)
        value = tf.constant(x0) if self.backend == "tensorflow" else x0
        log_prob, grad = (np.asarray(v) for v in self.target(value))
        return Point(x0, log_prob, grad)

    def sample(self, x0, seeds, num_results, num_burnin=0, per_transition=False):
        """Runs `num_burnin + num_results` NUTS steps from x0 ([chains, dims])."""
        if per_transition:
            return self.sample_per_transition(x0, seeds, num_results, num_burnin)
        out = self.chain(
            *self.chain_arguments(x0, seeds, num_results, num_burnin),
            backend=self.backend,
            xla=self.xla,
            # nuts_chain's call of nuts_step is one more frame.
            max_stack_depth=self.max_stack_depth + 1,
        )
        # [chains, rows, ...] -> [num_results, chains, ...], as per_transition gives.
        return Samples(
            *(
                np.swapaxes(np.asarray(v)[:, :num_results], 0, 1)
                for v in (out.draws, out.leapfrogs, out.depths, out.accepts)
            )
        )

    def chain_arguments(self, x0, seeds, num_results, num_burnin=0):
        """`nuts_chain`'s arguments for `sample`: the initial points, the
        seeds, counters, transition counts and zeroed buffers
        ([chains, buffer_rows(num_results), ...])."""
        point = self.initial_point(x0)
        seeds = np.asarray(seeds, np.int64)
        chains, dims = point.x.shape
        rows = buffer_rows(num_results)
        return (
            point,
            seeds,
            np.zeros(chains, np.int64),
            np.full(chains, num_burnin, np.int64),
            np.full(chains, num_results, np.int64),
            np.zeros((chains, rows, dims), point.x.dtype),  # draws
            np.zeros((chains, rows), np.int64),  # leapfrogs
            np.zeros((chains, rows), np.int64),  # depths
            np.zeros((chains, rows), np.float64),  # accepts
        )

    def sample_per_transition(self, x0, seeds, num_results, num_burnin=0):
        """The same chains, one batched `step` call from Python per transition."""
        point = self.initial_point(x0)
        seeds = np.asarray(seeds, np.int64)
        counter = np.zeros(seeds.shape, np.int64)
        kept = []
        for i in range(num_burnin + num_results):
            step = self.step(
                point,
                seeds,
                counter,
                backend=self.backend,
                xla=self.xla,
                max_stack_depth=self.max_stack_depth,
            )
            point = Point(*(np.asarray(v) for v in step.point))
            counter = np.asarray(step.counter)
            if i >= num_burnin:
                kept.append((point.x, step.leapfrogs, step.depth, step.accept))
        return Samples(*(np.stack([np.asarray(k[j]) for k in kept]) for j in range(4)))
