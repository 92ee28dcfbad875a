"""Batched helpers for the NUTS programs, for NumPy arrays, TF tensors and JAX arrays.

Each helper looks at what it is given: TensorFlow tensors get TensorFlow ops
(so the code traces into a graph and compiles under XLA), JAX arrays (and
JAX's tracers, inside the generated program's `jax.jit`) get `jax.numpy`,
anything else gets NumPy.  `jax.numpy` spells NumPy's functions the same way,
so the JAX and NumPy paths are one code path over the array module `xp`
(`_xp`).  The arithmetic is the same on all three, so a seed gives the same
draws on every backend.  Neither TensorFlow nor JAX is imported here: a
library is only used when the values handed in are already its own.

Random numbers are counter-based: a draw is a hash of (chain seed, counter,
lane), so a chain's stream depends only on its own seed and on how many draws
it made before, never on which chains share its batch.
"""

import math
import sys

import numpy as np


class _LazyTensorFlow:
    """TensorFlow, imported on first use: NumPy callers (the generated
    `nuts_np.py`, a deployment without TensorFlow) never import it."""

    def __getattr__(self, name):
        import tensorflow

        return getattr(tensorflow, name)


tf = _LazyTensorFlow()

_MASK = 0xFFFFFFFF  # hashes are 32-bit values held in int64
_SEED_SALT = 0x5BD1E995
_COUNTER_SALT = 0x27D4EB2F
_MIX_1 = 0x7FEB352D
_MIX_2 = 0x846CA68B


def is_tensor(*values):
    """True if a value is a TensorFlow tensor (never when TensorFlow is not loaded)."""
    loaded = sys.modules.get("tensorflow")
    return loaded is not None and any(
        isinstance(v, (loaded.Tensor, loaded.Variable)) for v in values
    )


def is_jax(*values):
    """True if a value is a JAX array or tracer (never when JAX is not loaded)."""
    loaded = sys.modules.get("jax")
    return loaded is not None and any(isinstance(v, loaded.Array) for v in values)


def _xp(*values):
    """The array module for values that are not TensorFlow's: `jax.numpy`
    for JAX arrays (so the helpers trace inside `jax.jit`), else NumPy."""
    if is_jax(*values):
        return sys.modules["jax.numpy"]
    return np


def _mix(h, ops):
    """A 32-bit integer finalizer (xorshift-multiply); h: int64 in [0, 2**32)."""
    xor, shift, mask = ops
    h = xor(h, shift(h, 16))
    h = mask(h * _MIX_1)
    h = xor(h, shift(h, 15))
    h = mask(h * _MIX_2)
    return xor(h, shift(h, 16))


def _tf_mask(h):
    return tf.bitwise.bitwise_and(h, tf.constant(_MASK, tf.int64))


def _bits(xp):
    """(xor, right shift, 32-bit mask) of the array module `xp`; int64
    products wrap on NumPy and on JAX (x64) alike, and the mask keeps the
    low 32 bits, so both give the same hash."""
    return (xp.bitwise_xor, xp.right_shift, lambda h: xp.bitwise_and(h, _MASK))


def _unit(seed, counter, lanes):
    """Uniform draws in (0, 1), float64: [chains, lanes] for seed, counter: [chains]."""
    if is_tensor(seed, counter):
        ops = (tf.bitwise.bitwise_xor, tf.bitwise.right_shift, _tf_mask)
        seed = tf.cast(seed, tf.int64)[:, None]
        counter = tf.cast(counter, tf.int64)[:, None]
        lane = tf.range(lanes, dtype=tf.int64)
        salt = tf.constant(_SEED_SALT, tf.int64)
        counter_salt = tf.constant(_COUNTER_SALT, tf.int64)
    else:
        xp = _xp(seed, counter)
        ops = _bits(xp)
        seed = xp.asarray(seed, np.int64)[:, None]  # [chains, 1]
        counter = xp.asarray(counter, np.int64)[:, None]  # [chains, 1]
        lane = xp.arange(lanes, dtype=np.int64)  # [lanes]
        salt, counter_salt = _SEED_SALT, _COUNTER_SALT
    xor, _, mask = ops
    h = _mix(xor(mask(seed), salt), ops)
    h = _mix(xor(h, mask(xor(counter, counter_salt))), ops)
    h = _mix(xor(h, lane), ops)  # [chains, lanes]
    if is_tensor(h):
        return (tf.cast(h, tf.float64) + 0.5) / 2.0**32
    return (h.astype(np.float64) + 0.5) / 2.0**32


def _cast(value, like):
    if is_tensor(value, like):
        return tf.cast(value, like.dtype)
    xp = _xp(value, like)
    return xp.asarray(value).astype(like.dtype)


def uniform(seed, counter):
    """One uniform draw in (0, 1) per chain: [chains] float64."""
    return _unit(seed, counter, 1)[:, 0]


def log_uniform(seed, counter, like):
    """log of a uniform draw per chain, with the dtype of `like`: [chains]."""
    u = _unit(seed, counter, 1)[:, 0]
    return _cast(tf.math.log(u) if is_tensor(u) else _xp(u).log(u), like)


def normal(seed, counter, like):
    """Standard normal draws shaped and typed like `like` ([chains, dims]), Box-Muller."""
    dims = like.shape[-1]
    u = _unit(seed, counter, 2 * dims)
    if is_tensor(u):
        radius = tf.sqrt(-2.0 * tf.math.log(u[:, :dims]))
        return _cast(radius * tf.cos(2.0 * math.pi * u[:, dims:]), like)
    xp = _xp(u)
    radius = xp.sqrt(-2.0 * xp.log(u[:, :dims]))  # [chains, dims]
    return _cast(radius * xp.cos(2.0 * math.pi * u[:, dims:]), like)


def dot(a, b):
    """Per-chain inner product: [chains, dims] x [chains, dims] -> [chains]."""
    if is_tensor(a, b):
        return tf.reduce_sum(a * b, axis=-1)
    return _xp(a, b).sum(a * b, axis=-1)


def as_count(condition):
    """A per-chain condition as a float64 count (0.0 or 1.0)."""
    if is_tensor(condition):
        return tf.cast(condition, tf.float64)
    return _xp(condition).asarray(condition).astype(np.float64)


def accept_probability(log_ratio):
    """min(1, exp(log_ratio)) per chain; a NaN (a diverged step) gives 0."""
    if is_tensor(log_ratio):
        capped = tf.exp(tf.minimum(log_ratio, tf.zeros_like(log_ratio)))
        return tf.where(tf.math.is_nan(log_ratio), tf.zeros_like(log_ratio), capped)
    xp = _xp(log_ratio)
    capped = xp.exp(xp.minimum(log_ratio, 0.0))
    return xp.where(xp.isnan(log_ratio), 0.0, capped).astype(xp.asarray(log_ratio).dtype)


def is_dense(metric):
    """True for a dense metric: the batched Cholesky factor [chains, dims, dims]
    of the inverse mass matrix; a diagonal one is [chains, dims]."""
    return len(metric.shape) == 3


def _matvec(matrix, v, transpose=False):
    """Per-chain matrix times vector, matrix: [chains, dims, dims], v: [chains, dims].

    Written as a product and a sum over the last axis, not a batched matmul,
    so each chain's result is computed the same way whatever the batch (a
    chain alone gives the same bits as in a batch on NumPy)."""
    if is_tensor(matrix, v):
        m = tf.linalg.matrix_transpose(matrix) if transpose else matrix
        return tf.reduce_sum(m * v[:, None, :], axis=-1)
    xp = _xp(matrix, v)
    m = xp.swapaxes(matrix, -1, -2) if transpose else matrix
    return xp.sum(m * v[:, None, :], axis=-1)


def velocity(metric, r):
    """M^-1 r, the position's rate of change for momentum r: [chains, dims].

    metric: the inverse mass diagonal [chains, dims], or the lower Cholesky
    factor L of the dense inverse mass matrix (M^-1 = L L^T) [chains, dims, dims]."""
    if is_dense(metric):
        return _matvec(metric, _matvec(metric, r, transpose=True))
    return metric * r


def kinetic(r, metric):
    """Per-chain kinetic energy r' M^-1 r / 2: [chains].  Dense: |L^T r|^2 / 2."""
    if is_dense(metric):
        w = _matvec(metric, r, transpose=True)  # [chains, dims]
        return 0.5 * dot(w, w)
    return 0.5 * dot(metric * r, r)


def momentum(seed, counter, metric):
    """Momentum draws r ~ N(0, M): [chains, dims].

    Diagonal: z / sqrt(M^-1).  Dense, with M^-1 = L L^T: r = L^-T z, so
    Cov(r) = (L L^T)^-1 = M (a triangular solve per chain)."""
    if not is_dense(metric):
        z = normal(seed, counter, metric)
        if is_tensor(z, metric):
            return z / tf.sqrt(metric)
        return z / _xp(z, metric).sqrt(metric)
    z = normal(seed, counter, metric[:, 0, :])  # [chains, dims]
    if is_tensor(z, metric):
        return tf.linalg.triangular_solve(metric, z[:, :, None], lower=True, adjoint=True)[:, :, 0]
    if is_jax(z, metric):
        from jax.scipy.linalg import solve_triangular

        return solve_triangular(metric, z[:, :, None], trans="T", lower=True)[:, :, 0]
    return _back_substitute(metric, z)


def _back_substitute(chol, z):
    """r with L^T r = z, per chain, for L = chol lower triangular: [chains, dims].

    NumPy has no batched triangular solve, and `np.linalg.solve` raises on a
    singular matrix (the compiler's type inference calls this on a batch of
    ones); this loop over the dims only divides, and computes each chain
    alone, as in any batch."""
    dims = chol.shape[-1]
    r = np.zeros_like(z)  # [chains, dims]
    for i in range(dims - 1, -1, -1):
        later = np.sum(chol[:, i + 1 :, i] * r[:, i + 1 :], axis=-1)  # [chains]
        r[:, i] = (z[:, i] - later) / chol[:, i, i]
    return r


def add_comoment(m2, delta, after):
    """Welford's update of the sum of squares (or of outer products): [chains, dims]
    or [chains, dims, dims].

    delta = x - (the mean before x), after = x - (the mean after it).  The
    diagonal adds delta * after; the dense one adds the outer product
    delta after^T, symmetrized (exact arithmetic gives a symmetric matrix,
    floating point nearly), so the covariance's Cholesky factor sees one."""
    if not is_dense(m2):
        return m2 + delta * after
    outer = delta[:, :, None] * after[:, None, :]  # [chains, dims, dims]
    if is_tensor(outer):
        return m2 + 0.5 * (outer + tf.linalg.matrix_transpose(outer))
    return m2 + 0.5 * (outer + _xp(outer).swapaxes(outer, -1, -2))


def regularized_metric(m2, n):
    """The metric from a window's n draws and their sum of squares m2, shrunk
    toward 1e-3 as Stan: (n / (n + 5)) cov + 1e-3 (5 / (n + 5)) (times I).

    Diagonal: the inverse mass diagonal [chains, dims].  Dense: the lower
    Cholesky factor of that matrix [chains, dims, dims].  n: [chains]; the
    program computes this for every chain and keeps it only for those at a
    window's end, so for the others (n of 0 or 1) the dense path divides by
    at least 1 and stays positive definite (m2 is a sum of outer products,
    plus the 1e-3 ridge): no Cholesky of a NaN or indefinite matrix, which
    NumPy and TensorFlow's CPU kernel would raise on."""
    if not is_dense(m2):
        n = n[:, None]
        variance = m2 / (n - 1.0)
        return (n / (n + 5.0)) * variance + 1e-3 * (5.0 / (n + 5.0))
    dims = m2.shape[-1]
    n = n[:, None, None]
    if is_tensor(m2):
        covariance = m2 / tf.maximum(n - 1.0, 1.0)
        eye = tf.eye(dims, dtype=m2.dtype)
        return tf.linalg.cholesky((n / (n + 5.0)) * covariance + 1e-3 * (5.0 / (n + 5.0)) * eye)
    xp = _xp(m2, n)
    covariance = m2 / xp.maximum(n - 1.0, 1.0)
    eye = xp.eye(dims, dtype=m2.dtype)
    return xp.linalg.cholesky((n / (n + 5.0)) * covariance + 1e-3 * (5.0 / (n + 5.0)) * eye)


def finite_or(value, fallback):
    """value where it is finite or +inf, `fallback` where it is NaN: [chains]."""
    if is_tensor(value):
        return tf.where(tf.math.is_nan(value), tf.cast(fallback, value.dtype), value)
    xp = _xp(value)
    return xp.where(xp.isnan(value), fallback, value).astype(xp.asarray(value).dtype)


def log_add_exp(a, b):
    """log(exp(a) + exp(b)) per chain, -inf where both are -inf: [chains]."""
    if is_tensor(a, b):
        return tf.math.reduce_logsumexp(tf.stack([a, b], axis=-1), axis=-1)
    return _xp(a, b).logaddexp(a, b)


def turn_checkpoints(leaf, levels):
    """Which checkpoints leaf `leaf` of a subtree reads and writes: (first,
    last), [chains] int64 each.

    Built leaf by leaf, a subtree of 2**d leaves holds every aligned block
    of 2**k leaves (k >= 1) as a sub-subtree whose two ends must not make a
    U-turn.  Leaf n ends the blocks of sizes 2, 4, ..., 2**t, where t is
    the number of trailing one bits of n; their first leaves were kept as
    checkpoints `first .. last`, with last = popcount(n >> 1) and
    first = last - t + 1 (an empty range for an even n).  An even leaf n
    starts a block and is kept at checkpoint popcount(n >> 1) = `last`,
    which no block still open needs (the scheme numpyro's iterative NUTS
    uses; `levels` checkpoints hold a subtree of 2**levels leaves)."""
    if is_tensor(leaf):
        leaf = tf.cast(leaf, tf.int64)[:, None]
        bits = tf.bitwise.bitwise_and(
            tf.bitwise.right_shift(leaf, tf.range(levels, dtype=tf.int64)), tf.constant(1, tf.int64)
        )  # [chains, levels]: bit k of leaf
        trailing = tf.reduce_sum(tf.math.cumprod(bits, axis=1), axis=1)
        last = tf.reduce_sum(bits[:, 1:], axis=1)
        return last - trailing + 1, last
    xp = _xp(leaf)
    leaf = xp.asarray(leaf, np.int64)[:, None]
    bits = xp.bitwise_and(xp.right_shift(leaf, xp.arange(levels, dtype=np.int64)), 1)
    trailing = xp.sum(xp.cumprod(bits, axis=1), axis=1)  # [chains]
    last = xp.sum(bits[:, 1:], axis=1)  # [chains]
    return last - trailing + 1, last


def turned(ends_x, ends_r, x, r, first, last, direction):
    """Whether a sub-subtree that leaf (x, r) closes makes a U-turn: [chains] bool.

    ends_x, ends_r: the checkpoints' positions and momenta [chains, levels,
    dims]; x, r: the new leaf's [chains, dims]; checkpoints `first .. last`
    ([chains] each) are the first leaves of the blocks the new leaf ends.
    A block turns unless both its ends move apart along the span from its
    earlier end to its later one, span . r >= 0 at each end (Hoffman and
    Gelman's criterion; with the momentum, not the velocity M^-1 r, it is
    the same in any metric's coordinates, like Stan's p_sharp . rho); built
    backwards in time (direction -1) the new leaf is the earlier end."""
    if is_tensor(ends_x, x):
        span = direction[:, None, None] * (x[:, None, :] - ends_x)  # [chains, levels, dims]
        ahead = (tf.reduce_sum(span * ends_r, axis=-1) >= 0) & (
            tf.reduce_sum(span * r[:, None, :], axis=-1) >= 0
        )
        level = tf.range(ends_x.shape[1], dtype=tf.int64)[None, :]
        first = tf.cast(first, tf.int64)[:, None]
        last = tf.cast(last, tf.int64)[:, None]
        closed = (level >= first) & (level <= last)  # [chains, levels]
        return tf.reduce_any(closed & ~ahead, axis=1)
    xp = _xp(ends_x, x)
    span = direction[:, None, None] * (x[:, None, :] - ends_x)  # [chains, levels, dims]
    ahead = (xp.sum(span * ends_r, axis=-1) >= 0) & (xp.sum(span * r[:, None, :], axis=-1) >= 0)
    level = xp.arange(ends_x.shape[1])[None, :]
    closed = (level >= xp.asarray(first)[:, None]) & (level <= xp.asarray(last)[:, None])
    return xp.any(closed & ~ahead, axis=1)


def checkpoint(ends, at, value, keep):
    """`ends` with `value` written at checkpoint `at` where `keep`:
    [chains, levels, dims] (ends), [chains] (at, keep), [chains, dims] (value)."""
    if is_tensor(ends, value):
        level = tf.range(ends.shape[1], dtype=tf.int64)[None, :]
        hit = (level == tf.cast(at, tf.int64)[:, None]) & keep[:, None]
        return tf.where(hit[:, :, None], value[:, None, :], ends)
    xp = _xp(ends, value)
    level = xp.arange(ends.shape[1])[None, :]
    hit = (level == xp.asarray(at)[:, None]) & xp.asarray(keep)[:, None]  # [chains, levels]
    return xp.where(hit[:, :, None], value[:, None, :], ends)


def checkpoints(like, levels):
    """Zeroed checkpoints for `levels` leaves like `like` [chains, dims]:
    [chains, levels, dims]."""
    if is_tensor(like):
        return tf.zeros([tf.shape(like)[0], levels, like.shape[-1]], like.dtype)
    xp = _xp(like)
    return xp.zeros((like.shape[0], levels, like.shape[-1]), like.dtype)
