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


def _bisect_left_xla(read, doc):
    """A masked binary search over the whole batch; `read(v, mid)` is v[b][mid[b]]."""

    def bisect(v, x):
        v = tf.convert_to_tensor(v)
        x = tf.convert_to_tensor(x, v.dtype)
        n = tf.shape(v)[1]
        lo = tf.zeros_like(x, tf.int32)
        hi = tf.fill(tf.shape(x), n)

        def pending(lo, hi):
            return tf.reduce_any(lo < hi)

        def step(lo, hi):
            active = lo < hi
            # An idle example has lo == hi, at most n: its mid is clamped
            # into range (its result is masked off anyway).
            mid = tf.minimum((lo + hi) // 2, n - 1)
            below = read(v, mid) < x
            lo = tf.where(active & below, mid + 1, lo)
            hi = tf.where(active & ~below, mid, hi)
            return lo, hi

        lo, _ = tf.while_loop(pending, step, (lo, hi))
        return tf.cast(lo, x.dtype)

    bisect.__doc__ = doc
    return tf.function(bisect, jit_compile=True)


def _gather_item(v, i):
    """v[b][i[b]]: one gather per example row."""
    return tf.gather(v, i, batch_dims=1)


def _one_hot_item(v, i):
    """v[b][i[b]] as a one-hot select and a sum over the row (no gather).

    (`tf.one_hot(i, n, dtype=tf.bool)` alone fails: its default on and off
    values are the ints 1 and 0.)
    """
    hot = tf.one_hot(i, tf.shape(v)[1], on_value=True, off_value=False)
    return tf.reduce_sum(tf.where(hot, v, tf.zeros_like(v)), -1)


bisect_left_xla = _bisect_left_xla(
    _gather_item,
    """bisect_left over each example's sorted row, v[mid] by a per-example gather.

    v: [batch, n] sorted rows, x: [batch]; the first i with v[b, i] >= x[b]
    (n if none).  One masked while loop for the batch: an iteration halves
    every unfinished example's interval, until none is left.
    """,
)
bisect_left_one_hot_xla = _bisect_left_xla(
    _one_hot_item,
    """bisect_left_xla with v[mid] read as a one-hot `where` and a row sum
    instead of a gather (to compare the two reads).""",
)


def without_dispatch(function, *specs):
    """`function` called through its concrete function for `specs`, traced on
    the first call: no tf.function dispatch per call, as the generated entry
    calls its programs.  The dispatch (about 0.1 ms a call on this machine)
    is most of a batched binary search over 4096 examples; the hand-written
    fib and Collatz, at 2 to 100 ms a call, are called through it.
    """
    concrete = []

    def call(*args):
        if not concrete:
            concrete.append(function.get_concrete_function(*specs))
        return concrete[0](*(tf.convert_to_tensor(a, s.dtype) for a, s in zip(args, specs)))

    return call


def bisect_left_numpy(v, x):
    v, x = np.asarray(v), np.asarray(x)
    n = v.shape[1]
    lo = np.zeros(len(x), np.int64)
    hi = np.full(len(x), n, np.int64)
    rows = np.arange(len(x))
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = np.minimum((lo + hi) // 2, n - 1)
        below = v[rows, mid] < x
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
