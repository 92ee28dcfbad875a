"""Python statements as written (issue 29): batched == per-example Python.

Every program of tests/python_statements.py on NumPy, TF graph and TF+XLA
at batch sizes 1, 7 and 64, with inputs whose examples take different paths
(different indices, equal ones, negative ones, early exits, trip counts);
then the forms that stay refused: at build time by the fence
(`UnsupportedSyntaxError` with the user's file and line) or by type
inference (`BatchTypeError` naming the line).
"""

import importlib.util
import itertools
import os
import re
import sys
import textwrap
import zlib

import numpy as np
import pytest

import transpiler
from examples.corpus import example
from tests import python_statements as P
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

# Its modules are generated into a temporary folder and run; the tests that
# read their text look for code, not layout: black is skipped (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_statements.py")


def ints(low, high, *shape):
    return lambda rng, n: rng.integers(low, high, (n, *shape))


def args(*makers):
    return lambda rng, n: tuple(make(rng, n) for make in makers)


def floats(*shape):
    return lambda rng, n: rng.normal(size=(n, *shape))


CASES = {
    # ---- tuple targets with items
    "swap_items": args(ints(-9, 9, 6), ints(-6, 6), ints(-6, 6)),
    "swap_item_and_name": args(ints(-9, 9, 5), ints(-5, 5), ints(-9, 9)),
    "swap_matrix_entries": args(ints(-9, 9, 4, 4), ints(-4, 4), ints(0, 4)),
    "targets_in_order": args(ints(-9, 9, 5), ints(-5, 5), ints(-5, 5), ints(-9, 9)),
    "chained": args(ints(-9, 9, 4), ints(-4, 4), ints(-4, 4), ints(-9, 9)),
    "bubble_sort": args(ints(0, 50, 7)),
    "reverse_in_place": args(ints(0, 50, 6)),
    "swap_by_call": args(ints(0, 9, 5), ints(0, 5), ints(-5, 5)),
    # ---- for over arrays
    "sum_until": args(ints(0, 20, 8), ints(0, 80)),
    "find_index": args(ints(0, 5, 6), ints(0, 6)),
    "weighted": args(ints(-9, 9, 5), ints(-3, 3)),
    "dot_of_shorter": args(floats(6), floats(4)),
    "digits_backwards": args(ints(0, 10, 4), ints(-1, 5)),
    "row_stats": args(ints(-9, 9, 3, 4)),
    "count_vowels": args(ints(97, 123, 8)),
    "small_factors": args(ints(1, 500)),
    "table_walk": args(ints(0, 10)),
    "iterates_the_original": args(ints(-9, 9, 4)),
    "sees_item_assignments": args(ints(-9, 9, 5)),
    "sees_augmented": args(ints(-9, 9, 4)),
    "loop_with_call": args(ints(0, 5, 3)),
    "nested_iterables": args(ints(-9, 9, 5), ints(-9, 9, 3)),
    "over_a_call": args(ints(-9, 9, 4)),
    "last_element": args(floats(4)),
    # ---- lists of a fixed size
    "longest_common_subsequence": args(ints(0, 3, 6), ints(0, 3, 5)),
    "edit_distance": args(ints(0, 3, 5), ints(0, 3, 4)),
    "rows_of_a_value": args(ints(-9, 9), ints(-9, 9, 3)),
    "from_the_loop_variable": args(ints(-9, 9), ints(-9, 9, 3)),
    "histogram": args(ints(0, 20, 9)),
    "weighted_edges": args(ints(-9, 9, 4, 2), ints(-3, 3, 3)),
    # ---- assignment by lists of positions
    "determinant_by_elimination": args(ints(-4, 5, 3, 3)),
    "positions_assigned": args(ints(0, 9, 4), ints(-4, 4), ints(0, 4)),
    "positions_read": args(ints(0, 9, 3, 2), ints(0, 9, 4), ints(-3, 3), ints(0, 3)),
    # ---- reductions of comprehensions
    "number_facts": args(ints(0, 40)),
    "comprehension_scope": args(ints(0, 9, 5), ints(0, 9)),
    "adjacent_pairs": args(ints(0, 6, 4), ints(0, 9, 4)),
    "passes_to_sort": args(ints(0, 20, 5)),
    "smallest_above_or_none": args(ints(0, 9, 4), ints(0, 10)),
    "nested_comprehensions": args(ints(-5, 5, 3, 3), ints(-5, 5)),
}


def inputs_of(case, batch):
    return CASES[case](np.random.default_rng(zlib.crc32(f"{case}/{batch}".encode())), batch)


def as_arrays(value):
    """A per-example result with its lists (fixed-size arrays here) as arrays."""
    if isinstance(value, tuple):
        return tuple(as_arrays(v) for v in value)
    if isinstance(value, list):
        return np.asarray(value)
    return value


def expected(name, inputs, batch):
    plain = P.ctx.plain(name)
    return [as_arrays(plain(*example(inputs, i))) for i in range(batch)]


def leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    return [np.asarray(value)]


# Every batch size where a size costs no compile (tests/oracle.py).
PARAMS = oracle_params(CASES)


@pytest.mark.parametrize("case, batch, mode", PARAMS)
def test_batched_equals_per_example(case, batch, mode):
    inputs = inputs_of(case, batch)
    before = [np.array(x, copy=True) for x in inputs]
    result = getattr(P, case)(*inputs, **MODES[mode])
    want = expected(case, inputs, batch)
    assert agrees(result, want)
    # ints stay ints, floats floats, bools bools
    kinds = [leaf.dtype.kind for leaf in leaves(result)]
    assert kinds == [np.asarray(leaf).dtype.kind for leaf in zip(*(leaves(w) for w in want))]
    for x, y in zip(inputs, before):  # the caller's arrays are never written
        assert np.array_equal(x, y)


def test_cases_take_different_paths():
    # At batch 64 the examples differ where it matters: found or not, broken
    # out of or finished, equal and different swap indices.
    v, key = inputs_of("find_index", 64)
    found = np.asarray(P.find_index(v, key, backend="numpy"))
    assert (found == -1).any() and (found >= 0).any()
    v, limit = inputs_of("sum_until", 64)
    total = np.asarray(P.sum_until(v, limit, backend="numpy"))
    assert (total < 0).any() and (total > 0).any()
    v, i, j = inputs_of("swap_items", 64)
    assert (i % 6 == j % 6).any() and (i % 6 != j % 6).any()
    v, n = inputs_of("digits_backwards", 64)
    assert len(set(n.tolist())) == 6


def test_iteration_reads_the_original_or_the_live_array():
    # the two readings differ on these inputs: the tests above pin each one
    v = np.array([[1, 2, 3, 4, 5]])
    assert np.asarray(P.sees_item_assignments(v, backend="numpy")).tolist() == [[1, 3, 6, 10, 15]]
    total, doubled = P.iterates_the_original(np.array([[1, 2, 3]]), backend="numpy")
    assert np.asarray(total).tolist() == [6]
    assert np.asarray(doubled).tolist() == [[8, 16, 24]]


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_a_comprehension_is_one_repeat_not_a_loop(backend):
    P.longest_common_subsequence(*inputs_of("longest_common_subsequence", 1), backend=backend)
    suffix = "np" if backend == "numpy" else "tf"
    text = open(os.path.join(P.ctx._generated_dir(None), "tests", f"python_statements_{suffix}.py")).read()
    assert "rt.repeat(rt.repeat(0, 5 + 1), 6 + 1)" in text


def test_iterating_a_number_names_the_line():
    for backend in ("numpy", "tensorflow"):
        with pytest.raises(transpiler.BatchTypeError) as info:
            P.iterate_a_number(np.array([1, 2]), backend=backend)
        message = str(info.value)
        line = _marked_line(SOURCE, "# <-- iterate_a_number")
        assert re.search(rf"python_statements\.py:{line}:", message), message
        assert "one number per example" in message


@pytest.mark.parametrize("mode", ["numpy", "tf_graph", "jax"])
def test_max_of_an_empty_comprehension_raises_pythons_error(mode):
    """`max(x for x in v if x > t)` where nothing is above t: Python's
    ValueError stops that example (the others get their maximum)."""
    v = np.array([[3, 9, 1], [2, 2, 2], [8, 0, 5]])
    t = np.array([4, 5, 1])
    with pytest.raises(ValueError) as info:
        P.largest_above(v, t, **MODES[mode])
    message = str(info.value)
    line = _marked_line(SOURCE, "# <-- largest_above: empty where nothing is above t")
    assert "example(s) [1]" in message and f"python_statements.py:{line}" in message, message
    try:
        max(())
    except ValueError as error:
        assert str(error) in message
    fine = np.array([[3, 9, 1], [8, 0, 5]])
    got = np.asarray(P.largest_above(fine, np.array([4, 1]), **MODES[mode])).tolist()
    assert got == [9, 8]


def _marked_line(path, mark):
    with open(path) as f:
        hits = [k for k, line in enumerate(f, start=1) if line.rstrip().endswith(mark)]
    assert len(hits) == 1, hits
    return hits[0]


# ---- refused by the fence, with the user's file and line --------------------

_counter = itertools.count()


def _module(tmp_path, monkeypatch, body):
    name = f"autobatch_statements_case_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    header = (
        "import numpy as np\n"
        "from transpiler import Context\n\n"
        f"ctx = Context(generated_dir={str(tmp_path / 'generated')!r})\n\n"
    )
    path.write_text(header + textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module, path


# (id, module body defining the batched function `f`, a fragment of the message)
FENCED = [
    (
        "for_over_a_string",
        """
        @ctx.batch
        def f(n):
            total = 0
            for c in "abc":  # <-- here
                total += n
            return total
        """,
        "a `for` loop over a string",
    ),
    (
        "for_over_a_global_string",
        """
        WORD = "abc"

        @ctx.batch
        def f(n):
            total = 0
            for c in WORD:  # <-- here
                total += n
            return total
        """,
        "'WORD', a string",
    ),
    (
        "for_over_a_dict",
        """
        @ctx.batch
        def f(n):
            total = 0
            for k in {1: 2}:  # <-- here
                total += k
            return total + n
        """,
        "over a dict or a set",
    ),
    (
        "for_over_a_global_dict",
        """
        LIMITS = {"low": 1}

        @ctx.batch
        def f(n):
            for k in LIMITS:  # <-- here
                n = n + 1
            return n
        """,
        "'LIMITS', a dict",
    ),
    (
        "for_over_a_global_number",
        """
        COUNT = 3

        @ctx.batch
        def f(n):
            for k in COUNT:  # <-- here
                n = n + k
            return n
        """,
        "not an array of numbers",
    ),
    (
        "for_over_a_tuple_of_values",
        """
        @ctx.batch
        def f(n):
            total = 0
            for x in (n, n + 1):  # <-- here
                total += x
            return total
        """,
        "tuple of values other than numbers",
    ),
    (
        "for_target_an_item",
        """
        @ctx.batch
        def f(v):
            w = v * 0
            for w[0] in v:  # <-- here
                pass
            return w
        """,
        "a `for` target over an array must be a name",
    ),
    (
        "for_assigns_items_of_its_row",
        """
        @ctx.batch
        def f(m):
            for row in m:  # <-- here
                row[0] = 1
            return m
        """,
        "changes items of its target 'row'",
    ),
    (
        "for_rebinds_and_assigns_items",
        """
        @ctx.batch
        def f(v):
            total = 0
            for x in v:  # <-- here
                v[0] = x
                v = v * 2
                total += x
            return total
        """,
        "both rebinds 'v'",
    ),
    (
        "reversed_enumerate",
        """
        @ctx.batch
        def f(v):
            total = 0
            for i, x in reversed(enumerate(v)):  # <-- here
                total += i * x
            return total
        """,
        "reversed() of enumerate() is not a sequence",
    ),
    (
        "zip_strict",
        """
        @ctx.batch
        def f(v):
            total = 0
            for a, b in zip(v, v, strict=True):  # <-- here
                total += a * b
            return total
        """,
        "zip() with keywords",
    ),
    (
        "comprehension_with_if",
        """
        @ctx.batch
        def f(n):
            xs = [0 for i in range(3) if i > 0]  # <-- here
            return n
        """,
        "list comprehension with `if`",
    ),
    (
        "comprehension_over_an_array",
        """
        @ctx.batch
        def f(v):
            xs = [x * 2 for x in v[1:]]  # <-- here
            return xs
        """,
        "over something other than `range(n)` or a name",
    ),
    (
        "comprehension_of_a_per_example_length",
        """
        @ctx.batch
        def f(n):
            xs = [0 for _ in range(n)]  # <-- here
            return xs
        """,
        "`n`, is not known when the program is built",
    ),
    (
        "comprehension_of_a_rebound_length",
        """
        @ctx.batch
        def f(v):
            size = len(v)
            size = size + 1
            xs = [0 for _ in range(size)]  # <-- here
            return xs
        """,
        "`size`, is not known when the program is built",
    ),
    (
        "comprehension_calling_a_batched_function",
        """
        @ctx.batch
        def g(n):
            return n + 1

        @ctx.batch
        def f(n):
            xs = [g(n) for _ in range(3)]  # <-- here
            return xs
        """,
        "calls a batched function",
    ),
    (
        "generator_kept",
        """
        @ctx.batch
        def f(v):
            squares = (x * x for x in v)  # <-- here
            return sum(squares)
        """,
        "generator expression is not supported",
    ),
    (
        "filtered_list_kept",
        """
        @ctx.batch
        def f(v):
            big = [x for x in v if x > 2]  # <-- here
            return len(big)
        """,
        "list comprehension with `if`",
    ),
    (
        "max_with_key",
        """
        @ctx.batch
        def f(v):
            return max((x for x in v), key=abs)  # <-- here
        """,
        "max() with key= is not supported",
    ),
    (
        "reduction_over_a_string",
        """
        @ctx.batch
        def f(n):
            return sum(1 for c in "abc" if c == "a") + n  # <-- here
        """,
        "a `for` loop over a string is not supported",
    ),
    (
        "append",
        """
        @ctx.batch
        def f(n):
            items = [0 for _ in range(3)]
            items.append(n)  # <-- here
            return items
        """,
        "`.append()` changes the length of a list",
    ),
    (
        "starred_item_target",
        """
        @ctx.batch
        def f(v):
            k, *v[1:] = 2, 3  # <-- here
            return v
        """,
        "a starred target must be a name",
    ),
]


@pytest.mark.parametrize("body, fragment", [c[1:] for c in FENCED], ids=[c[0] for c in FENCED])
def test_fence_refuses_with_file_and_line(tmp_path, monkeypatch, body, fragment):
    # at import: decorating refuses it, before any call
    with pytest.raises(transpiler.UnsupportedSyntaxError) as info:
        _module(tmp_path, monkeypatch, body)
    path = next(tmp_path.glob("autobatch_statements_case_*.py"))
    line = _marked_line(path, "# <-- here")
    err = info.value
    assert err.filename == str(path)
    assert err.lineno == line
    assert fragment in err.msg, err.msg
    assert "in batched function 'f'" in err.msg
    assert err.hint
    assert not (tmp_path / "generated").exists() or not any((tmp_path / "generated").rglob("*.py"))
