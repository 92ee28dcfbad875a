"""Per-example subscripts: batched == per-example Python.

Every program of tests/subscript_programs.py on NumPy, TF graph and TF+XLA
at batch sizes 1, 7 and 64, with inputs whose examples take different paths
(different indices, negative ones too, trip counts, recursion depths and
branches); then item assignment through callees and aliases; then the errors: an
active example indexing out of range raises IndexError naming the line on
every backend (idle lanes are clipped and never raise), and subscripts with
no per-example meaning are refused at build time with a BatchTypeError
naming the user's file and line.
"""

import os
import re
import zlib

import numpy as np
import pytest

import transpiler
from examples.corpus import example
from tests import subscript_programs as S
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

# Its modules are generated into a temporary folder and run; the tests that
# read their text look for code, not layout: black is skipped (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

BACKENDS = ("numpy", "tensorflow")  # build-time errors: XLA builds what TF builds

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "subscript_programs.py")


def marked_line(name):
    """The 1-based number of the line of subscript_programs.py marked `# <-- name`."""
    with open(SOURCE) as f:
        hits = [k for k, line in enumerate(f, start=1) if line.rstrip().endswith(f"# <-- {name}")]
    assert len(hits) == 1, (name, hits)
    return hits[0]


def sorted_ints(rng, n, size, high=40):
    return np.sort(rng.integers(0, high, (n, size)), axis=1)


CASES = {
    # ---- reading: straight-line code, negative literal and per-example indices
    "read_int": lambda rng, n: (rng.integers(-20, 20, (n, 8)), rng.integers(-8, 8, n)),
    "read_float": lambda rng, n: (rng.normal(size=(n, 5)), rng.integers(0, 5, n)),
    "read_matrix": lambda rng, n: (
        rng.integers(-50, 50, (n, 4, 5)),
        rng.integers(-4, 4, n),
        rng.integers(-5, 5, n),
    ),
    "read_slices": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(-9, 9, (n, 4, 5))),
    # ---- len, shape, ndim, constant tables, division by elements and shapes
    "shapes": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.normal(size=(n, 3, 4))),
    "tables": lambda rng, n: (rng.integers(-8, 8, n), rng.integers(-5, 5, n)),
    "local_lists": lambda rng, n: (rng.normal(size=n), rng.integers(-3, 3, n)),
    "index_tuple_by_bool": lambda rng, n: (rng.normal(size=n), rng.integers(0, 2, n).astype(bool)),
    "divide_by_element": lambda rng, n: (rng.integers(1, 9, (n, 5)), rng.integers(-3, 5, n)),
    "divide_by_shape": lambda rng, n: (
        rng.integers(-9, 9, (n, 6)),
        rng.integers(-9, 9, (n, 4, 5)),
        rng.integers(-20, 20, n),
    ),
    # ---- conditions, loop bounds, loops
    "branch_on_element": lambda rng, n: (rng.integers(-3, 4, (n, 5)), rng.integers(-5, 5, n)),
    "loop_over_elements": lambda rng, n: (rng.integers(0, 40, (n, 6)), rng.integers(0, 6, n)),
    "matrix_walk": lambda rng, n: (
        rng.integers(0, 30, (n, 4, 5)),
        rng.integers(0, 4, n),
        rng.integers(0, 5, n),
    ),
    "float_search": lambda rng, n: (np.sort(rng.normal(size=(n, 9)), axis=1), rng.normal(scale=1.5, size=n)),
    "follow_links": lambda rng, n: (rng.integers(0, 8, n),),
    "table_bounds": lambda rng, n: (rng.integers(-8, 8, n),),
    # ---- while True: left by return, left by break
    "find_first_return": lambda rng, n: (rng.integers(0, 6, (n, 7)), rng.integers(0, 8, n)),
    "count_up_break": lambda rng, n: (rng.integers(1, 6, (n, 5)), rng.integers(0, 40, n)),
    # ---- short-circuits and guards around reads Python never evaluates
    "scan_up": lambda rng, n: (sorted_ints(rng, n, 6, 10), rng.integers(0, 12, n)),
    "scan_down": lambda rng, n: (sorted_ints(rng, n, 8, 10), rng.integers(-20, 8, n), rng.integers(0, 10, n)),
    "guards": lambda rng, n: (rng.integers(0, 4, (n, 6)), rng.integers(-12, 12, n)),
    # ---- item assignment
    "assign_items": lambda rng, n: (
        rng.integers(-9, 9, (n, 6)),
        rng.integers(-6, 6, n),
        rng.integers(-9, 9, n),
    ),
    "assign_floats": lambda rng, n: (rng.normal(size=(n, 5)), rng.integers(0, 5, n), rng.integers(-5, 5, n)),
    # the same program at other dtypes: a float32 vector, int32 indices
    "assign_floats:float32": lambda rng, n: (
        rng.normal(size=(n, 5)).astype(np.float32),
        rng.integers(0, 5, n).astype(np.int32),
        rng.integers(-5, 5, n).astype(np.int32),
    ),
    "assign_matrix": lambda rng, n: (
        rng.integers(-9, 9, (n, 4, 5)),
        rng.integers(0, 4, n),
        rng.integers(0, 5, n),
        rng.integers(-9, 9, n),
    ),
    "assign_slices": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(-9, 9, n)),
    "assign_in_branches": lambda rng, n: (
        rng.integers(-5, 5, (n, 6)),
        rng.integers(0, 6, n),
        rng.integers(-3, 4, n),
    ),
    "histogram": lambda rng, n: (rng.integers(-1, 6, (n, 10)), rng.integers(0, 12, n)),
    "insertion_sort": lambda rng, n: (rng.integers(0, 100, (n, 8)),),
    "caller_keeps_its_array": lambda rng, n: (rng.integers(1, 9, (n, 5)), rng.integers(-5, 5, n)),
    "chained_item_assignment": lambda rng, n: (rng.integers(-9, 9, (n, 3)), rng.integers(-2, 3, n)),
    "augment_by_call": lambda rng, n: (
        rng.integers(-9, 9, (n, 6)),
        rng.integers(-20, 20, n),
        rng.integers(1, 9, n),
    ),
    # ---- recursion
    "suffix_sum": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(0, 8, n)),
    "recursive_bisect": lambda rng, n: (
        sorted_ints(rng, n, 8),
        rng.integers(-2, 43, n),
        rng.integers(0, 4, n),
        rng.integers(4, 9, n),
    ),
    "fill_down": lambda rng, n: (rng.integers(-9, 9, (n, 5)), rng.integers(-1, 5, n)),
    "float_recursion": lambda rng, n: (rng.normal(size=(n, 4)), rng.integers(0, 7, n)),
    "matrix_path": lambda rng, n: (
        rng.integers(0, 9, (n, 4, 5)),
        rng.integers(0, 5, n),
        rng.integers(0, 5, n),
    ),
    "table_walk": lambda rng, n: (rng.integers(0, 8, n),),
    "slice_control": lambda rng, n: (rng.integers(-9, 9, (n, 6)), rng.integers(-1, 5, n)),
    "descend": lambda rng, n: (rng.integers(-3, 9, (n, 6)), rng.integers(0, 7, n)),
    "chase": lambda rng, n: (
        np.array([rng.permutation(6) for _ in range(n)]),
        rng.integers(0, 6, n),
        rng.integers(0, 12, n),
    ),
    # ---- constants meeting per-example values
    "axes_from_the_end": lambda rng, n: (rng.normal(size=(n, 4)), rng.normal(size=(n, 2, 3)), rng.normal(size=n)),
    "constant_arrays": lambda rng, n: (rng.normal(size=(n, 3)), rng.integers(-6, 6, n)),
    "constant_scalars": lambda rng, n: (rng.normal(size=(n, 3)), rng.integers(-6, 6, n)),
    "subscript_of_broadcast": lambda rng, n: (rng.normal(size=(n, 3)), rng.integers(-6, 6, n)),
    "open_slices": lambda rng, n: (rng.normal(size=(n, 4)), rng.integers(-6, 6, n)),
    "array_through_a_tail_call": lambda rng, n: (rng.integers(-6, 6, n), rng.normal(size=(n, 3))),
    "constant_argument": lambda rng, n: (rng.integers(-6, 6, n), rng.normal(size=(n, 3))),
}

# Programs whose callee assigns items of its parameter (caller_keeps_its_array,
# fill_down, float_recursion, descend, matrix_path) change the caller's array,
# as plain Python does: compared with the plain functions as they are.


def plain(name):
    """The per-example function the batched `name` must agree with."""
    return getattr(S, name).context.plain(name)


def expected(name, inputs, batch):
    function = plain(name)
    return [function(*example(inputs, i)) for i in range(batch)]


def leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    return [np.asarray(value)]


# Programs whose primitives are TensorFlow functions: on JAX, a clear
# build-time error (test_tensorflow_primitives_on_jax_name_the_line).
TENSORFLOW_PRIMITIVES = {"axes_from_the_end"}

# Every batch size where a size costs no compile (tests/oracle.py).
PARAMS = oracle_params(
    CASES,
    runs_on=lambda case, mode: not (mode == "jax" and case.split(":")[0] in TENSORFLOW_PRIMITIVES),
)


def inputs_of(case, batch):
    """The inputs of `case` at `batch` (the same on every run)."""
    return CASES[case](np.random.default_rng(zlib.crc32(f"{case}/{batch}".encode())), batch)


def test_tensorflow_primitives_on_jax_name_the_line():
    from transpiler import BatchTypeError

    with pytest.raises(BatchTypeError, match=r"subscript_programs\.py:\d+.*a tensorflow value, not a JAX array"):
        S.axes_from_the_end(*inputs_of("axes_from_the_end", 1), backend="jax")


@pytest.mark.parametrize("case, batch, mode", PARAMS)
def test_batched_equals_per_example(case, batch, mode):
    name = case.split(":")[0]  # "program" or "program:variant"
    inputs = inputs_of(case, batch)
    before = [np.array(x, copy=True) for x in inputs]
    result = getattr(S, name)(*inputs, **MODES[mode])
    want = expected(name, inputs, batch)
    assert agrees(result, want)
    # ints stay ints, floats floats (a leaf that is an int on some examples
    # and a float on others, as Python allows, is a float)
    kinds = [leaf.dtype.kind for leaf in leaves(result)]
    per_example = zip(*(leaves(w) for w in want))
    assert kinds == [np.asarray(leaf).dtype.kind for leaf in per_example]
    for x, y in zip(inputs, before):  # item assignment never writes to the caller's arrays
        assert np.array_equal(x, y)


def test_cases_take_different_paths():
    # At batch 64 the inputs reach every side: both kinds of exit, reads
    # that a guard keeps Python from evaluating, wrapping negative indices,
    # different recursion depths and trip counts.
    def outputs(case):
        return [plain(case)(*example(inputs_of(case, 64), k)) for k in range(64)]

    found = np.array(outputs("find_first_return"))
    assert (found == -1).any() and (found >= 0).any()
    v, j, key = inputs_of("scan_down", 64)
    assert (j < -v.shape[1]).any() and (j >= 0).any()  # v[j] would raise if it were read
    v, key = inputs_of("scan_up", 64)
    assert (v.max(axis=1) <= key).any() and (v.max(axis=1) > key).any()  # k reaches len(v)
    v, i = inputs_of("guards", 64)
    assert (i >= v.shape[1]).any() and (i < -v.shape[1]).any() and (abs(i) < v.shape[1]).any()
    assert (inputs_of("read_int", 64)[1] < 0).any()
    assert len(set(np.asarray(outputs("suffix_sum")).tolist())) > 10
    assert len({steps for _, steps in outputs("follow_links")}) > 2
    assert len({k for k, _, _ in outputs("count_up_break")}) > 5


# ---- guards and short-circuits ----------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
def test_reads_python_never_evaluates_do_not_raise(mode):
    # (the shapes of CASES: these calls reuse the programs generated above)
    kw = MODES[mode]
    v = np.array([[1, 2, 3, 4, 5, 6], [5, 6, 7, 8, 9, 9], [0, 0, 0, 0, 0, 0]])
    # scan_up: k reaches len(v) = 6 for the examples whose elements are all <= key
    assert np.asarray(S.scan_up(v, np.array([9, 9, 0]), **kw)).tolist() == [6, 6, 6]
    # scan_down: `j >= 0 and v[j] > key` never reads v[-20] (out of range)
    # nor v[-1] (which would wrap)
    w = np.array([np.arange(1, 9), np.arange(5, 13), np.zeros(8, np.int64)])
    got = S.scan_down(w, np.array([-20, 3, -5]), np.array([0, 0, 0]), **kw)
    assert np.asarray(got).tolist() == [-20, -1, -5]
    a, b, c, d, e, f, g, h = S.guards(v, np.array([11, -11, 2]), **kw)
    assert np.asarray(a).tolist() == [0, 0, 0]
    assert np.asarray(b).tolist() == [False, False, False]
    assert np.asarray(c).tolist() == [True, True, True]
    assert np.asarray(d).tolist() == [-1, -1, 0]
    assert np.asarray(e).tolist() == [6, 6, 0]  # v[i % len(v)] or v[-1]: v[5], v[1], v[2] -> v[-1]
    assert np.asarray(f).tolist() == [1, 5, 0]  # v[i % len(v)] and v[0]
    assert np.asarray(g).tolist() == [1, 0, 0]  # `... and v[i] > 1 or i == 11`
    assert np.asarray(h).tolist() == [False, False, True]  # `0 <= i < len(v) <= v[i] + 6`


@pytest.mark.parametrize("mode", list(MODES))
def test_a_batch_of_one_broadcasts_against_per_example_indices(mode):
    # one vector for seven indices (and seven values): each example writes
    # its own copy
    v, i, x = np.array([[1, 2, 3, 4, 5, 6]]), np.array([0, 1, 2, 3, -1, -2, 5]), np.arange(7)
    full = (np.repeat(v, 7, axis=0), i, x)
    assert agrees(S.assign_items(v, i, x, **MODES[mode]), expected("assign_items", full, 7))
    assert agrees(S.tables(i, np.array([2]), **MODES[mode]), expected("tables", (i, np.full(7, 2)), 7))


@pytest.mark.parametrize("mode", ["numpy", "tf_graph"])
def test_an_empty_batch_gives_empty_results(mode):
    v, m = np.zeros((0, 4, 5), np.int64), np.zeros((0,), np.int64)
    a, b, row, col, *_ = S.read_matrix(v, m, m, **MODES[mode])
    assert np.shape(a) == (0,) and np.shape(row) == (0, 5) and np.shape(col) == (0, 4)
    assert np.shape(S.assign_items(np.zeros((0, 6), np.int64), m, m, **MODES[mode])) == (0, 6)


# ---- item assignment through callees and aliases ----------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliases_that_see_a_write_are_refused(backend):
    # `w = v; s = v[1:3]; v[i] = 100; ...; return w, ...`: in Python w and s
    # would see the write; the compiler cannot give them that, so it refuses
    # at build time, naming both lines
    v = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    with pytest.raises(transpiler.UnsupportedSyntaxError) as error:
        S.aliasing(v, np.array([2, -1]), backend=backend)
    for mark in ("alias", "write"):
        assert f"subscript_programs.py:{marked_line(mark)}" in str(error.value)


@pytest.mark.parametrize("mode", list(MODES))
def test_callee_assignment_changes_the_callers_array(mode):
    # as in Python: the callee's `v[i] = 0` changes the caller's v (not the
    # batch the caller passed in, which is never written)
    v = np.array([[3, 4, 5, 6, 7], [6, 7, 8, 9, 1], [9, 1, 2, 3, 4]])
    i = np.array([1, -1, 0])
    changed, t, at_i = (np.asarray(x) for x in S.caller_keeps_its_array(v, i, **MODES[mode]))
    assert changed.tolist() == [[3, 0, 5, 6, 7], [6, 7, 8, 9, 0], [0, 1, 2, 3, 4]]
    assert t.tolist() == [3, 6, 0]  # the callee saw its own write: v[i] = 0
    assert at_i.tolist() == [0, 0, 0]
    assert v.tolist() == [[3, 4, 5, 6, 7], [6, 7, 8, 9, 1], [9, 1, 2, 3, 4]]


@pytest.mark.parametrize("mode", ["numpy", "tf_graph"])
def test_index_computed_by_a_batched_call_is_evaluated_once(mode):
    # `v[wrap(i, len(v))] += x`, `v[wrap(i + 1, len(v))] = wrap(x, 5)` and
    # `TABLE[wrap(i, 8)]`: Python calls wrap four times per example (the
    # index of an augmented assignment once, not once to read and once to write).
    v = np.zeros((5, 6), np.int64)
    i = np.array([1, -2, 3, 9, 30])
    x = np.array([1, 2, 3, 4, 7])
    result, profile = S.augment_by_call(v, i, x, profile=True, **MODES[mode])
    assert agrees(result, expected("augment_by_call", (v, i, x), 5))
    calls = [a for where, a in zip(profile.block_lines, profile.block_active) if "in wrap at" in where]
    assert sum(calls) == 4 * 5, profile.report()


# ---- out of range for an active example -------------------------------------------

# (program, arguments, the examples that index out of range, the marked line)
OUT_OF_RANGE = [
    ("read_out_of_range", (np.arange(15).reshape(3, 5), np.array([0, 5, -6])), [1, 2], "read_out_of_range"),
    (
        "read_out_of_range_later",
        (np.arange(15).reshape(3, 5), np.array([-5, 4, 7])),
        [2],
        "read_out_of_range_later",
    ),
    # i = 20 never reaches the assignment (an idle lane, clipped): only 5 and -4 raise
    (
        "write_out_of_range",
        (np.zeros((4, 3), np.int64), np.array([0, 20, 5, -4])),
        [2, 3],
        "write_out_of_range",
    ),
    ("table_out_of_range", (np.array([0, 8, -9, 3, -8]),), [1, 2], "table_out_of_range"),
    (
        "local_list_out_of_range",
        (np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 2, -3, -2])),
        [1, 2],
        "local_list_out_of_range",
    ),
    # example 2 runs off the end on its fifth trip
    ("loop_out_of_range", (np.ones((3, 4), np.int64), np.array([2, 4, 6])), [2], "loop_out_of_range"),
    ("callee_out_of_range", (np.ones((3, 4), np.int64), np.array([2, 4, -1])), [1], "clear_at"),
    ("loop_calls_out_of_range", (np.ones((3, 4), np.int64), np.array([2, 4, 6])), [2], "clear_at"),
    (
        "recursive_out_of_range",
        (np.ones((4, 3), np.int64), np.array([2, 1, 3, 5])),
        [2, 3],
        "recursive_out_of_range",
    ),
]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name, args, examples, mark", OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
def test_out_of_range_for_an_active_example_raises_index_error(name, args, examples, mark, mode):
    # Python raises IndexError for these examples: so does the batched call,
    # naming the examples and the line, on every backend
    plain_fn = plain(name)
    for k in range(len(args[-1])):
        if k in examples:
            with pytest.raises(IndexError):
                plain_fn(*example(args, k))
        else:
            plain_fn(*example(args, k))
    with pytest.raises(IndexError) as info:
        getattr(S, name)(*args, **MODES[mode])
    message = str(info.value)
    assert f"example(s) {examples}" in message
    assert f"tests/subscript_programs.py:{marked_line(mark)}:" in message
    assert f"# <-- {mark}" in message  # the line's text


# many_faults: per kind, (an in-range k, an out-of-range k); the marked line
FAULT_KINDS = [
    (0, 2, 7, "weak_guard"),  # `k < 10 and v[k] > 0`: Python reads v[7]
    (1, 0, 0, "while_condition"),  # no zero in v: k runs off the end
    (2, -4, 4, "column"),  # m[:, 4] of a [3, 4] matrix
    (3, -4, -5, "augmented"),  # v[-5] += 1
    (4, 3, 9, "second_axis"),  # m[1][9]
]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind, good, bad, mark", FAULT_KINDS, ids=[c[3] for c in FAULT_KINDS])
def test_out_of_range_inside_conditions_loops_and_assignments(kind, good, bad, mark, mode):
    # example 0: this kind, in range; 1: another kind, in range; 2: this
    # kind, out of range (and, for kind 1, a vector without a zero)
    other, other_good = (kind + 1) % 5, FAULT_KINDS[(kind + 1) % 5][1]
    v = np.array([[1, 2, 0, 3], [1, 2, 0, 3], [1, 2, 3, 4]])
    m = np.arange(36).reshape(3, 3, 4)
    args = (v, m, np.array([kind, other, kind]), np.array([good, other_good, bad]))
    function = plain("many_faults")
    function(*example(args, 0)), function(*example(args, 1))
    with pytest.raises(IndexError):
        function(*example(args, 2))
    with pytest.raises(IndexError) as info:
        S.many_faults(*args, **MODES[mode])
    message = str(info.value)
    assert "example(s) [2]" in message
    assert f"tests/subscript_programs.py:{marked_line(mark)}:" in message


@pytest.mark.parametrize("mode", list(MODES))
def test_out_of_range_indices_in_idle_lanes_do_not_raise(mode):
    # the same programs, with every out-of-range index in an example that
    # never reaches the subscript (its lane computes a clipped junk index)
    v = np.zeros((3, 3), np.int64)
    got = np.asarray(S.write_out_of_range(v, np.array([0, 20, -3]), **MODES[mode]))
    assert got.tolist() == [[7, 0, 0], [0, 0, 0], [7, 0, 0]]
    total = np.asarray(S.loop_out_of_range(np.arange(12).reshape(3, 4), np.array([0, 4, 2]), **MODES[mode]))
    assert total.tolist() == [0, 4 + 5 + 6 + 7, 8 + 9]


# ---- refused at build time -----------------------------------------------------------

# (program, arguments, a fragment of the message)
REFUSED = [
    ("static_out_of_range", (np.zeros((2, 6), np.int64),), "index 6 is out of range"),
    ("static_negative_out_of_range", (np.zeros((2, 6), np.int64),), "index -7 is out of range"),
    ("static_assign_out_of_range", (np.zeros((2, 6), np.int64),), "index 6 is out of range"),
    ("table_static_out_of_range", (np.array([1, 2]),), "8"),
    ("index_into_tuple", (np.array([1, 2]), np.array([0, 1])), "tuple"),
    ("float_index", (np.zeros((2, 6)), np.array([0.0, 1.0])), "float64"),
    ("float_index_into_tuple", (np.zeros(2), np.array([0.0, 1.0])), "index with an int (`int(f)`)"),
    ("assign_list_item", (np.zeros(2), np.ones(2), np.array([0, 1]), np.ones(2)), "`items` is a list"),
    ("len_of_scalar", (np.array([1, 2]),), "len()"),
    ("matrix_transpose", (np.zeros((2, 3, 4)),), "`.mT`"),
    # (TensorFlow raised its own NotImplementedError here)
    ("fancy_fill", (np.zeros((2, 3, 4)), np.array([0, 1]), np.array([2, 2])), "fancy indexing"),
    # a matrix (a vector's `v[i:]` has a per-example length: tests/test_per_example_lengths.py)
    ("slice_by_example", (np.zeros((2, 6, 3)), np.array([1, 2])), "per-example bounds"),
    # library calls that would drop or move the batch axis
    ("stack_first", (np.zeros(2), np.ones(2)), "does not keep the batch axis first"),
    # ... or that keep the shape but mix examples
    ("cumsum_over_batch", (np.zeros((2, 3, 4)),), "mixes examples"),
    ("roll_over_batch", (np.zeros((2, 5)),), "mixes examples"),
]


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_reductions_reduce_the_examples_array(backend):
    """`v.sum()`, `tf.reduce_sum(v)`, `tf.reduce_max(m, axis=0)`: the
    example's (on the batch they would reach across examples: refused
    before python_calls.array_reduction gave them the example's meaning)."""
    rng = np.random.default_rng(2)
    v, m = rng.normal(size=(3, 6)), rng.normal(size=(3, 4, 5))
    assert np.allclose(S.sum_method(v, backend=backend), v.sum(axis=1) + 1, rtol=1e-14)
    assert np.allclose(S.reduce_whole(v, backend=backend), v.sum(axis=1), rtol=1e-14)
    assert np.asarray(S.reduce_axis_zero(m, backend=backend)).tolist() == m.max(axis=1).tolist()


def test_a_numpy_call_that_mixes_examples_is_refused():
    # np.partition along axis 0 partitions the batch's axis: examples would
    # trade items (np.roll, np.sort and np.flip are the example's own:
    # test_public_idioms.py)
    with pytest.raises(transpiler.BatchTypeError) as info:
        S.partition_along_axis_0(np.zeros((2, 6)), backend="numpy")
    message = str(info.value)
    assert re.search(rf"tests[/\\]subscript_programs\.py:{marked_line('partition_along_axis_0')}:", message), message
    assert "`np.partition(v, 1, axis=0)` mixes examples" in message


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, args, fragment", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_at_build_time_with_file_and_line(name, args, fragment, backend):
    with pytest.raises(transpiler.BatchTypeError) as info:
        getattr(S, name)(*args, backend=backend)
    message = str(info.value)
    assert re.search(rf"tests[/\\]subscript_programs\.py:{marked_line(name)}:", message), message
    assert fragment in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refused_list_item_assignment_names_lists(backend):
    args = (np.zeros(2), np.ones(2), np.array([0, 1]), np.ones(2))
    with pytest.raises(transpiler.BatchTypeError) as info:
        S.assign_list_item(*args, backend=backend)
    message = str(info.value)
    assert "`items` is a list" in message and "build a new list" in message
    assert "tuple" not in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_falling_off_the_end_returns_none_in_those_examples(backend):
    # `falls_off` returns a number on one path and falls off its end (None)
    # on the other: per example, as in Python (an Optional on the batch)
    v, i = np.array([[1, 2], [-1, 3]]), np.array([0, 0])
    plain = S.falls_off.context.plain("falls_off")
    result = S.falls_off(v, i, backend=backend)
    assert result.tolist() == [plain(v[k].copy(), int(i[k])) for k in range(2)] == [1, None]


@pytest.mark.parametrize("backend", BACKENDS)
def test_falling_off_after_while_true_returns_none_in_those_examples(backend):
    v = np.array([[1, 2], [-1, 3], [-1, -2]])
    plain = S.falls_off_after_loop.context.plain("falls_off_after_loop")
    result = S.falls_off_after_loop(v, backend=backend)
    assert result.tolist() == [plain(v[k].copy()) for k in range(3)] == [0, 1, None]


# (an undecorated function of subscript_programs, a fragment of the message)
FENCED = [
    ("assign_to_global", "item assignment to 'TABLE'"),
]


@pytest.mark.parametrize("name, fragment", FENCED, ids=[c[0] for c in FENCED])
def test_item_assignment_the_fence_refuses(name, fragment):
    # refused when decorated: at import, for a module-level function
    with pytest.raises(transpiler.UnsupportedSyntaxError) as info:
        S.batch(getattr(S, name))
    assert info.value.lineno == marked_line(name)
    assert info.value.filename.endswith("subscript_programs.py")
    assert fragment in str(info.value)
