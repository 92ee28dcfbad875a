"""A TF-backend batched function called inside the user's own `tf.function`
(issue 22, defect 2).

The generated entry read its error flags with `np.asarray`, which fails on
the symbolic tensors of a graph being traced.  Inside a user's graph:

- results equal the plain function on each example, with and without
  `jit_compile`, with the program itself traced plainly or under XLA, for a
  fixed and for an unknown (`None`) batch size, tuples in and out;
- an example that overflows its stack, indexes out of range or runs past
  `max_iterations` fails the graph at run time with
  `tf.errors.InvalidArgumentError` (a `tf.debugging.Assert`), whose message
  names the error, the examples and the source line;
- under `jit_compile=True` XLA drops such asserts: the call warns when it is
  traced, and `TensorFlowBackend(safety_checks=False)` silences it.
"""

import collections
import tempfile
import warnings

import numpy as np
import pytest
import tensorflow as tf

from examples.corpus import example
from transpiler import Context, TensorFlowBackend
from transpiler.demo import agrees

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-in-tf-function-"))

Pair = collections.namedtuple("Pair", ["total", "steps"])


@ctx.batch
def fib(n):
    if n <= 1:
        return 1
    return fib(n - 1) + fib(n - 2)


@ctx.batch
def walk(p, x, n):
    # a namedtuple in and out, a float beside an int, a loop and recursion
    while n > 0:
        p = Pair(p.total + x * n, p.steps + 1)
        n -= 2
    if p.steps > 2:
        return p
    inner = walk(p, x + 1.0, p.steps + 3)
    return Pair(inner.total - 1.0, inner.steps)


@ctx.batch
def spin(x):
    while x > 0:
        x = x + 1
    return x


@ctx.batch
def pick(v, i):
    return v[i] * 2


MODES = {
    "graph": dict(jit_compile=False, xla=False),
    "graph_inner_xla": dict(jit_compile=False, xla=True),
    "jit_compile": dict(jit_compile=True, xla=False),
}


def in_graph(call, jit_compile, signature=None):
    """`call` wrapped in the user's own tf.function."""
    return tf.function(call, jit_compile=jit_compile, input_signature=signature)


def fib_inputs(batch):
    return np.arange(batch, dtype=np.int64) % 9


def walk_inputs(batch):
    rng = np.random.default_rng(batch)
    p = Pair(rng.normal(size=batch), rng.integers(0, 3, batch))
    return p, rng.normal(size=batch), rng.integers(0, 6, batch)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 6])
def test_fib_inside_a_user_graph_equals_per_example(mode, batch):
    options = MODES[mode]
    n = fib_inputs(batch)
    plain = ctx.plain("fib")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jit_compile warns that checks are off
        user = in_graph(lambda n: fib(n, xla=options["xla"]) * 2 + 1, options["jit_compile"])
        got = user(tf.constant(n)).numpy()
    assert got.tolist() == [plain(k) * 2 + 1 for k in n.tolist()]
    # the result keeps the argument's static batch size inside the graph
    # (a user's tf.while_loop refuses a state that comes back as [None])
    static = user.get_concrete_function(tf.TensorSpec([batch], tf.int64)).outputs[0].shape
    assert static.as_list() == [batch]


@pytest.mark.parametrize("mode", list(MODES))
def test_unknown_batch_size_and_tuples_inside_a_user_graph(mode):
    options = MODES[mode]
    spec = [
        Pair(tf.TensorSpec([None], tf.float64), tf.TensorSpec([None], tf.int64)),
        tf.TensorSpec([None], tf.float64),
        tf.TensorSpec([None], tf.int64),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        user = in_graph(
            lambda p, x, n: walk(p, x, n, xla=options["xla"]), options["jit_compile"], spec
        )
        plain = ctx.plain("walk")
        for batch in (1, 4, 9):  # one trace serves every batch size
            inputs = walk_inputs(batch)
            got = user(*inputs)
            assert isinstance(got, Pair)
            assert agrees(got, [plain(*example(inputs, i)) for i in range(batch)])


def test_a_batch_of_one_broadcasts_inside_a_graph_of_unknown_batch_size():
    user = in_graph(
        lambda p, x, n: walk(p, x, n),
        False,
        [
            Pair(tf.TensorSpec([None], tf.float64), tf.TensorSpec([None], tf.int64)),
            tf.TensorSpec([None], tf.float64),
            tf.TensorSpec([None], tf.int64),
        ],
    )
    p, x, n = walk_inputs(5)
    got = user(p, x[:1], n)  # x: a batch of one, broadcast when the graph runs
    x5 = np.repeat(x[:1], 5)
    plain = ctx.plain("walk")
    assert agrees(got, [plain(*example((p, x5, n), i)) for i in range(5)])
    with pytest.raises(tf.errors.InvalidArgumentError):
        user(p, x[:3], n)  # 3 beside 5: no broadcast


@pytest.mark.parametrize("inner_xla", [False, True])
def test_stack_overflow_inside_a_user_graph_fails_the_graph(inner_xla):
    user = in_graph(lambda n: fib(n, max_stack_depth=3, xla=inner_xla), False)
    assert user(tf.constant([1, 2, 3], tf.int64)).numpy().tolist() == [1, 2, 3]
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        user(tf.constant([1, 6, 2, 7], tf.int64))
    message = str(raised.value)
    assert "fib: StackOverflowError: example(s)] [1 3]" in message
    assert "max_stack_depth=3" in message
    assert "return fib(n - 1) + fib(n - 2)" in message  # the user's line


@pytest.mark.parametrize("inner_xla", [False, True])
def test_iteration_limit_inside_a_user_graph_fails_the_graph(inner_xla):
    user = in_graph(lambda x: spin(x, max_iterations=20, xla=inner_xla), False)
    assert user(tf.constant([0, -3], tf.int64)).numpy().tolist() == [0, -3]
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        user(tf.constant([0, 4, -1, 9], tf.int64))
    message = str(raised.value)
    assert "spin: IterationLimitError: example(s)] [1 3]" in message
    assert "max_iterations=20" in message and "x = x + 1" in message


@pytest.mark.parametrize("inner_xla", [False, True])
def test_index_error_inside_a_user_graph_fails_the_graph(inner_xla):
    user = in_graph(lambda v, i: pick(v, i, xla=inner_xla), False)
    v = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert user(v, tf.constant([0, 3, -1], tf.int64)).numpy().tolist() == [0.0, 14.0, 22.0]
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        user(v, tf.constant([0, 4, 1], tf.int64))
    message = str(raised.value)
    assert "pick: IndexError: example(s)] [1]" in message and "v[i]" in message


def test_eager_calls_still_raise_the_python_errors():
    from transpiler import IterationLimitError, StackOverflowError

    with pytest.raises(StackOverflowError):
        fib(np.array([1, 6]), max_stack_depth=3)
    with pytest.raises(IterationLimitError):
        spin(np.array([0, 4]), max_iterations=20)


def test_under_jit_compile_the_checks_cannot_run_and_the_call_says_so():
    user = in_graph(lambda n: fib(n, max_stack_depth=3), True)
    with pytest.warns(UserWarning, match="XLA drops assertions"):
        got = user(tf.constant([1, 2, 3], tf.int64))
    assert got.numpy().tolist() == [1, 2, 3]
    quiet = in_graph(
        lambda n: fib(n, max_stack_depth=3, backend=TensorFlowBackend(safety_checks=False)), True
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quiet(tf.constant([1, 2, 3], tf.int64)).numpy().tolist() == [1, 2, 3]


def test_the_user_graph_is_traced_without_autograph_converting_the_call():
    # AutoGraph would convert BatchedFunction.__call__ and the generated
    # entry (and warn that it cannot read the entry's source).
    from tensorflow.python.autograph.impl import api

    assert api.is_autograph_artifact(fib)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        user = in_graph(lambda n: fib(n) + 1, False)
        assert user(tf.constant([5, 6], tf.int64)).numpy().tolist() == [9, 14]
