"""What `examples/nuts.py` needs around it: batched math, models, a sampler.

The sampler itself is per-chain code; the helpers here are ordinary batched
functions, one set per backend, with identical arithmetic so that a seed gives
the same draws on NumPy and on TensorFlow.

Random numbers are counter-based: a draw is a hash of (chain seed, counter,
lane), so a chain's stream depends on nothing but its own seed and how many
draws it made.  That is what makes a chain in a batch of 256 give the same
samples as the same chain alone.
"""

import collections
import math as _math

import numpy as np
import tensorflow as tf

from examples.nuts import Point, make_nuts

_MASK = 0xFFFFFFFF  # hashes are 32-bit values held in int64
_SEED_SALT = 0x5BD1E995
_COUNTER_SALT = 0x27D4EB2F


# ---- batched math, NumPy ----------------------------------------------------


class NumpyMath:
    """The sampler's helpers for NumPy arrays of `dtype` ([chains, ...])."""

    def __init__(self, dtype=np.float64):
        self.dtype = np.dtype(dtype)

    @staticmethod
    def _mix(h):
        # A 32-bit integer finalizer (xorshift-multiply); h: int64 in [0, 2**32).
        h = h ^ (h >> 16)
        h = (h * 0x7FEB352D) & _MASK
        h = h ^ (h >> 15)
        h = (h * 0x846CA68B) & _MASK
        return h ^ (h >> 16)

    def _bits(self, seed, counter, lanes):
        # seed, counter: [chains] int; lanes: [k] -> [chains, k] hashes.
        seed = np.asarray(seed, np.int64)[:, None]
        counter = np.asarray(counter, np.int64)[:, None]
        h = self._mix((seed & _MASK) ^ _SEED_SALT)
        h = self._mix(h ^ ((counter ^ _COUNTER_SALT) & _MASK))
        return self._mix(h ^ lanes)

    def _unit(self, seed, counter, lanes):
        # Uniform in (0, 1), float64: [chains, k].
        return (self._bits(seed, counter, lanes).astype(np.float64) + 0.5) / 2.0**32

    def uniform(self, seed, counter):
        """One uniform draw in (0, 1) per chain: [chains]."""
        return self._unit(seed, counter, np.zeros(1, np.int64))[:, 0].astype(self.dtype)

    def log_uniform(self, seed, counter):
        return np.log(self._unit(seed, counter, np.zeros(1, np.int64))[:, 0]).astype(self.dtype)

    def normal(self, seed, counter, like):
        """Standard normal draws shaped like `like` ([chains, dims]), Box-Muller."""
        dims = like.shape[-1]
        u = self._unit(seed, counter, np.arange(2 * dims, dtype=np.int64))
        radius = np.sqrt(-2.0 * np.log(u[:, :dims]))
        return (radius * np.cos(2.0 * _math.pi * u[:, dims:])).astype(like.dtype)

    @staticmethod
    def dot(a, b):
        """Per-chain inner product: [chains, dims] x [chains, dims] -> [chains]."""
        return np.sum(a * b, axis=-1)

    def as_float(self, condition):
        return np.asarray(condition).astype(self.dtype)

    @staticmethod
    def accept_probability(log_ratio):
        """min(1, exp(log_ratio)), NaN (a diverged step) counting as 0."""
        return np.where(log_ratio > 0, 1.0, np.exp(np.minimum(log_ratio, 0.0))).astype(
            log_ratio.dtype
        )


# ---- batched math, TensorFlow -------------------------------------------------


class TensorFlowMath:
    """The same helpers for TensorFlow tensors, bit for bit the same hash."""

    def __init__(self, dtype=tf.float64):
        self.dtype = tf.as_dtype(dtype)

    @staticmethod
    def _mix(h):
        h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, 16))
        h = tf.bitwise.bitwise_and(h * 0x7FEB352D, _MASK)
        h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, 15))
        h = tf.bitwise.bitwise_and(h * 0x846CA68B, _MASK)
        return tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, 16))

    def _bits(self, seed, counter, lanes):
        seed = tf.cast(seed, tf.int64)[:, None]
        counter = tf.cast(counter, tf.int64)[:, None]
        h = self._mix(tf.bitwise.bitwise_xor(tf.bitwise.bitwise_and(seed, _MASK), _SEED_SALT))
        salted = tf.bitwise.bitwise_and(tf.bitwise.bitwise_xor(counter, _COUNTER_SALT), _MASK)
        h = self._mix(tf.bitwise.bitwise_xor(h, salted))
        return self._mix(tf.bitwise.bitwise_xor(h, lanes))

    def _unit(self, seed, counter, lanes):
        return (tf.cast(self._bits(seed, counter, lanes), tf.float64) + 0.5) / 2.0**32

    def uniform(self, seed, counter):
        return tf.cast(self._unit(seed, counter, tf.zeros([1], tf.int64))[:, 0], self.dtype)

    def log_uniform(self, seed, counter):
        u = self._unit(seed, counter, tf.zeros([1], tf.int64))[:, 0]
        return tf.cast(tf.math.log(u), self.dtype)

    def normal(self, seed, counter, like):
        dims = like.shape[-1]
        u = self._unit(seed, counter, tf.range(2 * dims, dtype=tf.int64))
        radius = tf.sqrt(-2.0 * tf.math.log(u[:, :dims]))
        return tf.cast(radius * tf.cos(2.0 * _math.pi * u[:, dims:]), like.dtype)

    @staticmethod
    def dot(a, b):
        return tf.reduce_sum(a * b, axis=-1)

    def as_float(self, condition):
        return tf.cast(condition, self.dtype)

    @staticmethod
    def accept_probability(log_ratio):
        one = tf.ones_like(log_ratio)
        return tf.where(log_ratio > 0, one, tf.exp(tf.minimum(log_ratio, 0.0)))


# ---- models ---------------------------------------------------------------------


class Gaussian:
    """A multivariate normal target, batched for NumPy or TensorFlow.

    `gaussian(x)` returns (log density up to a constant, its gradient) for
    x: [chains, dims].  `backend` is "numpy" or "tensorflow".
    """

    def __init__(self, mean, covariance, backend="numpy", dtype=np.float64):
        self.mean = np.asarray(mean, dtype)
        self.covariance = np.asarray(covariance, dtype)
        self.precision = np.linalg.inv(self.covariance).astype(dtype)
        self.backend = backend

    def __call__(self, x):
        if self.backend == "tensorflow":
            # NumPy constants: TensorFlow embeds them in whatever graph traces this.
            centred = x - self.mean
            grad = -tf.linalg.matmul(centred, self.precision)
            return 0.5 * tf.reduce_sum(centred * grad, axis=-1), grad
        centred = x - self.mean
        grad = -(centred @ self.precision)
        return 0.5 * np.sum(centred * grad, axis=-1), grad


def standard_normal(dims, backend="numpy", dtype=np.float64):
    return Gaussian(np.zeros(dims), np.eye(dims), backend, dtype)


# ---- the sampler ------------------------------------------------------------------

Samples = collections.namedtuple("Samples", ["x", "leapfrogs", "depth", "accept"])


class Sampler:
    """NUTS for a batch of chains: `Sampler(target, step_size).sample(x0, seeds, n)`.

    `target` is batched for `backend` ("numpy" or "tensorflow"; with `xla=True`
    the TensorFlow program is compiled by XLA).  Each chain has its own seed;
    the chain's draws depend on that seed alone.
    """

    def __init__(
        self, target, step_size, max_tree_depth=10, backend="numpy", xla=False,
        dtype=np.float64, context=None,
    ):
        self.target = target
        self.backend = backend
        self.xla = xla
        math = NumpyMath(dtype) if backend == "numpy" else TensorFlowMath(dtype)
        self.step = make_nuts(target, math, step_size, max_tree_depth, context)
        # Enough stack for a tree of max_tree_depth (two frames per level).
        self.max_stack_depth = max_tree_depth + 2

    def sample(self, x0, seeds, num_results, num_burnin=0):
        """Runs `num_burnin + num_results` steps from x0 ([chains, dims]).

        Returns `Samples` of arrays: x [num_results, chains, dims]; leapfrogs,
        depth and accept [num_results, chains].
        """
        x0 = np.asarray(x0)
        seeds = np.asarray(seeds, np.int64)
        log_prob, grad = (np.asarray(v) for v in self.target(self._input(x0)))
        point = Point(x0, log_prob, grad)
        counter = np.zeros(seeds.shape, np.int64)
        kept = []
        for i in range(num_burnin + num_results):
            step = self.step(
                point, seeds, counter, backend=self.backend, xla=self.xla,
                max_stack_depth=self.max_stack_depth,
            )
            point, counter = Point(*(np.asarray(v) for v in step.point)), np.asarray(step.counter)
            if i >= num_burnin:
                kept.append((point.x, step.leapfrogs, step.depth, step.accept))
        return Samples(*(np.stack([np.asarray(k[j]) for k in kept]) for j in range(4)))

    def _input(self, x):
        return tf.constant(x) if self.backend == "tensorflow" else x
