"""Callees that assign items of their array parameters, as in Python.

Every program of tests/python_inplace.py on NumPy, TF graph and TF+XLA at
batch sizes 1, 7 and 64 against the plain Python function run on each
example (whose callees change the caller's array, as Python's do), and the
aliasing the compiler refuses at build time, naming both lines.
"""

import inspect

import numpy as np
import pytest

from examples.corpus import example
from tests import python_inplace as P
from transpiler import UnsupportedSyntaxError
from transpiler.types import TensorType
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

# Its modules are generated into a temporary folder and run; the tests that
# read their text look for code, not layout: black is skipped (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

def vectors(length):
    return lambda rng, n: (rng.integers(-20, 20, (n, length)),)


CASES = {
    "heap_sort": vectors(8),
    "sort_quick": vectors(8),
    "quick_sorted": lambda rng, n: (
        rng.integers(-20, 20, (n, 8)),
        rng.integers(0, 3, n),
        rng.integers(3, 8, n),
    ),
    "bubble_sort": vectors(7),
    "fill_twice": lambda rng, n: (rng.integers(-5, 5, (n, 6)), rng.integers(0, 7, n)),
    "reversed_vector": vectors(9),
    "matrix_caller": lambda rng, n: (rng.integers(-9, 9, (n, 3, 4)), rng.integers(0, 3, n)),
    "copies_and_expressions": vectors(4),
    "keeps_result": vectors(6),
    "dead_alias": vectors(3),
    "transitive": vectors(7),
    "augmented_entry": lambda rng, n: (rng.integers(-5, 5, (n, 3)), rng.integers(0, 3, n)),
    "rows_rebound": lambda rng, n: (rng.integers(-9, 9, (n, 3, 4)),),
    "augmented_numbers": lambda rng, n: (rng.integers(-9, 9, n), rng.integers(-9, 9, (n, 2))),
    "augmented_item": vectors(3),
    "eliminate_with_pivoting": lambda rng, n: (rng.normal(size=(n, 3, 3)),),
    "row_copied_then_written": lambda rng, n: (rng.integers(-9, 9, n),),
    "array_row_assigned_then_written": lambda rng, n: (rng.integers(-9, 9, n),),
}


# `v.copy()` and `np.array(v)` are NumPy's: these run on the NumPy backend only
NUMPY_ONLY = {"copies_and_expressions", "dead_alias"}


def expected(name, inputs, batch):
    plain = P.ctx.plain(name)
    return [plain(*example(inputs, i)) for i in range(batch)]


PARAMS = oracle_params(CASES, lambda name, mode: not (name in NUMPY_ONLY and mode != "numpy"))


@pytest.mark.parametrize("name, batch, mode", PARAMS)
def test_batched_equals_per_example(name, batch, mode):
    rng = np.random.default_rng(hash((name, batch)) % 2**32)
    inputs = CASES[name](rng, batch)
    before = [np.array(x) for x in inputs]
    result = getattr(P, name)(*inputs, **MODES[mode])
    assert agrees(result, expected(name, inputs, batch))
    # the caller's own batch arrays are not modified: the entry returns them
    assert all(np.array_equal(a, b) for a, b in zip(before, inputs))


def test_the_oracle_sees_the_callees_changes():
    """The plain functions really rely on in-place callees: dropping the
    changes (what the compiler did before) gives another answer."""
    v = np.array([[5, 3, 9, 1, 7, 2, 8, 4]])
    assert P.ctx.plain("sort_quick")(v[0].copy()).tolist() == [1, 2, 3, 4, 5, 7, 8, 9]
    assert np.asarray(P.sort_quick(v, backend="numpy")).tolist() == [[1, 2, 3, 4, 5, 7, 8, 9]]
    assert np.asarray(P.heap_sort(v, backend="numpy")).tolist() == [[1, 2, 3, 4, 5, 7, 8, 9]]


def test_tail_calls_that_assign_items_stay_tail_calls():
    """`return reverse_range(v, i + 1, j - 1)` hands back the same array the
    caller gave: still a jump, so 20 levels run at max_stack_depth=2."""
    v = np.arange(80).reshape(2, 40)
    for mode in MODES.values():
        out = np.asarray(P.reversed_vector(v, max_stack_depth=2, **mode))
        assert out.tolist() == v[:, ::-1].tolist()


def test_recursive_in_place_entry_returns_only_its_result():
    """`quick_sorted` is the entry and its own in-place callee: the entry
    returns the array (not the callee's extra results), sorted."""
    v = np.array([[4, 1, 3, 2], [9, 8, 7, 6]])
    out = P.quick_sorted(v, 0, 3, backend="numpy")
    assert np.asarray(out).tolist() == [[1, 2, 3, 4], [6, 7, 8, 9]]
    assert v.tolist() == [[4, 1, 3, 2], [9, 8, 7, 6]]


def test_the_callee_returns_what_python_returns():
    typed = P.ctx.program_compiled("sort_quick", [TensorType("int64", (8,))], "numpy")
    text = str(typed)
    assert "call partition(arr, low, high)" in text
    assert "(p, arr) = call partition(arr, low, high)" in text


# ---- refusals -------------------------------------------------------------


def line_of(name, text):
    lines, start = inspect.getsourcelines(P.ctx.plain(name))
    for offset, line in enumerate(lines):
        if text in line:
            return start + offset
    raise AssertionError(f"{text!r} is not in {name}")


REFUSALS = {
    # name: (arguments, the two lines the error names)
    "alias_then_write": (vectors(3), ("w = v", "v[0] = 1")),
    "write_through_alias": (vectors(3), ("w = v", "w[0] = 1")),
    "slice_view_then_write": (vectors(4), ("s = v[1:3]", "v[1] = 0")),
    "row_view_then_write": (
        lambda rng, n: (rng.integers(0, 9, (n, 2, 3)), rng.integers(0, 2, n)),
        ("row = m[i]", "m[i, 0] = 5"),
    ),
    "same_array_twice": (vectors(3), ("swap_rows(a, a)", "a[0] = b[0]")),
    "calls_maybe_copied": (
        lambda rng, n: (rng.integers(0, 9, (n, 3)), rng.integers(0, 2, n)),
        ("arr = arr.copy()", "arr[0] = 1"),
    ),
    "calls_mutates_then_rebinds": (vectors(3), ("arr[0] = 1", "arr = arr * 2")),
    "writes_global_alias": (lambda rng, n: (rng.integers(0, 4, n),), ("t = TABLE", "t[0] = i")),
    "view_to_callee": (vectors(4), ("zero_first(v[1:3])", "return v")),
    "augmented_alias": (vectors(3), ("w = v", "w += 1")),
    "augmented_original": (vectors(3), ("w = v", "v += 1")),
    "calls_bump_through_alias": (vectors(3), ("w += 1", "w += 1")),
    "row_stored_then_written": (
        lambda rng, n: (rng.integers(0, 9, (n, 2, 3)),),
        ("b[0] = m[0]", "b[0][1] = 5"),
    ),
    "row_shared_then_written": (
        lambda rng, n: (rng.integers(0, 9, n),),
        ("dp[i] = dp[i - 1]", "dp[i][1] = n + i"),
    ),
    "row_shared_through_a_name": (
        lambda rng, n: (rng.integers(0, 9, n),),
        ("dp[1] = r", "dp[1][1] = n"),
    ),
    "array_rows_swapped": (
        lambda rng, n: (rng.integers(0, 9, (n, 2, 3)), rng.integers(0, 2, n), rng.integers(0, 2, n)),
        ("a[i], a[j] = a[j], a[i]", "a[i], a[j] = a[j], a[i]"),
    ),
}

FUNCTION_OF = {
    "calls_bump_through_alias": "bump_through_alias",
    "calls_maybe_copied": "maybe_copied",
    "calls_mutates_then_rebinds": "mutates_then_rebinds",
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_aliasing_that_python_sees_is_refused_naming_both_lines(name):
    arguments, (first, second) = REFUSALS[name]
    inputs = arguments(np.random.default_rng(0), 3)
    with pytest.raises(UnsupportedSyntaxError) as error:
        getattr(P, name)(*inputs, backend="numpy")
    message = str(error.value)
    where = FUNCTION_OF.get(name, name)
    for text in (first, second):
        if name == "same_array_twice" and text == "a[0] = b[0]":
            where_text = "swap_rows"
        else:
            where_text = where
        line = line_of(where_text, text)
        assert f"python_inplace.py:{line}" in message, (text, message)


def test_an_optional_result_beside_the_changed_array_is_refused():
    # `take_out` returns None on some paths and assigns items of `v`: the
    # array goes back beside the result, and an optional cannot be in a tuple
    with pytest.raises(UnsupportedSyntaxError, match="returns None in some examples"):
        P.calls_take_out(np.array([[1, 2], [3, 4]]), np.array([1, 9]), backend="numpy")


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_stackless_programs_hand_the_array_back(backend):
    # each function its own loop, calls made by the host: the same results
    v = np.array([[4, 1, 3, 2], [9, 8, 7, 6]])
    sorted_rows = [[1, 2, 3, 4], [6, 7, 8, 9]]
    assert np.asarray(P.quick_sorted(v, 0, 3, backend=backend, stackless=True)).tolist() == sorted_rows
    assert np.asarray(P.heap_sort(v, backend=backend, stackless=True)).tolist() == sorted_rows


def test_refusals_happen_before_anything_runs():
    with pytest.raises(UnsupportedSyntaxError):
        P.alias_then_write.prepare(np.zeros((2, 3), np.int64), backend="numpy")


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_augmented_assignment_of_an_array_parameter_is_refused(backend):
    """`v += n` changes a NumPy array in place, so a caller would see it;
    the compiler makes a new array there, so it refuses, naming the line."""
    line = line_of("augmented_array_parameter", "v += n")
    with pytest.raises(UnsupportedSyntaxError, match=r"(?s)in place.*v\[:\] \+= ") as error:
        P.calls_augmented(np.array([[1, 2], [3, 4]]), np.array([1, 2]), backend=backend)
    assert error.value.lineno == line


@pytest.mark.parametrize("backend", ["numpy", "tensorflow", "jax"])
def test_an_undecorated_helper_that_writes_into_its_argument_is_refused(backend):
    """Python changes the caller's vector; the batch would be written row 0
    of every example (or, NumPy, fail at run time without a line): refused at
    build time on every backend, naming the call's line (NumPy's placeholders
    are read-only, as the batch is at run time)."""
    from transpiler import BatchTypeError

    pytest.importorskip("jax") if backend == "jax" else None
    with pytest.raises(BatchTypeError) as error:
        P.calls_a_plain_helper_that_writes(np.arange(6.0).reshape(3, 2), backend=backend)
    assert f"python_inplace.py:{line_of('calls_a_plain_helper_that_writes', 'bump_first(v)')}" in str(error.value)
