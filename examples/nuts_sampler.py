"""Running `examples/nuts.py`: Gaussian models and a sampler for a batch of chains."""

import collections

import numpy as np
import tensorflow as tf

from examples.nuts import Point, make_nuts


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
        if isinstance(x, (tf.Tensor, tf.Variable)):
            # NumPy constants: TensorFlow embeds them in whatever graph traces this.
            centred = x - tf.constant(self.mean, x.dtype)
            grad = -tf.linalg.matmul(centred, tf.constant(self.precision, x.dtype))
            return 0.5 * tf.reduce_sum(centred * grad, axis=-1), grad
        centred = x - self.mean.astype(x.dtype)
        grad = -(centred @ self.precision.astype(x.dtype))
        return 0.5 * np.sum(centred * grad, axis=-1), grad


def standard_normal(dims):
    return Gaussian(np.zeros(dims), np.eye(dims))


# Per step and chain: x [num_results, chains, dims]; the rest [num_results, chains].
Samples = collections.namedtuple("Samples", ["x", "leapfrogs", "depth", "accept"])


class Sampler:
    """NUTS for a batch of chains: `Sampler(target, step_size).sample(x0, seeds, n)`.

    `target(x) -> (log_prob, grad)` must accept what the backend passes:
    NumPy arrays for backend="numpy", TF tensors for backend="tensorflow"
    (with `xla=True` the program is compiled by XLA).  Each chain has its own
    seed; its draws depend on that seed alone.
    """

    def __init__(
        self, target, step_size, max_tree_depth=10, backend="numpy", xla=False, context=None
    ):
        self.target = target
        self.backend = backend
        self.xla = xla
        self.step = make_nuts(target, step_size, max_tree_depth, context)
        # A tree of depth d recurses d deep, plus the top-level call.
        self.max_stack_depth = max_tree_depth + 2

    def initial_point(self, x0):
        x0 = np.asarray(x0)
        value = tf.constant(x0) if self.backend == "tensorflow" else x0
        log_prob, grad = (np.asarray(v) for v in self.target(value))
        return Point(x0, log_prob, grad)

    def sample(self, x0, seeds, num_results, num_burnin=0):
        """Runs `num_burnin + num_results` NUTS steps from x0 ([chains, dims])."""
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
