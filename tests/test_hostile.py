"""Hostile inputs and runaway programs: each gets a clear error, or the right answer.

Every row of the "When things go wrong" table (docs/errors.md, in brief in
the README) is backed by a test here.  Input errors are raised from the batched call itself (the traceback
ends in `BatchedFunction.__call__`, with no chain into the checks).
"""

import math
import re
import traceback

import numpy as np
import pytest
import tensorflow as tf

import transpiler
from autobatch_runtime import common as runtime_common
from tests import hostile as H
from tests.test_fence import write_module
from transpiler import batched, context
from tests.oracle import MODES

def marked(text):
    """`tests/hostile.py:N` of the line marked `# <-- text`."""
    with open(H.__file__) as f:
        [number] = [n for n, line in enumerate(f, start=1) if f"# <-- {text}" in line]
    return f"tests/hostile.py:{number}"


def raised_from_the_call(info):
    """The error comes from the user's call: one frame of ours, no chain."""
    frames = traceback.extract_tb(info.tb)
    assert frames[-1].name == "__call__" and frames[-1].filename == batched.__file__
    assert info.value.__cause__ is None and info.value.__suppress_context__


# ---- arguments -----------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_batch_sizes_that_do_not_broadcast(backend):
    with pytest.raises(ValueError) as info:
        H.add(np.array([1, 2, 3]), np.array([1, 2, 3, 4]), backend=backend)
    assert str(info.value) == "add: batch sizes must be equal or 1 (broadcast), got a: 3, b: 4"
    raised_from_the_call(info)
    # The control: sizes equal or 1 broadcast.
    assert np.asarray(H.add(np.array([1, 2, 3]), np.array([10]), backend=backend)).tolist() == [
        11, 12, 13
    ]


def test_ragged_list():
    with pytest.raises(ValueError, match=r"^add: argument a is ragged .*pad it") as info:
        H.add([[1, 2], [3]], 1, backend="numpy")
    raised_from_the_call(info)


def test_object_array():
    with pytest.raises(TypeError, match=r"^add: argument b is an array of dtype object") as info:
        H.add(np.array([1, 2]), np.array([1, "x"], dtype=object), backend="numpy")
    raised_from_the_call(info)


@pytest.mark.parametrize(
    "value, message",
    [
        ("abc", "argument a is a string ('abc')"),
        (np.array(["x", "y"]), "argument a holds strings (dtype <U1)"),
        (["x", "y"], "argument a[0] is a string ('x')"),
        (tf.constant(["x", "y"]), "argument a is an array of dtype object"),
    ],
    ids=["str", "numpy_strings", "list_of_str", "tf_string"],
)
def test_strings(value, message):
    with pytest.raises(TypeError) as info:
        H.add(value, 1, backend="numpy")
    assert str(info.value).startswith("add: " + message)
    raised_from_the_call(info)


def test_dtype_contradicting_the_declared_signature():
    with pytest.raises(TypeError) as info:
        H.scale(np.array([1, 2], np.int32), np.ones((2, 2)), backend="numpy")
    message = str(info.value)
    assert message.startswith("scale: argument n has dtype int32, but int64[] is declared")
    assert "by signature= at tests/hostile.py:" in message
    raised_from_the_call(info)


def test_shape_contradicting_the_declared_signature():
    with pytest.raises(TypeError) as info:
        H.scale(np.array([1, 2]), np.ones((2, 3)), backend="numpy")
    assert str(info.value).startswith(
        "scale: argument v has per-example shape (3,), but float64[2] is declared"
    )
    raised_from_the_call(info)
    # The control: the declared types run, a single example of v too.
    assert H.scale(np.array([1, 2]), np.ones((2, 2)), backend="numpy").tolist() == [2, 4]
    assert H.scale(np.array([3]), np.ones(2), backend="numpy").tolist() == [6]


@pytest.mark.parametrize("mode", list(MODES))
def test_nan_and_infinities_are_computed_through(mode):
    x = np.array([np.nan, np.inf, -np.inf, 3.0, 0.5, -0.0, 1e308])
    got = np.asarray(H.halvings(x, **MODES[mode]))
    plain = H.ctx.plain("halvings")
    expected = np.array([plain(float(v)) for v in x])
    np.testing.assert_array_equal(got, expected)  # NaN == NaN here
    assert np.isinf(got[1]) and got[0] == -1.0  # the special values took their own paths


# ---- runaway programs ------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
def test_recursion_deeper_than_max_stack_depth(mode):
    with pytest.raises(transpiler.StackOverflowError) as info:
        H.depth(np.array([3, 30, 4]), max_stack_depth=10, **MODES[mode])
    message = str(info.value)
    assert message.startswith("depth: example(s) [1] recursed deeper than max_stack_depth=10")
    assert "tests/hostile.py:" in message and "max_stack_depth=20" in message
    # The control: deep enough, the same call returns.
    assert np.asarray(H.depth(np.array([3, 30, 4]), max_stack_depth=31, **MODES[mode])).tolist() == [
        3, 30, 4
    ]


@pytest.mark.parametrize("mode", list(MODES))
def test_a_loop_that_never_ends_stops_at_max_iterations(mode):
    with pytest.raises(transpiler.IterationLimitError) as info:
        H.spin(np.array([-1, 5, -2, 7]), max_iterations=50, **MODES[mode])
    message = str(info.value)
    assert message.startswith("spin: example(s) [1, 3] still running after max_iterations=50")
    # It names the loop: its `while` line or a line of its body (the block
    # the examples wait at).
    loop = int(marked("spin loop").rpartition(":")[2])
    named = re.search(r"in spin at tests/hostile.py:(\d+): ", message)
    assert named and loop <= int(named.group(1)) <= loop + 2, message
    assert isinstance(info.value, RuntimeError)
    # The controls: examples that leave the loop return, under the same limit...
    assert np.asarray(H.spin(np.array([-1, -2]), max_iterations=50, **MODES[mode])).tolist() == [0, 0]
    # ...and a limit that is merely too small says so, and a larger one works.
    with pytest.raises(transpiler.IterationLimitError, match="max_iterations=40"):
        H.count_up(np.array([3, 100]), max_iterations=20, **MODES[mode])
    assert np.asarray(H.count_up(np.array([3, 100]), max_iterations=200, **MODES[mode])).tolist() == [
        3, 100
    ]


def test_iteration_limit_is_off_by_default_and_a_context_option(monkeypatch):
    assert transpiler.Context().max_iterations is None
    assert H.count_up(np.array([5000]), backend="numpy").tolist() == [5000]
    monkeypatch.setattr(H.ctx, "max_iterations", 100)
    with pytest.raises(transpiler.IterationLimitError, match="max_iterations=100"):
        H.count_up(np.array([5000]), backend="numpy")
    # A call's keyword wins over the Context's.
    assert H.count_up(np.array([5000]), backend="numpy", max_iterations=None).tolist() == [5000]


@pytest.mark.parametrize("value", [0, -1])
def test_max_iterations_must_be_positive(value):
    with pytest.raises(ValueError, match=f"max_iterations must be at least 1 .*got {value}"):
        H.count_up(np.array([5]), backend="numpy", max_iterations=value)


def test_max_iterations_needs_the_stack_based_program():
    with pytest.raises(ValueError, match="count_up: max_iterations needs the stack-based program"):
        H.count_up(np.array([5]), backend="numpy", stackless=True, max_iterations=10)


# ---- memory ---------------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
def test_huge_stacks_are_refused_before_allocating(mode):
    with pytest.raises(transpiler.StackMemoryError) as info:
        H.depth(np.arange(100_000), max_stack_depth=1_000_000, **MODES[mode])
    message = str(info.value)
    needed = 1_000_000 * 100_000 * level_bytes("depth")
    assert message.startswith(f"depth: the stacks would take {needed / 2**30:.1f} GiB ({needed} bytes)")
    assert "max_stack_bytes=4.0 GiB" in message and "lower max_stack_depth" in message
    assert isinstance(info.value, MemoryError)


def level_bytes(entry):
    """The generated module's bytes per example and stack level of `entry`."""
    H.depth(np.array([1]), backend="numpy")  # make sure the module exists
    module = H.ctx._entries[next(k for k in H.ctx._entries if k[0] == entry)].__globals__
    return module[f"{entry.upper()}_STACK_BYTES"]


def test_stack_bytes_limit_is_an_option():
    # depth stacks a return address (int32) and nothing else: 4 bytes a level.
    assert level_bytes("depth") == 4
    with pytest.raises(transpiler.StackMemoryError, match=r"takes|take 400 bytes"):
        H.depth(np.arange(10), max_stack_depth=10, max_stack_bytes=399, backend="numpy")
    assert H.depth(np.arange(10), max_stack_depth=10, max_stack_bytes=400, backend="numpy").tolist() == list(range(10))
    assert context.DEFAULT_MAX_STACK_BYTES == runtime_common.DEFAULT_MAX_STACK_BYTES == 4 * 2**30
    assert transpiler.Context().max_stack_bytes == context.DEFAULT_MAX_STACK_BYTES
    assert transpiler.Context(max_stack_bytes=None)._limits({})["max_stack_bytes"] == math.inf


# ---- primitives and sources ------------------------------------------------


def test_a_primitive_that_raises_names_the_users_line():
    with pytest.raises(ValueError, match="checked_log of a number <= 0") as info:
        H.log_of(np.array([1.0, -1.0]), backend="numpy")
    notes = "\n".join(info.value.__notes__)
    assert f"autobatch: raised by the batched code for {marked('raising primitive')}" in notes
    assert "return checked_log(y)" in notes
    assert H.log_of(np.array([1.0, 2.0]), backend="numpy").tolist() == [math.log(2), math.log(4)]


def test_a_primitive_that_always_raises_fails_at_build_time_naming_the_line():
    with pytest.raises(transpiler.BatchTypeError) as info:
        H.always_fails(np.array([1.0]), backend="numpy")
    assert marked("refusing primitive") in str(info.value)
    assert "refuses every input" in str(info.value)


def test_a_source_that_cannot_be_read():
    namespace = {}
    exec("def f(n):\n    return n + 1\n", namespace)
    f = transpiler.Context(generated_dir=H.ctx.generated_dir).batch(namespace["f"])
    assert f(5, dry_run=True) == 6  # the function itself is fine
    with pytest.raises(transpiler.UnsupportedSyntaxError) as info:
        f(np.array([1, 2]), backend="numpy")
    assert "cannot read the source of 'f'" in info.value.msg
    assert "in a .py file" in info.value.hint and "exec" in info.value.hint


# ---- redefinition -----------------------------------------------------------

REDEFINED = """
@ctx.batch
def f(n):
    return n + 1

@ctx.batch
def g(n):
    return f(n) * 10

first = f
first_result = f(np.array([1, 2]), backend="numpy").tolist()

@ctx.batch
def f(n):  # the same name, in the same module: the newest wins
    return n + 2
"""


def test_a_function_redefined_in_its_module_is_replaced(tmp_path, monkeypatch):
    module, _ = write_module(tmp_path, monkeypatch, REDEFINED)
    assert module.first_result == [2, 3]  # the first definition, while it was the one
    assert module.f(np.array([1, 2]), backend="numpy").tolist() == [3, 4]
    assert module.g(np.array([1, 2]), backend="numpy").tolist() == [30, 40]  # calls by name
    assert module.first(np.array([1, 2]), backend="numpy").tolist() == [3, 4]
    assert module.ctx.function_names() == ["f", "g"]


def test_another_function_of_the_same_name_is_refused(tmp_path, monkeypatch):
    module, _ = write_module(tmp_path, monkeypatch, REDEFINED)

    def f(n):  # same name, defined elsewhere
        return n

    with pytest.raises(ValueError, match=r"'f' is already batched in this Context \(autobatch_fence"):
        module.ctx.batch(f)
    assert module.f(np.array([1]), backend="numpy").tolist() == [3]  # unchanged
