"""Real Python, as written (issue 29): the held-in corpus of tests/corpus/.

Every function of tests/corpus/cases.py on NumPy and TF graph at batch
sizes 1, 7 and 64, and on TF+XLA: the batched result must equal the plain
function applied to each example (`ctx.plain`, `examples.corpus.example`),
leaf by leaf (`transpiler.demo.agrees`).  A function that returns `None` on
some paths ("not found") must give `None` exactly there.

XLA compiles once per batch size (about a second each for these programs),
so by default each function runs under XLA at one of the three batch sizes,
in turn (the first function at 1, the next at 7, then 64, ...): every size
is covered, and the file takes a few minutes on two cores.
AUTOBATCH_CORPUS=full runs XLA at all three sizes and adds the functions of
`cases.EXTRA` (constructs the others cover already).

REFUSED names the functions the compiler refuses when it builds them; each
must be refused with an error that names its line in the corpus (README:
what is refused and why), never run to a wrong answer.
"""

import os
import re
import zlib

import numpy as np
import pytest

from examples.corpus import example
from autobatch_runtime.optional import Optional
from tests.corpus.cases import ALL_CASES, CASES
from transpiler import BatchTypeError, UnsupportedSyntaxError
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

FULL = os.environ.get("AUTOBATCH_CORPUS") == "full"

# The corpus modules are generated into a temporary folder and only run,
# never read: black's layout is not generated (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

# Functions the compiler refuses when it builds them, each naming its line in
# the corpus (never a wrong answer): {name: (error class, why)}.
REFUSED = {
    "get_failure_array": (UnsupportedSyntaxError, "`.append()` grows a list: no fixed per-example size"),
    "kmp_search": (UnsupportedSyntaxError, "calls get_failure_array, which appends"),
    "levenshtein_two_rows": (BatchTypeError, "recursion with vectors of another length"),
}


def expected(name, inputs, batch):
    """The plain function applied to each example (lists become arrays)."""
    plain = ALL_CASES[name].function.context.plain(name)
    out = []
    for i in range(batch):
        value = plain(*example(inputs, i))
        if isinstance(value, list):
            value = np.asarray(value)
        out.append(np.asarray(value) if hasattr(value, "numpy") else value)
    return out


def _is_optional(result):
    """A batched result that may be None per example: Optional(present, value)."""
    return isinstance(result, tuple) and getattr(result, "_fields", None) == ("present", "value")


def _same(got, want):
    if got is None or want is None:
        return got is None and want is None
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        return bool(np.allclose(got, want, rtol=1e-6, atol=1e-9, equal_nan=True))
    return bool(np.array_equal(got, want))


def matches(result, want):
    """True when the batched result equals the per-example results.

    A function that may return None gives an `Optional` (README, "None as a
    per-example value"): each example must be None exactly where Python says
    None, and equal elsewhere.  Other results go to `agrees`, leaf by leaf.
    """
    if _is_optional(result):
        got = result.tolist()
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    if any(w is None for w in want):
        return False
    return agrees(result, want)


def run_case(name, batch, mode):
    """(batched result, expected list) for one case."""
    case = ALL_CASES[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}/{batch}".encode()))
    inputs = case.inputs(rng, batch)
    want = expected(name, inputs, batch)
    result = case.function(*inputs, max_stack_depth=case.max_stack_depth, **MODES[mode])
    return result, want


def _params():
    names = [n for n in (ALL_CASES if FULL else CASES) if n not in REFUSED]
    return oracle_params(names, full=FULL)


PARAMS = _params()


@pytest.mark.parametrize("name, batch, mode", PARAMS)
def test_corpus_batched_equals_per_example(name, batch, mode):
    result, want = run_case(name, batch, mode)
    assert matches(result, want), f"{name} on {mode}, batch {batch}: wrong answer"


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_corpus_refusals_name_the_line(name, backend):
    error_class, _ = REFUSED[name]
    case = ALL_CASES[name]
    with pytest.raises(error_class) as info:
        case.function(*case.inputs(np.random.default_rng(0), 3), backend=backend)
    error = info.value
    where = f"{error.filename}:{error.lineno}" if isinstance(error, SyntaxError) else str(error)
    assert re.search(r"tests/corpus/\w+\.py:\d+", where), where


def test_corpus_has_enough_functions():
    assert len(CASES) >= 85
    for name, case in ALL_CASES.items():
        assert case.function.name == name
        assert case.function.context.plain(name) is not None


def test_the_check_can_fail():
    # A wrong row, a wrong vector element, a None in the wrong place and a
    # number where Python says None are all caught.
    want = [3, 5, 7]
    assert matches(np.array([3, 5, 7]), want)
    assert not matches(np.array([3, 5, 8]), want)
    rows = [np.array([1, 2]), np.array([3, 4])]
    assert matches(np.array([[1, 2], [3, 4]]), rows)
    assert not matches(np.array([[1, 2], [3, 5]]), rows)
    assert matches((np.array([1, 2]), np.array([3.0, 4.0])), [(1, 3.0), (2, 4.0)])
    assert not matches((np.array([1, 2]), np.array([3.0, 4.5])), [(1, 3.0), (2, 4.0)])
    optional = [None, 4, 2]
    assert matches(Optional(np.array([False, True, True]), np.array([0, 4, 2])), optional)
    assert not matches(Optional(np.array([True, True, True]), np.array([0, 4, 2])), optional)
    assert not matches(Optional(np.array([False, False, True]), np.array([0, 4, 2])), optional)
    assert not matches(Optional(np.array([False, True, True]), np.array([0, 4, 3])), optional)
    assert not matches(np.array([-1, 4, 2]), optional)
    assert matches(Optional(np.array([True, True]), np.array([1.5, 2.0])), [1.5, 2.0])
    assert not matches(Optional(np.array([True, False]), np.array([1.5, 2.0])), [1.5, 2.0])


def test_a_wrong_compiled_answer_is_caught():
    # The real path: a compiled result checked against a perturbed Python result.
    result, want = run_case("tribonacci", 7, "numpy")
    assert matches(result, want)
    want[3] = want[3] + 1
    assert not matches(result, want)
