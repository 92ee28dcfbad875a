"""Batched calls in TF1 graph mode: a `tf.compat.v1` Graph run by a Session
(issue 35), as TFP's own tests run its autobatched NUTS.

In such a graph a `Tensor`'s `==` is Python's identity test, so every
generated block's `active = state.pc == 0` was a Python False: no example
ever left its block and `Session.run` never returned.  The program is now
traced with eager execution outermost (`tensorflow_backend.legacy_graph`).
Here, in a graph and its session:

- results equal the plain function on each example: recursion (also under
  XLA), `==` and `!=` in the user's code, stackless programs, a batched call
  inside the graph's own `tf.while_loop`, one function in two graphs;
- a closure over a tensor of the user's graph reads it;
- the graph's seed (`tf.compat.v1.set_random_seed`) reaches seeded random
  primitives: the same seed draws the same numbers, another seed others,
  even after an eager call traced the program for eager use;
- an example that overflows its stack or runs past `max_iterations` fails
  `Session.run` with InvalidArgumentError naming the error: it never hangs.

Each session has `operation_timeout_in_ms`, so a loop that never ends fails
its test with DeadlineExceededError.
"""

import tempfile

import numpy as np
import pytest
import tensorflow as tf

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-tf1-graph-"))
SESSION_TIMEOUT_MS = 120_000


@ctx.batch
def fib(n):
    if n <= 1:
        return 1
    return fib(n - 1) + fib(n - 2)


@ctx.batch
def kind(n):
    # `==` and `!=` of the user's code, compared per example
    if n % 3 == 0:
        return 3
    if n % 2 != 0:
        return 1
    return 2


@ctx.batch
def collatz_steps(x):
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return steps


@ctx.batch
def spin(x):
    while x > 0:
        x = x + 1
    return x


def noise(x):
    return x + tf.random.uniform(tf.shape(x), seed=7)


@ctx.batch
def noisy(x):
    return noise(x)


def run(build, seed=None):
    """`build()`'s tensors, built in a new TF1 graph and run by its session."""
    with tf.Graph().as_default():
        if seed is not None:
            tf.compat.v1.set_random_seed(seed)
        out = build()
        config = tf.compat.v1.ConfigProto(operation_timeout_in_ms=SESSION_TIMEOUT_MS)
        with tf.compat.v1.Session(config=config) as session:
            return session.run(out)


def plain_collatz(x):
    steps = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


@pytest.mark.parametrize("xla", [False, True])
def test_recursion_in_a_graph_and_a_second_graph(xla):
    n = np.array([0, 1, 5, 9], np.int64)
    expected = [1, 1, 8, 55]
    for _ in range(2):  # a second graph: nothing of the first is reused
        assert run(lambda: fib(tf.constant(n), xla=xla)).tolist() == expected


def test_equality_of_the_users_code_compares_each_example():
    n = np.arange(1, 9, dtype=np.int64)
    assert run(lambda: kind(tf.constant(n))).tolist() == [1, 2, 3, 2, 1, 3, 1, 2]


@pytest.mark.parametrize("stackless", [False, True])
def test_loops_with_inequality_and_stackless_programs(stackless):
    x = np.array([1, 6, 7, 27], np.int64)
    got = run(lambda: collatz_steps(tf.constant(x), stackless=stackless))
    assert got.tolist() == [plain_collatz(int(v)) for v in x]


def test_an_unknown_batch_size():
    n = np.array([3, 4, 6], np.int64)

    def build():
        fed = tf.compat.v1.placeholder_with_default(n, shape=[None])
        return fib(fed)

    assert run(build).tolist() == [3, 5, 13]


def test_a_batched_call_inside_the_graphs_own_while_loop():
    def build():
        def body(i, total):
            return i + 1, total + fib(tf.fill([3], i))

        start = (tf.constant(0, tf.int64), tf.zeros([3], tf.int64))
        return tf.while_loop(lambda i, _: i < 6, body, start)[1]

    assert run(build).tolist() == [sum([1, 1, 2, 3, 5, 8])] * 3


def test_a_closure_over_a_tensor_of_the_users_graph():
    def build():
        scale = tf.constant(3.0) * 2.0  # made in the user's graph

        local = Context(generated_dir=ctx.generated_dir)

        @local.batch
        def scaled(x):
            if x > 0:
                return x * scale
            return x

        return scaled(tf.constant([1.0, -2.0, 0.5]))

    assert run(build).tolist() == [6.0, -2.0, 3.0]


def test_the_graphs_seed_reaches_seeded_random_primitives():
    x = np.zeros(4, np.float32)
    noisy(x)  # traced eagerly first: a graph never takes that trace
    first, again = run(lambda: noisy(tf.constant(x)), seed=3), run(lambda: noisy(tf.constant(x)), seed=3)
    other = run(lambda: noisy(tf.constant(x)), seed=4)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)
    assert np.all((first >= 0) & (first < 1))


def test_errors_fail_the_session_run_and_never_hang():
    with pytest.raises(tf.errors.InvalidArgumentError, match="StackOverflowError"):
        run(lambda: fib(tf.constant(np.array([3, 30], np.int64)), max_stack_depth=4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="IterationLimitError"):
        run(lambda: spin(tf.constant(np.array([0, 1], np.int64)), max_iterations=50))
