"""Per-example lengths: vectors whose length differs between examples.

A recursion on `s[1:-1]`, an edit distance on `a[:-1]` and `b[:-1]` called
both ways round, `v[i:]` and `v[:k]` with a per-example `i` or `k`: each
example's vector has its own length, held as a `Ragged` (padded values and
a length, autobatch_runtime/ragged.py).  The batched result must be, example
by example, what the plain Python function gives on that example alone, on
every backend (tests/oracle.py); reads past an example's length raise
IndexError naming the line, and uses the batched program cannot give
Python's meaning are refused at build time, naming this file and the line.

Lines the tests look for are marked with a comment `# <-- name`.
"""

import os
import re
import tempfile
import zlib

import numpy as np
import pytest

import transpiler
from autobatch_runtime.ragged import Ragged
from examples.corpus import example
from tests.oracle import MODES, oracle_params
from transpiler import Context

GENERATED = tempfile.mkdtemp(prefix="autobatch-test-lengths-")
SOURCE = os.path.abspath(__file__)
BACKENDS = ("numpy", "tensorflow")  # build-time errors: XLA builds what TF builds


def _context(name):
    return Context(generated_dir=os.path.join(GENERATED, name))


def batch(function):
    """`@ctx.batch`, with a Context of its own (a new signature regenerates
    only this function's module)."""
    return _context(function.__name__).batch(function)


distances = _context("distances")  # the edit distance and its callers


# ---- the programs ------------------------------------------------------------


@batch
def is_palindrome(s):
    if len(s) < 2:
        return True
    if s[0] != s[-1]:
        return False
    return is_palindrome(s[1:-1])


@distances.batch
def edit_distance(a, b):
    if len(a) == 0:
        return len(b)
    if len(b) == 0:
        return len(a)
    if a[-1] == b[-1]:
        return edit_distance(a[:-1], b[:-1])
    return 1 + min(edit_distance(a[:-1], b), edit_distance(a, b[:-1]), edit_distance(a[:-1], b[:-1]))


@distances.batch
def both_ways(a, b):
    # the callee's `a` is a vector of len(a) here and of len(b) there
    return edit_distance(a, b) * 100 + edit_distance(b, a)


@batch
def suffix_sum(v, i):
    total = 0
    for x in v[i:]:
        total += x
    return total


@batch
def prefix(v, k):
    return v[:k]


@batch
def window(v, i, k):
    w = v[i:k]
    return len(w), sum(w), max(w, default=-100), min(w, default=100), 3 in w, any(w), all(w)


@batch
def tail_element(v, i, j):
    t = v[i:]
    return t[j] + t[-1]  # <-- tail_element


@batch
def sorted_tail(v, i):
    return sorted(v[i:])


@batch
def iterate_tail(v, i):
    t = v[i:]
    total = 0
    for k, x in enumerate(reversed(t)):
        total += (k + 1) * x
    for x, y in zip(t, t[1:]):
        total += x * y
    return total


@batch
def drop_until(v, x):
    # a recursion that returns the vector it shortens
    if len(v) == 0 or v[0] == x:
        return v
    return drop_until(v[1:], x)


@batch
def count_down(v, i):
    # a loop that shortens a vector: the variable holds every length
    t = v[i:]
    n = 0
    while len(t) > 0 and t[0] >= 0:
        n += t[0]
        t = t[1:]
    return n, len(t)


@batch
def choose_tail(v, i):
    # a per-example choice between a Ragged and the whole vector
    t = v[i:] if i > 2 else v
    return sum(t), t


@batch
def copy_out(v, i):
    # what the refusal of item assignment asks for: a copy into an array of fixed length
    t = v[i:]
    buf = np.zeros(len(v))
    for k in range(len(t)):
        buf[k] = t[k]
    return buf


# ---- build-time refusals ------------------------------------------------------


@batch
def write_into_slice(v, i):
    t = v[i:]
    t[0] = 5  # <-- write_into_slice
    return t


@batch
def arithmetic_on_slice(v, i):
    return v[i:] + 1  # <-- arithmetic_on_slice


@batch
def library_call_on_slice(v, i):
    return np.max(v[i:])  # <-- library_call_on_slice


@batch
def step_slice(v, i):
    return v[i::2]  # <-- step_slice


@batch
def max_without_default(v, i):
    return max(v[i:])  # <-- max_without_default


@batch
def truth_of_slice(v, i):
    t = v[i:]
    if t:  # <-- truth_of_slice
        return 1
    return 0


@batch
def unpack_slice(v, i):
    a, b = v[i:]  # <-- unpack_slice
    return a + b


@batch
def list_total(s):
    if len(s) == 0:
        return 0
    return s[0] + list_total(s[1:])  # <-- list_slice_recursion


@batch
def list_slice_recursion(v, i):
    return list_total([v[0], v[1], i])  # a list display: its length is part of its type


@batch
def list_of_its_length(v, i):
    t = v[i:]
    return [0 for _ in range(len(t))]  # <-- list_of_its_length


@batch
def helper_total(t):
    total = 0
    for k in range(len(t)):
        total += (k + 1) * t[k]
    return total


helper_total_context = helper_total.context


@helper_total_context.batch
def calls_helper(v, i):
    # the helper's parameter is a vector here, a Ragged there: converted at the call
    return helper_total(v[i:]) * 1000 + helper_total(v) + helper_total(v[1:][i:])


# ---- helpers ------------------------------------------------------------------


def python(value):
    """A result as plain Python: a Ragged as each example's list, arrays as lists."""
    if isinstance(value, Ragged):
        return value.tolist()
    if isinstance(value, (tuple, list)) and not isinstance(value, np.ndarray):
        return [python(v) for v in value]
    return np.asarray(value).tolist()


def batched_as_examples(result, batch):
    """A batched result as a list of per-example Python values."""
    if isinstance(result, Ragged):
        return result.tolist()
    if isinstance(result, tuple):
        parts = [batched_as_examples(r, batch) for r in result]
        return [tuple(p[k] for p in parts) for k in range(batch)]
    return np.asarray(result).tolist()


def plain_value(value):
    if isinstance(value, tuple):
        return tuple(plain_value(v) for v in value)
    if isinstance(value, (list, np.ndarray)):
        return np.asarray(value).tolist()
    return np.asarray(value).item()


def marked_line(name):
    with open(SOURCE) as f:
        hits = [k for k, line in enumerate(f, start=1) if line.rstrip().endswith(f"# <-- {name}")]
    assert len(hits) == 1, (name, hits)
    return hits[0]


def small_ints(rng, shape, high=3):
    return rng.integers(0, high, shape)


def palindromes(rng, n, size):
    """Half palindromes (of odd and even lengths' worth of mirrored halves), half random."""
    v = small_ints(rng, (n, size))
    mirrored = np.concatenate([v[:, : (size + 1) // 2], v[:, : size // 2][:, ::-1]], axis=1)
    return np.where((np.arange(n) % 2 == 0)[:, None], mirrored, v)


CASES = {
    "is_palindrome": lambda rng, n: (palindromes(rng, n, 7),),
    "is_palindrome:even": lambda rng, n: (palindromes(rng, n, 4),),
    "is_palindrome:one": lambda rng, n: (palindromes(rng, n, 1),),
    "edit_distance": lambda rng, n: (small_ints(rng, (n, 4)), small_ints(rng, (n, 3))),
    "edit_distance:swapped": lambda rng, n: (small_ints(rng, (n, 2)), small_ints(rng, (n, 4))),
    "both_ways": lambda rng, n: (small_ints(rng, (n, 3)), small_ints(rng, (n, 2))),
    "suffix_sum": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(-8, 9, n)),
    "prefix": lambda rng, n: (rng.integers(-9, 9, (n, 5)), rng.integers(-7, 8, n)),
    "window": lambda rng, n: (rng.integers(0, 5, (n, 6)), rng.integers(-7, 7, n), rng.integers(-7, 8, n)),
    "tail_element": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(0, 3, n), rng.integers(-3, 3, n)),
    "sorted_tail": lambda rng, n: (rng.integers(-9, 9, (n, 5)), rng.integers(-6, 6, n)),
    "iterate_tail": lambda rng, n: (rng.integers(-9, 9, (n, 5)), rng.integers(-6, 6, n)),
    "drop_until": lambda rng, n: (rng.integers(0, 6, (n, 5)), rng.integers(0, 6, n)),
    "choose_tail": lambda rng, n: (rng.integers(-9, 9, (n, 5)), rng.integers(-6, 7, n)),
    "copy_out": lambda rng, n: (rng.normal(size=(n, 5)), rng.integers(-6, 7, n)),
    "calls_helper": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(-8, 8, n)),
    "count_down": lambda rng, n: (rng.integers(-2, 9, (n, 6)), rng.integers(-7, 7, n)),
}

PARAMS = oracle_params(list(CASES))


def inputs_of(case, n):
    return CASES[case](np.random.default_rng(zlib.crc32(f"{case}/{n}".encode())), n)


def function_of(case):
    return globals()[case.split(":")[0]]


def expected(case, inputs, n):
    function = function_of(case)
    plain = function.context.plain(function.name)
    return [plain_value(plain(*example(inputs, k))) for k in range(n)]


# ---- batched == per example ------------------------------------------------------


@pytest.mark.parametrize("case, batch_size, mode", PARAMS)
def test_batched_equals_per_example(case, batch_size, mode):
    inputs = inputs_of(case, batch_size)
    before = [np.array(x, copy=True) for x in inputs]
    result = function_of(case)(*inputs, **MODES[mode])
    got = batched_as_examples(result, batch_size)
    want = expected(case, inputs, batch_size)
    assert got == want
    for x, y in zip(inputs, before):  # slices are copies: the caller's arrays are untouched
        assert np.array_equal(x, y)


def test_cases_take_different_paths_and_lengths():
    found = expected("is_palindrome", inputs_of("is_palindrome", 64), 64)
    assert True in found and False in found
    v, i = inputs_of("suffix_sum", 64)
    assert (i < -6).any() and (i > 6).any() and (i < 0).any() and ((i >= 0) & (i < 6)).any()
    lengths = {len(p) for p in expected("prefix", inputs_of("prefix", 64), 64)}
    assert len(lengths) == 6  # 0 to 5 elements
    ends = expected("count_down", inputs_of("count_down", 64), 64)
    assert len({rest for _, rest in ends}) > 3


def test_a_returned_ragged_gives_each_examples_list():
    v = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    result = prefix(v, np.array([2, -1, 0]), backend="numpy")
    assert isinstance(result, Ragged)
    assert result.tolist() == [[1, 2], [5, 6, 7], []]
    assert np.asarray(result.length).tolist() == [2, 3, 0]


@pytest.mark.parametrize("mode", list(MODES))
def test_a_read_past_the_length_raises_index_error(mode):
    # t = v[i:] has 6 - i elements; t[j] with j >= len(t) reads padding in
    # the batch's array: Python raises IndexError, so does the batched call
    v = np.arange(18).reshape(3, 6)
    i = np.array([0, 4, 5])
    j = np.array([5, 2, -2])  # example 1: t has 2 elements; example 2: 1 element
    plain = tail_element.context.plain("tail_element")
    plain(*example((v, i, j), 0))
    for k in (1, 2):
        with pytest.raises(IndexError):
            plain(*example((v, i, j), k))
    with pytest.raises(IndexError) as info:
        tail_element(v, i, j, **MODES[mode])
    message = str(info.value)
    assert "example(s) [1, 2]" in message
    assert f"tests/test_per_example_lengths.py:{marked_line('tail_element')}:" in message


def _programs(ctx, name):
    from transpiler import loader

    path = loader.module_path(ctx.generated_dir, "tests/test_per_example_lengths.py", "np")
    header = loader.read_header(loader.split_header(loader.read(path))[0])
    return [p for p in header["programs"].split("; ") if p.startswith(name + "(")]


def test_one_program_serves_every_length_where_no_slice_has_literal_bounds():
    # `v[i:]` keeps the vector's capacity, whatever its length: one program
    ctx = _context("generic")

    @ctx.batch
    def total_after(v, i):
        return sum(v[i:])

    for size in (5, 8, 3):
        v = np.arange(2 * size).reshape(2, size)
        got = np.asarray(total_after(v, np.array([1, -2]), backend="numpy")).tolist()
        assert got == [sum(v[0, 1:]), sum(v[1, -2:])]
    assert _programs(ctx, "total_after") == ["total_after(int64[n], int64[])"]


def test_a_recursion_on_a_slice_is_one_program_for_every_length():
    # `s[1:-1]` is n - 2 long, meets n at the parameter: a Ragged of capacity n
    ctx = _context("generic_recursion")

    @ctx.batch
    def palindrome(s):
        if len(s) < 2:
            return True
        if s[0] != s[-1]:
            return False
        return palindrome(s[1:-1])

    plain = is_palindrome.context.plain("is_palindrome")  # (a closure's recursion is not plain)
    rng = np.random.default_rng(3)
    for size in (6, 3, 9, 1, 2):
        s = palindromes(rng, 8, size)
        assert np.asarray(palindrome(s, backend="numpy")).tolist() == [plain(r) for r in s]
    assert _programs(ctx, "palindrome") == ["palindrome(int64[n])"]


# ---- refused at build time ------------------------------------------------------------

REFUSED = [
    ("write_into_slice", "item assignment to `t`, a vector whose length differs per example"),
    ("arithmetic_on_slice", "has no per-example meaning"),
    ("library_call_on_slice", "has no per-example meaning"),
    ("step_slice", "only step 1"),
    ("max_without_default", "pass default="),
    ("truth_of_slice", "test its length"),
    ("unpack_slice", "cannot unpack a vector whose length differs per example"),
    ("list_of_its_length", "a list whose length differs per example"),
    ("list_slice_recursion", "pass an index down instead of a slice"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, fragment", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_at_build_time_with_file_and_line(name, fragment, backend):
    v = np.arange(12).reshape(2, 6)
    with pytest.raises(transpiler.BatchTypeError) as info:
        globals()[name](v, np.array([1, 2]), backend=backend)
    message = str(info.value)
    assert re.search(rf"tests[/\\]test_per_example_lengths\.py:{marked_line(name)}:", message), message
    assert fragment in message
