"""Eager TensorFlow calls start op by op, and trace only what runs long.

A program's first eager calls (graph mode, no XLA) run their loop op by op;
one that is still running after its budget of iterations hands its state
and stacks to the rest of the loop traced as a graph (a `continuation`),
and a program called again and again is traced whole (issue 35: a one-off
NUTS step of a new kernel took seconds to trace, 3-5x TFP's eager run).
Every path must return what plain Python returns for each example, raise
the same errors, and trace what the docstrings of
`autobatch_runtime.tensorflow_backend.compiled` say it traces.
"""

import tempfile

import numpy as np
import pytest
import tensorflow as tf

from autobatch_runtime import tensorflow_backend as tb
from transpiler import Context, StackOverflowError

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-eager-tiers-"))


@ctx.batch
def fib(n):
    if n <= 1:
        return n
    return fib(n - 1) + fib(n - 2)


@ctx.batch
def ordered(v):
    """Insertion sort: per-example vector registers and item assignment."""
    for i in range(1, len(v)):
        key = v[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = key
    return v


@ctx.batch
def total_below(v, x, i):
    """Recursion that keeps a vector live across its call: vector stacks."""
    if i == 0:
        return 0
    return total_below(v, x, i - 1) + (v[i - 1] if v[i - 1] < x else 0)


def plain_fib(n):
    return n if n <= 1 else plain_fib(n - 1) + plain_fib(n - 2)


def traced():
    """What the runtime holds traced: (whole programs, continuations)."""
    keys = list(tb._COMPILED)
    continuations = [k for k in keys if k[0] == "continuation"]
    return len(keys) - len(continuations), len(continuations)


@pytest.fixture(autouse=True)
def nothing_traced():
    tb.release_compiled()
    yield
    tb.release_compiled()


def test_short_first_calls_run_op_by_op_and_trace_nothing():
    for batch in (1, 7):
        n = np.arange(batch) % 6
        assert fib(n, backend="tensorflow").numpy().tolist() == [plain_fib(int(k)) for k in n]
    assert traced() == (0, 0)


def test_a_long_call_hands_its_state_to_a_traced_loop():
    rng = np.random.default_rng(1)
    n = rng.integers(0, 13, 64)
    result = fib(n, backend="tensorflow", trace_after=5)
    assert result.numpy().tolist() == [plain_fib(int(k)) for k in n]
    assert traced() == (0, 1)
    # Later calls, of any batch size, start that loop at once: no new trace.
    for batch in (1, 7, 64):
        m = rng.integers(0, 13, batch)
        assert fib(m, backend="tensorflow", trace_after=5).numpy().tolist() == [
            plain_fib(int(k)) for k in m
        ]
    assert traced() == (0, 1)


def test_a_program_called_again_and_again_is_traced_whole():
    n = np.array([3, 0, 5])
    for call in range(tb.EAGER_CALLS):
        fib(n, backend="tensorflow")
        assert traced() == (0, 0), call
    assert fib(n, backend="tensorflow").numpy().tolist() == [2, 0, 5]
    assert traced() == (1, 0)


@pytest.mark.parametrize("trace_after", [None, 0, 3])
def test_vector_registers_and_stacks_on_every_path(trace_after):
    rng = np.random.default_rng(7)
    v = rng.integers(-50, 50, (7, 9))
    result = ordered(v, backend="tensorflow", trace_after=trace_after)
    assert result.numpy().tolist() == [sorted(row) for row in v.tolist()]
    x = rng.integers(-50, 50, 7)
    i = rng.integers(0, 10, 7)
    result = total_below(v, x, i, backend="tensorflow", trace_after=trace_after)
    assert result.numpy().tolist() == [
        sum(e for e in row[:k] if e < t) for row, t, k in zip(v.tolist(), x, i)
    ]
    if trace_after == 0:
        assert traced() == (2, 0)
    if trace_after == 3:
        assert traced() == (0, 2)


def test_trace_after_zero_traces_at_once():
    assert fib(np.array([4, 7]), backend="tensorflow", trace_after=0).numpy().tolist() == [3, 13]
    assert traced() == (1, 0)


def test_functions_run_eagerly_never_traces():
    n = np.arange(12)
    tf.config.run_functions_eagerly(True)
    try:
        for _ in range(tb.EAGER_CALLS + 1):
            result = fib(n, backend="tensorflow", trace_after=2)
            assert result.numpy().tolist() == [plain_fib(int(k)) for k in n]
    finally:
        tf.config.run_functions_eagerly(False)
    assert traced() == (0, 0)


@pytest.mark.parametrize("trace_after", [None, 2])
def test_stack_overflow_names_the_line_op_by_op_and_after(trace_after):
    with pytest.raises(StackOverflowError, match=r"test_eager_tiers\.py:\d+"):
        fib(np.array([1, 9]), backend="tensorflow", max_stack_depth=4, trace_after=trace_after)


def test_inside_a_users_tf_function_the_program_is_traced_into_it():
    @tf.function
    def users(n):
        return fib(n, backend="tensorflow")

    assert users(tf.constant([6, 2], tf.int64)).numpy().tolist() == [8, 1]
