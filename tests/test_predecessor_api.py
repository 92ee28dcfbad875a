"""Code written for the predecessor, run unchanged (issue 22, defects 3-8).

3. `type_inference=` callables get `TupleType`s and may hand them back.
4. `TensorFlowBackend(safety_checks=..., while_parallel_iterations=...,
   while_maximum_iterations=..., basic_block_xla_device=...)`, `NumpyBackend()`.
5. Batched functions whose names start with `_`.
6. Batch-of-one constants (`tf.constant([0])` beside per-example scalars) in
   functions batched with `type_inference=`, and lists that stay lists.
7. `instructions.PrimOp(vars_in, vars_out, function, skip_push_mask)` with a
   callable, and the pattern helpers (`pattern_map2` ...).
8. Two Contexts with a function of the same name in one file.

Results are compared with the function applied to each example alone
(plain Python, or for the predecessor's batch-of-one convention its dry run
on a batch of one), on NumPy, TF graph and TF+XLA.
"""

import collections
import os
import tempfile

import numpy as np
import pytest
import tensorflow as tf

from transpiler import (
    Context,
    IterationLimitError,
    NumpyBackend,
    StackOverflowError,
    TensorFlowBackend,
    TensorType,
    Type,
    instructions,
)
from transpiler import types as T
from transpiler.demo import agrees
from tests.oracle import MODES

GENERATED = tempfile.mkdtemp(prefix="autobatch-test-predecessor-")
ctx = Context(generated_dir=os.path.join(GENERATED, "main"))


Point = collections.namedtuple("Point", ["x", "v"])


def same_type(args):
    return args[0]


def example(inputs, i):
    """Example `i` of batched inputs (lists and tuples of arrays kept as they are)."""
    return tf.nest.map_structure(lambda a: np.asarray(a)[i], tuple(inputs))


def check(function, inputs, mode, plain=None, **kwargs):
    """Batched == plain on each example, structure (tuple, list, namedtuple) too."""
    plain = plain or ctx.plain(function.name)
    batch = len(np.asarray(tf.nest.flatten(inputs)[0]))
    want = [plain(*example(inputs, i)) for i in range(batch)]
    got = function(*inputs, **MODES[mode], **kwargs)
    tf.nest.assert_same_structure(got, want[0], check_types=True)
    assert agrees(got, want), (got, want)
    return got


# ---- 3: type_inference returning the TupleTypes it receives -----------------


@ctx.batch(type_inference=same_type)
def settle(p, n):
    # a namedtuple argument, returned through recursion: its type is args[0]
    if n > 0:
        return settle(Point(p.x + p.v, p.v * 0.5), n - 1)
    return p


@ctx.batch(type_inference=lambda args: args[0])
def swap_down(t, n):
    # a nested plain tuple
    if n > 0:
        return swap_down(((t[0][1], t[0][0]), t[1] + 1), n - 1)
    return t


@ctx.batch(type_inference=lambda args: [Type(args[0])])
def wrapped(p, n):
    # the predecessor's `Type` around a TupleType, in a list of one
    return settle(p, n)


def point_inputs(batch):
    rng = np.random.default_rng(batch)
    return Point(rng.normal(size=batch), rng.normal(size=batch)), rng.integers(0, 5, batch)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 7])
def test_type_inference_returns_tuple_types(mode, batch):
    p, n = point_inputs(batch)
    assert isinstance(check(settle, (p, n), mode), Point)
    assert isinstance(check(wrapped, (p, n), mode), Point)
    t = ((np.arange(batch) * 1.5, np.arange(batch) * 10.0), np.zeros(batch, np.int64))
    check(swap_down, (t, n), mode)


def test_type_inference_sees_tuple_types():
    seen = []

    def record(args):
        seen.append(args)
        return args[0]

    local = Context(generated_dir=os.path.join(GENERATED, "record"))
    local.batch_uncurried(settle.function, record)
    local.program_compiled("settle", [T.TupleType((TensorType(np.float64, ()),) * 2, Point),
                                      TensorType(np.int64, ())], "numpy")
    assert isinstance(seen[0][0], T.TupleType) and seen[0][0].cls is Point


# ---- 4: the predecessor's backend keywords -----------------------------------


@ctx.batch
def depth(n):
    if n <= 0:
        return 0
    return depth(n - 1) + 1


@ctx.batch
def countdown(n):
    steps = 0
    while n > 0:
        n -= 1
        steps += 1
    return steps


def compiled_graphs(function):
    """The concrete functions the generated module traced for `function`."""
    entry = next(e for k, e in ctx._entries.items() if k[0] == function.name and k[2] == "tensorflow")
    traced = entry.__globals__["rt"]._COMPILED.items()
    return [(k, f) for k, f in traced if callable(k[0]) and k[0].__name__.startswith(function.name)]


def test_backend_constructors_take_the_predecessors_keywords():
    backend = TensorFlowBackend(
        safety_checks=False,
        while_parallel_iterations=1,
        while_maximum_iterations=50,
        basic_block_xla_device=None,
    )
    assert (backend.safety_checks, backend.while_parallel_iterations) == (False, 1)
    assert backend.while_maximum_iterations == 50
    assert "while_parallel_iterations=1" in repr(backend)
    assert TensorFlowBackend() == backend  # options change calls, not generated code
    assert repr(NumpyBackend()) == "NumpyBackend()"
    with pytest.raises(TypeError):
        TensorFlowBackend(unknown=1)
    with pytest.raises(ValueError):
        TensorFlowBackend(while_parallel_iterations=0)


def test_safety_checks_false_skips_the_overflow_check():
    n = np.array([1, 2, 9])
    with pytest.raises(StackOverflowError):
        depth(n, max_stack_depth=4, backend=TensorFlowBackend())
    got = depth(n, max_stack_depth=4, backend=TensorFlowBackend(safety_checks=False))
    assert got.numpy()[:2].tolist() == [1, 2]  # the examples that fit are right


def test_while_parallel_iterations_reaches_the_while_loop():
    n = np.array([3, 0, 5])
    for parallel in (1, 7):
        backend = TensorFlowBackend(while_parallel_iterations=parallel)
        got = countdown(n, backend=backend, trace_after=0)  # traced at once: a graph to read
        assert got.numpy().tolist() == [3, 0, 5]
    settings = set()
    for key, function in compiled_graphs(countdown):
        for op in function.graph.get_operations():
            if op.type in ("While", "StatelessWhile"):
                settings.add((key[5], op.get_attr("parallel_iterations")))
    assert {(1, 1), (7, 7)} <= settings


@pytest.mark.parametrize("mode", ["tf_graph", "tf_xla"])
def test_while_maximum_iterations_is_max_iterations(mode):
    n = np.array([3, 40])
    limited = dict(MODES[mode], backend=TensorFlowBackend(while_maximum_iterations=10))
    with pytest.raises(IterationLimitError, match="max_iterations=10"):
        countdown(n, **limited)
    assert countdown(n, max_iterations=1000, **{**limited}).numpy().tolist() == [3, 40]
    assert countdown(n, **MODES[mode]).numpy().tolist() == [3, 40]


def test_basic_block_xla_device_compiles_the_loop_on_that_device():
    n = np.array([4, 1, 6])
    got = countdown(n, backend=TensorFlowBackend(basic_block_xla_device="CPU:0"))
    assert got.numpy().tolist() == [4, 1, 6]
    assert any(key[1] for key, _ in compiled_graphs(countdown))  # traced with xla=True


def test_numpy_backend_object():
    assert depth(np.array([2, 5]), backend=NumpyBackend()).tolist() == [2, 5]


# ---- 5: names starting with an underscore ------------------------------------


@ctx.batch
def _collatz_steps(n):
    if n <= 1:
        return 0
    if n % 2 == 0:
        return __halve(n) + 1
    return _collatz_steps(3 * n + 1) + 1


@ctx.batch
def __halve(n):
    return _collatz_steps(n // 2)


@ctx.batch
def _(x, n):
    # the name `_` itself
    if n > 0:
        return _(x * 2, n - 1)
    return x


@pytest.mark.parametrize("mode", list(MODES))
def test_underscore_names(mode):
    check(_collatz_steps, (np.array([1, 6, 7, 27]),), mode, max_stack_depth=200)
    check(_, (np.array([1.5, -2.0, 3.0]), np.array([0, 3, 1])), mode)


# ---- 6: batch-of-one constants and lists --------------------------------------

old = Context(generated_dir=os.path.join(GENERATED, "predecessor-style"))


@old.batch(type_inference=lambda args: args[1])
def tally(n, steps, total):
    # steps and total arrive as batch-of-one constants; total is a vector
    if n > 0:
        return tally(n - 1, steps + 1, total + n)
    return steps


@old.batch(type_inference=lambda args: args[0])
def start(n):
    # the predecessor's NUTS client writes `tf.constant([0], dtype=tf.int64)`
    # (here NumPy's, which both backends take): one value for every example
    return tally(n, np.array([0], np.int64), np.zeros([1, 2]) + 0.5)


@old.batch(type_inference=lambda args: args[0])
def grow(states, n):
    # a list of states in, a list out, as sample_chain hands a kernel
    if n > 0:
        return grow([states[0] + 1.0, states[1] * 2.0], n - 1)
    return states


def dry_run_per_example(function):
    """The predecessor's per-example meaning: the function on a batch of one."""

    def run(*args):
        one = tf.nest.map_structure(lambda a: np.asarray(a)[None], args)
        result = function(*one, dry_run=True)
        return tf.nest.map_structure(lambda r: np.asarray(r)[0], result)

    return run


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 6])
def test_batch_of_one_constants_in_predecessor_style_code(mode, batch):
    n = np.arange(batch, dtype=np.int64) % 4
    got = check(start, (n,), mode, plain=dry_run_per_example(start))
    assert np.asarray(got).shape == (batch,)
    assert np.asarray(got).tolist() == n.tolist()


@pytest.mark.parametrize("mode", list(MODES))
def test_lists_stay_lists(mode):
    states = [np.arange(4, dtype=np.float64), np.ones((4, 3))]
    n = np.array([0, 1, 2, 3])
    got = check(grow, (states, n), mode, plain=dry_run_per_example(grow))
    assert isinstance(got, list)


def centered(x):
    # written for batch arrays (as TFP's NUTS client reads the batch size and
    # `.dtype` off its arguments): the mean is over the batch
    return x - np.mean(x)


def test_dry_run_keeps_the_predecessors_meaning_where_its_types_are_given():
    x = np.array([1.0, 2.0, 6.0])
    predecessor_style = old.batch(type_inference=lambda args: args[0])(centered)
    assert predecessor_style(x, dry_run=True).tolist() == [-2.0, -1.0, 3.0]
    # without type_inference=, a dry run is the function on each example
    per_example = Context(generated_dir=os.path.join(GENERATED, "dry-run")).batch(centered)
    assert per_example(x, dry_run=True).tolist() == [0.0, 0.0, 0.0]


@ctx.batch
def vector_of_one(x):
    # without type_inference= a constant means what it means on one example:
    # np.array([0.5]) is a vector of length 1
    v = np.array([0.5])
    return v * x


@pytest.mark.parametrize("mode", list(MODES))
def test_constants_keep_their_per_example_meaning_elsewhere(mode):
    got = check(vector_of_one, (np.array([1.0, 4.0]),), mode)
    assert np.asarray(got).shape == (2, 1)


# ---- 7: PrimOp and the pattern helpers ----------------------------------------


def test_primop_positional_with_a_callable():
    function = lambda x, y: x * y + 1  # noqa: E731
    op = instructions.PrimOp(["x", "y"], "z", function, {"z"})
    assert op.vars_in == ["x", "y"] and op.vars_out == "z"
    assert op.function is function
    assert op.skip_push_mask == frozenset({"z"})
    assert op.function(np.array([2, 3]), np.array([4, 5])).tolist() == [9, 16]
    replaced = op.replace(vars_out="w")
    assert replaced.vars_out == "w" and replaced.function is function
    keywords = instructions.PrimOp(vars_in=["x"], vars_out="y", function=abs, skip_push_mask=set())
    assert keywords.function(-3) == 3
    assert isinstance(op, instructions.PrimOp)


def test_primops_of_a_program_are_callable():
    program = ctx.program("settle")
    ops = [
        ins
        for f in program.functions
        for b in f.blocks
        for ins in b.instructions
        if isinstance(ins, instructions.PrimOp)
    ]
    assert ops and all(callable(op.function) for op in ops)


def test_pattern_helpers():
    p, q = Point(1, [2, (3, 4)]), Point(10, [20, (30, 40)])
    summed = instructions.pattern_map2(lambda a, b: a + b, p, q)
    assert summed == Point(11, [22, (33, 44)]) and isinstance(summed.v, list)
    assert instructions.pattern_map(lambda a: -a, p) == Point(-1, [-2, (-3, -4)])
    assert instructions.pattern_flatten(p) == [1, 2, 3, 4]
    assert list(instructions.pattern_zip((1, 2), ((5, 6), 7))) == [(1, (5, 6)), (2, 7)]
    # leaf_type: a namedtuple that stands for one value is not descended into
    assert instructions.pattern_flatten([p, 5], leaf_type=Point) == [p, 5]
    with pytest.raises(ValueError):
        instructions.pattern_map2(lambda a, b: a, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError):
        instructions.pattern_map2(lambda a, b: a, (1, 2), 5)


def test_pattern_map2_picks_between_points_per_example():
    # the NUTS client's `_tf_where`, on batches
    a = Point(tf.constant([1.0, 2.0]), [tf.constant([[1.0], [2.0]])])
    b = Point(tf.constant([5.0, 6.0]), [tf.constant([[5.0], [6.0]])])
    picked = instructions.pattern_map2(
        lambda x, y: tf.where(tf.reshape([True, False], [-1] + [1] * (x.shape.rank - 1)), x, y),
        a,
        b,
    )
    assert picked.x.numpy().tolist() == [1.0, 6.0] and picked.v[0].numpy().tolist() == [[1.0], [6.0]]


# ---- 8: two Contexts, one file, one function name -----------------------------

SHARED = os.path.join(GENERATED, "shared")  # both Contexts write one module


def doubler(dtype):
    context = Context(generated_dir=SHARED)

    def function(x):
        return x + x

    return context.batch_uncurried(function, lambda args: [TensorType(dtype, ())])


def caller_with(batched_callee):
    context = Context(generated_dir=SHARED)

    def callee(x):
        # np.ndim answers per example when batched (0), of the batch when a
        # primitive (1): the two Contexts' programs give different results
        return x * 10 + np.ndim(x)

    def caller(x):
        return callee(x) + 1

    if batched_callee:
        context.batch_uncurried(callee)
    return context.batch_uncurried(caller)


def other_body(offset):
    context = Context(generated_dir=SHARED)
    if offset:

        def function(x):
            return x + 100

    else:

        def function(x):
            return x - 100

    return context.batch_uncurried(function)


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
@pytest.mark.parametrize("order", ["forward", "backward"])
def test_two_contexts_do_not_see_each_others_programs(backend, order):
    as_int32, as_int64 = doubler(np.int32), doubler(np.int64)
    primitive, batched = caller_with(False), caller_with(True)
    plus, minus = other_body(True), other_body(False)
    x = np.array([-1, 2], np.int32)
    calls = [
        (as_int32, x, [-2, 4], np.int32),
        (as_int64, x, [-2, 4], np.int64),
        (primitive, np.array([3, 2]), [32, 22], None),
        (batched, np.array([3, 2]), [31, 21], None),
        (plus, np.array([1]), [101], None),
        (minus, np.array([1]), [-99], None),
    ]
    if order == "backward":
        calls.reverse()
    for _ in range(2):  # each again, after the others regenerated the module
        for function, arg, want, dtype in calls:
            got = np.asarray(function(arg, backend=backend))
            assert got.tolist() == want, function
            if dtype is not None:
                assert got.dtype == dtype
