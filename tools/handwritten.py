"""The ceiling: the benchmark programs batched by hand, as an expert would.

Each is a masked loop written directly in TensorFlow (compiled with XLA) or
NumPy, with no compiler in between.  `tools/bench.py` times the generated
modules against these.
"""

import numpy as np
import tensorflow as tf


@tf.function(jit_compile=True)
def collatz_xla(x):
    """Collatz step counts: one masked update of every example per iteration."""
    x = tf.convert_to_tensor(x)

    def pending(x, steps):
        return tf.reduce_any(x != 1)

    def step(x, steps):
        active = x != 1
        following = tf.where(x % 2 == 0, x // 2, 3 * x + 1)
        return tf.where(active, following, x), steps + tf.cast(active, steps.dtype)

    _, steps = tf.while_loop(pending, step, (x, tf.zeros_like(x)))
    return steps


def collatz_numpy(x):
    x = np.array(x)
    steps = np.zeros_like(x)
    while True:
        active = x != 1
        if not active.any():
            return steps
        x = np.where(active, np.where(x % 2 == 0, x // 2, 3 * x + 1), x)
        steps += active


@tf.function(jit_compile=True)
def fib_xla(n, depth=32):
    """fib with an explicit stack and an accumulator (fib(0) = fib(1) = 1).

    Each iteration pops one pending call per example: a leaf adds 1 to the
    example's total, any other call pushes its two children.  One iteration
    per call, one stack, no continuations: an expert's rewrite that a
    compiler of general recursion cannot assume.
    """
    n = tf.convert_to_tensor(n)
    batch = tf.shape(n)[0]
    examples = tf.range(batch)
    stack = tf.zeros([depth, batch], n.dtype)
    stack = tf.tensor_scatter_nd_update(stack, tf.stack([tf.zeros_like(examples), examples], 1), n)
    sp = tf.ones([batch], tf.int32)
    total = tf.zeros([batch], n.dtype)

    def pending(stack, sp, total):
        return tf.reduce_any(sp > 0)

    def step(stack, sp, total):
        active = sp > 0
        top = tf.gather_nd(stack, tf.stack([tf.maximum(sp - 1, 0), examples], 1))
        leaf = top <= 1
        total += tf.cast(active & leaf, total.dtype)
        split = active & ~leaf
        sp = tf.where(active, sp - 1, sp)
        hit_a = tf.equal(tf.range(depth)[:, None], sp[None, :]) & split[None, :]
        hit_b = tf.equal(tf.range(depth)[:, None], sp[None, :] + 1) & split[None, :]
        stack = tf.where(hit_a, (top - 1)[None, :], stack)
        stack = tf.where(hit_b, (top - 2)[None, :], stack)
        sp = tf.where(split, sp + 2, sp)
        return stack, sp, total

    _, _, total = tf.while_loop(pending, step, (stack, sp, total))
    return total
