"""Public-collection idioms: Python's meaning per example, or a refusal
naming the line (tests/public_idioms.py)."""

import re
import warnings

import numpy as np
import pytest

from tests import public_idioms as P
from tests.oracle import MODES
from transpiler import BatchTypeError

V = np.array([[0, 5, 3, 1], [4, 0, 3, 3], [7, 8, 9, 10], [2, 2, 0, 1], [3, 1, 4, 1]])
X = np.array([0, 3, 7, 5, 1])


def per_example(name, *columns):
    plain = P.ctx.plain(name)
    return [
        plain(*[np.array(c[k]) if np.ndim(c[k]) else c[k].item() for c in columns])
        for k in range(len(columns[0]))
    ]


@pytest.mark.parametrize("mode", MODES)
def test_none_equals_no_number(mode):
    """`r == 0` of a None is False (the batch holds junk, often 0, there)."""
    got = [np.asarray(leaf).tolist() for leaf in P.found_at_start(V, X, **MODES[mode])]
    want = per_example("found_at_start", V, X)
    assert [tuple(leaf[k] for leaf in got) for k in range(len(X))] == want
    assert any(r[0] for r in want) and any(r[1] and not r[0] for r in want)  # both kinds of example
    y = np.array([0, 4, 8, 6, 9])  # example 3: both None; 1 and 4: one None
    got = [np.asarray(leaf).tolist() for leaf in P.same_place(V, X, y, **MODES[mode])]
    want = per_example("same_place", V, X, y)
    assert [tuple(leaf[k] for leaf in got) for k in range(len(X))] == want
    assert want[3] == (True, False) and want[1] == (False, True)
    got = np.asarray(P.first_above(V, X, **MODES[mode])).tolist()
    assert got == per_example("first_above", V, X)


@pytest.mark.parametrize("mode", MODES)
def test_lists_copied_and_numbers_stored_share_nothing(mode):
    """`prev = row[:]` of a list, a helper writing into a list of numbers
    read from a parameter, two rows that trade places: Python's answers
    (each was refused as aliasing)."""
    n = np.array([0, 4, 2, 7, 1])
    assert np.asarray(P.pascal_row(n, **MODES[mode])).tolist() == per_example("pascal_row", n)
    edges = np.array(
        [[[0, 1], [1, 2], [3, 4]], [[0, 0], [5, 5], [2, 3]], [[0, 5], [5, 0], [1, 1]]]
    )
    got = np.asarray(P.count_components(edges, **MODES[mode])).tolist()
    assert got == per_example("count_components", edges) == [3, 5, 5]
    b = np.array([[4, 3, 0], [2, 2, 2], [8, 9, 1], [1, 2, 0], [3, 4, 1]])
    got = np.asarray(P.lcs_two_rows(V, b, **MODES[mode])).tolist()
    assert got == per_example("lcs_two_rows", V, b) and len(set(got)) > 1


@pytest.mark.parametrize("mode", MODES)
def test_lists_join_as_python_joins_them(mode):
    """`[1] + [0] * 7`, `[len(v)] + out + [0]`, `list(v) + list(w)`,
    `list(range(m + 1))` and `[i] + [0] * m`: Python's lists (joins were
    added elementwise, without an error; the last two refused)."""
    n = np.array([0, 4, 2, 7, 1])
    assert np.asarray(P.pascal_joined(n, **MODES[mode])).tolist() == per_example("pascal_joined", n)
    got = np.asarray(P.extended(V, **MODES[mode])).tolist()
    assert got == [list(e) for e in per_example("extended", V)]
    assert got[0] == [4, 0, 10, 6, 2, 0]
    b = np.array([[4, 3, 0], [2, 2, 2], [8, 9, 1], [1, 2, 0], [3, 4, 1]])
    got = np.asarray(P.edit_distance_rows(V, b, **MODES[mode])).tolist()
    assert got == per_example("edit_distance_rows", V, b) and len(set(got)) > 1
    got = np.asarray(P.list_then_array(V, **MODES[mode])).tolist()
    assert got == [list(e) for e in per_example("list_then_array", V)]
    got = np.asarray(P.ranges(V, **MODES[mode])).tolist()
    assert got == per_example("ranges", V) and len(set(got)) > 1
    got = np.asarray(P.joined_copies(V, b, **MODES[mode])).tolist()
    assert got == per_example("joined_copies", V, b) and len(set(got)) > 1


@pytest.mark.parametrize("mode", MODES)
def test_two_lists_compare_whole(mode):
    """`sorted(a) == sorted(b)` is one bool per example (NumPy's `==` of two
    arrays would give one per element)."""
    b = np.array([[3, 1, 0, 5], [4, 3, 0, 3], [7, 8, 9, 1], [2, 1, 2, 0], [1, 3, 1, 4]])
    got = np.asarray(P.is_anagram(V, b, **MODES[mode])).tolist()
    assert got == per_example("is_anagram", V, b) and True in got and False in got
    w = np.array([[1, 2, 2, 1], [1, 2, 3, 1], [5, 5, 5, 5], [0, 1, 0, 1]])
    got = np.asarray(P.is_palindrome(w, **MODES[mode])).tolist()
    assert got == per_example("is_palindrome", w) == [True, False, True, False]
    got = np.asarray(P.differs_as_multisets(V, b, **MODES[mode])).tolist()
    assert got == per_example("differs_as_multisets", V, b)


@pytest.mark.parametrize("mode", MODES)
def test_numbers_as_python_computes_them(mode):
    n, a, m = (
        np.array([3, 10, 0, 1]),
        np.array([3.0, 0.0, -5.0, 1e200]),
        np.array([16, 2**63 - 1, 15, 10**18]),
    )
    got = [np.asarray(leaf).tolist() for leaf in P.numeric_idioms(n, a, m, **MODES[mode])]
    want = per_example("numeric_idioms", n, a, m)
    assert got[0] == [w[0] for w in want] == [3, 10, 0, 1]
    assert np.allclose(got[1], [w[1] for w in want], rtol=1e-15)
    assert got[2] == [w[2] for w in want]


@pytest.mark.parametrize("mode", MODES)
def test_newton_to_isclose_and_a_negative_literal_power(mode):
    x, k = np.array([2.0, 9.0, 0.25, 1e6]), np.array([1, 3, 4, -2])
    got = [np.asarray(leaf).tolist() for leaf in P.newton_sqrt(x, k, **MODES[mode])]
    want = per_example("newton_sqrt", x, k)
    assert np.allclose(got[0], [w[0] for w in want], rtol=1e-12)
    assert got[1] == [w[1] for w in want] == [1.0, 1 / 3, 0.25, -0.5]
    assert got[2] == [w[2] for w in want] == [True, True, False, False]


def test_the_first_error_python_meets_is_the_one_raised():
    with pytest.raises(ZeroDivisionError, match=r"example\(s\) \[1\]"):
        P.remainders(np.array([5.0, 5.0]), np.array([2.0, 0.0]), backend="numpy")


def test_modular_powers_python_gives_and_those_the_program_cannot():
    b, e, m = np.array([3, 2, 7]), np.array([5, 10, 3]), np.array([7, 1000, 13])
    assert P.modular_power(b, e, m, backend="numpy").tolist() == per_example(
        "modular_power", b, e, m
    )
    with pytest.raises(ValueError, match=r"example\(s\) \[1\].*modular inverse"):
        P.modular_power(b, np.array([5, -1, 3]), m, backend="numpy")
    with pytest.raises(OverflowError, match=r"example\(s\) \[2\].*64-bit products"):
        P.modular_power(b, e, np.array([7, 1000, 2**40 + 15]), backend="numpy")
    with pytest.raises(ValueError, match=r"example\(s\) \[0\].*3rd argument cannot be 0"):
        P.modular_power(b, e, np.array([0, 1000, 13]), backend="numpy")


REFUSED = {
    "moving_average": (r"`out` holds ints and this stores a float into it.*\[0\.0\] \* n", (V,)),
    # (was silent: inf cut to the int64 minimum in a list of lists)
    "matrix_chain_order": (r"`m` holds ints and this stores a float into it", (V,)),
    "doubled_list": (r"`out \* 2` repeats a list", (X,)),
    "count_seen": (r"`seen` holds bools and this stores a number into it.*\[0\] \* n", (V,)),
    "smallest_after_sort": (
        r"`v\.sort\(\)` changes `v` in place.*v = np\.sort\(v, axis=-1\)",
        (V,),
    ),
    "same_vectors": (
        r"a condition must be one value per example.*np\.all\(a == b, axis=-1\)",
        (V, V),
    ),
    "lexicographic": (r"orders two lists", (V, V)),
    # Python's TypeError (a tuple is no array: the list stays a list)
    "tuple_times_list": (r"can't multiply sequence", (X, X)),
}


@pytest.mark.parametrize("mode", ["numpy", "jax"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_wrong_answer_is_refused_naming_the_line(name, mode):
    pattern, args = REFUSED[name]
    with pytest.raises(BatchTypeError, match=pattern) as error:
        getattr(P, name)(*args, **MODES[mode])
    with open(P.__file__) as f:
        line = next(i for i, text in enumerate(f, 1) if f"def {name}(" in text)
    assert f"public_idioms.py:" in str(error.value)
    assert int(str(error.value).split("public_idioms.py:")[1].split(":")[0]) > line


def test_jax_reductions_are_the_examples():
    """On JAX, `jnp.sum(v)` run on the batch would add up the whole batch
    (it was refused): it is the example's sum."""
    got = [np.asarray(leaf).tolist() for leaf in P.jnp_totals(V, backend="jax")]
    assert list(zip(*got)) == [(int(np.sum(v)), int(np.argmax(v))) for v in V]


@pytest.mark.parametrize("mode", MODES)
def test_a_reduction_along_an_examples_axis(mode):
    """`v.sum()`, `np.sum(v)` of the example; `np.sum(m, axis=1)` of an
    example's square matrix: its row sums (all three were refused: on the
    batch, axis 1 is the example's axis 0)."""
    got = [np.asarray(leaf).tolist() for leaf in P.totals(V, **MODES[mode])]
    assert list(zip(*got)) == per_example("totals", V)
    m = np.random.default_rng(5).integers(0, 9, (4, 3, 3))
    got = np.asarray(P.row_sums(m, **MODES[mode])).tolist()
    assert got == [row.tolist() for row in per_example("row_sums", m)] == m.sum(axis=2).tolist()


@pytest.mark.parametrize("mode", MODES)
def test_an_array_item_is_a_numpy_scalar(mode):
    w = V * 0.5
    got = np.asarray(P.item_kinds(V, w, **MODES[mode])).tolist()
    assert got == per_example("item_kinds", V, w) == [14] * len(V)


@pytest.mark.parametrize("mode", MODES)
def test_list_index_and_count(mode):
    got = [np.asarray(leaf).tolist() for leaf in P.position_in_sorted(V, X, **MODES[mode])]
    want = per_example("position_in_sorted", V, X)
    assert [tuple(leaf[k] for leaf in got) for k in range(len(X))] == want
    assert any(w[0] == -1 for w in want) and any(w[0] > 0 for w in want)
    # unguarded: the examples whose list lacks x raise Python's ValueError
    raising = [k for k in range(len(X)) if X[k] not in list(V[k])]
    assert raising
    with pytest.raises(ValueError, match=re.escape(f"example(s) {raising}") + ".*not in list.*public_idioms.py"):
        P.unguarded_index(V, X, **MODES[mode])
    found = np.array([V[k][k % 4] for k in range(len(X))])
    assert np.asarray(P.unguarded_index(V, found, **MODES[mode])).tolist() == per_example("unguarded_index", V, found)


@pytest.mark.parametrize("mode", MODES)
def test_bit_length(mode):
    n = np.array([0, 1, 5, 8, 1000, 2**40 + 3, -7, 2**61 + 1])
    got = np.asarray(P.next_power_of_two(n, **MODES[mode])).tolist()
    assert got == per_example("next_power_of_two", n) == [1, 1, 8, 8, 1024, 2**41, 8, 2**62]


def fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@pytest.mark.parametrize("mode", MODES)
def test_a_call_in_a_returned_conditional_is_a_tail_call(mode):
    """`return b if a == 0 else gcd(b % a, a)` loops as the `if` statement
    form does: neighbouring Fibonacci numbers take Euclid n steps, far past a
    stack of 8 frames (the call was a frame each, and overflowed it)."""
    a = np.array([fibonacci(60), 12, 0, 7, fibonacci(45), -9])
    b = np.array([fibonacci(61), 18, 5, 0, fibonacci(44), 6])
    got = np.asarray(P.euclid(a, b, max_stack_depth=8, **MODES[mode])).tolist()
    assert got == per_example("euclid", a, b) == [1, 6, 5, 7, 1, 3]
    a, b = np.array([48, 7, 0, 1071, 1000]), np.array([18, 0, 9, 462, 3])
    got = np.asarray(P.subtractive_gcd(a, b, max_stack_depth=8, **MODES[mode])).tolist()
    assert got == per_example("subtractive_gcd", a, b) == [6, 7, 9, 21, 1]


@pytest.mark.parametrize("mode", MODES)
def test_a_transpose_by_nested_comprehensions(mode):
    """Was refused as writing into `m`: the inner list's first element,
    m[0][i], counted as an alias of m when the list's slots were filled."""
    m = np.arange(3 * 2 * 4).reshape(3, 2, 4) - 7
    got = np.asarray(P.transpose(m, **MODES[mode])).tolist()
    assert got == [np.asarray(r).tolist() for r in per_example("transpose", m)]
    assert got[1] == m[1].T.tolist()


@pytest.mark.parametrize("mode", MODES)
def test_an_int_on_one_path_and_a_float_on_another(mode):
    """Were refused ("incompatible types") where the int came from an
    argument; a float64 throughout, as where one side is a literal."""
    odd, even = np.array([[3, 1, 2], [0, -1, -2]]), np.array([[4, 1, 2, 3], [-3, 0, 0, 7]])
    for v, want in ((odd, [2.0, -1.0]), (even, [2.5, 0.0])):
        got = np.asarray(P.median(v, **MODES[mode]))
        assert got.dtype == np.float64 and got.tolist() == per_example("median", v) == want
    n = np.array([3, 4, 0, -3])
    got = np.asarray(P.halved_when_odd(n, **MODES[mode]))
    assert got.tolist() == per_example("halved_when_odd", n) == [1.5, 4, 0, -1.5]


@pytest.mark.parametrize("mode", MODES)
def test_a_comprehension_over_a_vectors_items(mode):
    """`[f(x) for x in v]`, the form public code writes most, was refused."""
    a = np.array([[1.0, 2.0, 6.0], [-4.0, 0.5, 5.0]])
    got = [np.asarray(leaf).tolist() for leaf in P.mean_and_variance(a, **MODES[mode])]
    want = per_example("mean_and_variance", a)
    assert np.allclose(np.array(got).T, want, rtol=1e-12)
    m = np.arange(12).reshape(2, 2, 3) - 4
    got = np.asarray(P.row_totals(m, **MODES[mode])).tolist()
    assert got == [np.asarray(r).tolist() for r in per_example("row_totals", m)] == [[-9, 0], [9, 18]]


@pytest.mark.parametrize("mode", MODES)
def test_numpy_arithmetic_with_a_list_is_elementwise(mode):
    """`v + [1, 2, 3, 4]`, `v * [1.0, 0.5, 0.25, x]`: NumPy makes the list an
    array (JAX took no list, and a list of per-example numbers was refused
    as a placeholder error on every backend)."""
    got = np.asarray(P.list_operands(V, X, **MODES[mode])).tolist()
    assert got == per_example("list_operands", V, X)


@pytest.mark.parametrize("mode", MODES)
def test_reduction_methods_reduce_the_examples_array(mode):
    """`g.sum()`, `g.max(axis=0)`, `g.argmax()`, `hot.any()`, `np.sum(g)` of a
    per-example grid: NumPy's methods and functions on the example's array
    (they were refused; run on the batch they would reduce its axis too)."""
    g = np.random.default_rng(3).integers(-4, 9, (6, 3, 4))
    g[2] = 5  # every cell above the threshold: all() true, argmax 0
    t = np.array([0, 7, 4, -5, 8, 2])
    got = [np.asarray(leaf).tolist() for leaf in P.grid_summary(g, t, **MODES[mode])]
    want = per_example("grid_summary", g, t)
    means = (3, 10, 11)  # XLA divides by a constant as a product by its inverse: 1 ulp
    for k, leaf in enumerate(got):
        if k in means:
            assert np.allclose(leaf, [w[k] for w in want], rtol=1e-15, atol=0)
        else:
            assert leaf == [w[k] for w in want]
    assert {row[6] for row in want} == {True, False}  # all() differs by example
    got = [np.asarray(leaf).tolist() for leaf in P.grid_summary_by_functions(g, t, **MODES[mode])]
    want = per_example("grid_summary_by_functions", g, t)
    for k, leaf in enumerate(got):
        assert np.allclose(leaf, [w[k] for w in want], rtol=1e-15, atol=0)  # k == 3: a mean
    with pytest.raises(BatchTypeError, match=r"public_idioms.py:\d+: .*a Python list has no `sum\(\)`"):
        P.list_summed_by_method(V, **MODES[mode])


@pytest.mark.parametrize("mode", MODES)
def test_running_sums_and_flattening_are_the_examples(mode):
    """`np.cumsum(v)`, `m.cumsum(axis=1)`, `m.flatten()`, `np.ravel(m)`: the
    example's running sums and flat array (on the batch they ran over the
    flattened batch or its axis 0: refused)."""
    m = np.random.default_rng(4).integers(0, 9, (5, 2, 4))
    lo = np.array([0, 2, 3, 1, 0])
    got = [np.asarray(leaf).tolist() for leaf in P.prefix_sums(V, m, lo, **MODES[mode])]
    assert list(zip(*got)) == per_example("prefix_sums", V, m, lo)


@pytest.mark.parametrize("mode", MODES)
def test_reductions_keep_numpys_nan_and_integer_rules(mode):
    """`v.argmax()` of an example holding a NaN is the first NaN's index (TF's
    argmax chose another); `w.sum()` of int32s is int64, where TF's wrapped."""
    v = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 1.0, 0.5], [np.nan, 0.0, 9.0, 1.0]])
    w = np.full((3, 4), 2**30, np.int32) * np.array([[1], [-1], [1]], np.int32)
    got = [np.asarray(leaf) for leaf in P.nan_and_wide(v, w, **MODES[mode])]
    want = per_example("nan_and_wide", v, w)
    for k, leaf in enumerate(got):
        np.testing.assert_array_equal(leaf, np.array([row[k] for row in want]))


@pytest.mark.parametrize("mode", MODES)
def test_arranging_an_array_is_the_examples(mode):
    """`np.roll(grid, 1, axis=0)`, `m.T`, `np.transpose(m)`, `np.sort(m,
    axis=0)`, `np.flip(v)`, `np.roll(v, 1)`: the example's array moved as
    NumPy moves it (on the batch they moved the batch axis or rolled across
    examples: refused).  Sorting keeps NumPy's NaNs last."""
    rng = np.random.default_rng(5)
    grid = rng.integers(0, 2, (6, 5, 5))
    got = [np.asarray(leaf).tolist() for leaf in P.life_step(grid, **MODES[mode])]
    assert list(zip(*got)) == per_example("life_step", grid)
    m = rng.integers(0, 5, (6, 3, 3))
    m[1] = m[1] + m[1].T  # a symmetric one
    got = [np.asarray(leaf).tolist() for leaf in P.matrix_facts(m, **MODES[mode])]
    want = per_example("matrix_facts", m)
    assert list(zip(*got)) == want
    assert {row[0] for row in want} == {True, False}
    v = np.array([[3.0, np.nan, 1.0, -np.inf], [2.0, 5.0, 1.0, 0.5], [np.inf, np.nan, -1.0, np.nan]])
    got = [np.asarray(leaf) for leaf in P.circular(v, **MODES[mode])]
    want = per_example("circular", v)
    for k, leaf in enumerate(got):
        np.testing.assert_array_equal(leaf, np.array([row[k] for row in want]))


@pytest.mark.parametrize("mode", MODES)
def test_matrix_products_are_the_examples(mode):
    """`a @ b`, `np.dot`, `.dot`, `np.inner`, `np.matmul` and `np.linalg.norm`
    of each example's arrays, with vectors, matrices, constants and bools
    (as written, the batch axis was a matrix's rows: `v @ m` and `v @ w`
    gave wrong answers where the batch size equals n; others were refused
    with NumPy's shape error)."""
    rng = np.random.default_rng(8)
    for batch in (3, 5):  # 3: the batch size equals the vectors' length
        v, w = rng.normal(size=(batch, 3)), rng.integers(-3, 4, (batch, 3))
        m = rng.normal(size=(batch, 3, 3))
        got = [np.asarray(leaf) for leaf in P.products(v, w, m, **MODES[mode])]
        want = per_example("products", v, w, m)
        for k, leaf in enumerate(got):
            np.testing.assert_allclose(leaf, [row[k] for row in want], rtol=1e-12, err_msg=str(k))
    a = rng.normal(size=(6, 4, 4))
    a = a + np.transpose(a, (0, 2, 1))  # symmetric: real eigenvalues
    got = [np.asarray(leaf) for leaf in P.dominant_eigenvalue(a, **MODES[mode])]
    want = per_example("dominant_eigenvalue", a)
    np.testing.assert_allclose(got[0], [row[0] for row in want], rtol=1e-9)
    assert got[1].tolist() == [row[1] for row in want] and len(set(got[1].tolist())) > 2
    x, y = rng.normal(size=(4, 8, 2)), rng.normal(size=(4, 8))
    x[0] *= 0.2  # slower to converge
    got = [np.asarray(leaf) for leaf in P.gradient_descent(x, y, **MODES[mode])]
    want = per_example("gradient_descent", x, y)
    np.testing.assert_allclose(np.transpose(got[:2]), [row[:2] for row in want], rtol=1e-9)
    assert got[2].tolist() == [row[2] for row in want] and len(set(got[2].tolist())) > 1
    adj = rng.random((6, 5, 5)) < 0.25
    start, goal = rng.integers(0, 5, 6), rng.integers(0, 5, 6)
    got = np.asarray(P.steps_to_reach(adj, start, goal, **MODES[mode])).tolist()
    assert got == per_example("steps_to_reach", adj, start, goal) and len(set(got)) > 1
    adj, n = rng.integers(0, 2, (5, 3, 3)), np.array([1, 2, 3, 5, 4])
    got = np.asarray(P.walks(adj, n, **MODES[mode])).tolist()
    assert got == per_example("walks", adj, n)


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("list_matmul", (np.ones((2, 3)),), r"Python lists have no `@`"),
        ("number_matmul", (np.ones(2), np.ones((2, 3))), r"an operand is a number per example"),
        ("dot_of_stacks", (np.ones((2, 2, 3, 3)), np.ones((2, 3, 3))), r"np.dot of arrays of more than two axes"),
    ],
)
def test_matrix_products_python_refuses_are_refused(name, args, message):
    with pytest.raises(BatchTypeError, match=r"public_idioms\.py:\d+.*" + message):
        getattr(P, name)(*args, backend="numpy")


@pytest.mark.parametrize("mode", MODES)
def test_numpy_functions_run_on_every_backend(mode):
    """`np.exp`, `np.maximum`, `np.clip`, `np.where`, `np.isnan`, `np.sqrt`,
    `np.abs`, `np.floor_divide`, `np.mod`, `np.minimum` (a NaN wins),
    `np.isfinite` of per-example values: NumPy's values and dtypes on every
    backend (TensorFlow refused them at build time, JAX failed in its trace)."""
    rng = np.random.default_rng(11)
    v = rng.normal(size=(6, 4))
    w = rng.normal(size=(6, 3))
    w[1, 1], w[2, 0], w[3, 2] = np.nan, np.inf, -np.inf
    k = np.array([-7, 0, 5, 12, -1, 9])
    got = [np.asarray(leaf) for leaf in P.numpy_elementwise(v, w, k, **MODES[mode])]
    want = per_example("numpy_elementwise", v, w, k)
    for index, leaf in enumerate(got):
        column = np.array([row[index] for row in want])
        assert leaf.dtype == column.dtype, index
        np.testing.assert_allclose(leaf, column, rtol=1e-13, err_msg=str(index))
    a = np.array([0.5, 8.0, 27.0, 1000.0, 2.0])
    got = [np.asarray(leaf) for leaf in P.newton_cube_root(a, **MODES[mode])]
    want = per_example("newton_cube_root", a)
    np.testing.assert_allclose(got[0], [row[0] for row in want], rtol=1e-12)
    assert got[1].tolist() == [row[1] for row in want] and len(set(got[1].tolist())) > 2


@pytest.mark.parametrize("mode", MODES)
def test_joined_arrays_are_the_examples(mode):
    """`np.concatenate([a, b])`, with constants and lists among the items,
    `np.stack` (also along the last axis), `np.append` (flattening a
    matrix, an int beside a float), `np.concatenate(..., axis=1)`,
    `np.vstack`, `np.hstack` of vectors and of numbers: each example's own
    join (all were refused: they joined along the batch axis)."""
    rng = np.random.default_rng(12)
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    m, k, x = rng.integers(0, 9, (5, 2, 3)), rng.integers(0, 9, 5), rng.normal(size=5)
    got = [np.asarray(leaf) for leaf in P.joined(a, b, m, k, x, **MODES[mode])]
    want = per_example("joined", a, b, m, k, x)
    for index, leaf in enumerate(got):
        column = np.array([row[index] for row in want])
        # a sum's last bits follow the backend's order of additions
        np.testing.assert_allclose(leaf, column, rtol=1e-13, atol=1e-13, err_msg=str(index))
    a, b = np.sort(rng.integers(0, 6, (6, 4)), axis=1), np.sort(rng.integers(0, 6, (6, 3)), axis=1)
    got = [np.asarray(leaf).tolist() for leaf in P.merge_sorted(a, b, **MODES[mode])]
    assert list(zip(*got)) == per_example("merge_sorted", a, b)


@pytest.mark.parametrize("mode", MODES)
def test_windows_and_conversions_are_the_examples(mode):
    """`np.mean(v[lo : i + 1])`, `head.sum()`, `np.sum(v[k:])` of a slice
    whose length differs per example (NumPy's mean of an empty one is NaN),
    and `m.astype(float)`: each example's value on every backend (refused
    before; astype failed on TensorFlow's tensors)."""
    rng = np.random.default_rng(13)
    v, k = rng.normal(size=(6, 5)), np.array([1, 2, 3, 5, 4, 2])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns of the empty mean
        got = [np.asarray(leaf) for leaf in P.window_means(v, k, **MODES[mode])]
        want = per_example("window_means", v, k)
    for index, leaf in enumerate(got):
        column = np.array([row[index] for row in want])
        assert leaf.dtype == column.dtype, index
        np.testing.assert_allclose(leaf, column, rtol=1e-12, atol=1e-12, err_msg=str(index))
    m, x = rng.integers(0, 5, (5, 2, 2)), rng.normal(size=5)
    got = [np.asarray(leaf) for leaf in P.converted(m, x, **MODES[mode])]
    want = per_example("converted", m, x)
    for index, leaf in enumerate(got):
        column = np.array([row[index] for row in want])
        assert leaf.dtype == column.dtype, index
        np.testing.assert_allclose(leaf, column, rtol=1e-6, err_msg=str(index))
