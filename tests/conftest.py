"""Test set-up: quiet TensorFlow, and the project root importable (examples/)."""

import gc
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def frozen_examples(monkeypatch):
    """Tests run the checked-in modules of examples/ and never rewrite them.

    A test that needs a program generated/ lacks fails with
    StaleGeneratedCodeError: run it once unfrozen, review, and check it in.
    """
    from examples.corpus import CASES

    for case in CASES:
        monkeypatch.setattr(case.function.context, "frozen", True)


@pytest.fixture(scope="module")
def unformatted_generation():
    """Modules generated while a test module runs skip black (opt in:
    `pytestmark = pytest.mark.usefixtures("unformatted_generation")`).

    black only lays the generated code out (after `ast.unparse`, on valid
    Python) and took 70-90% of generating a module (corpus functions: 0.9 of
    1.2 s, 2.9 of 3.5 s); a test module whose programs are generated at test
    time into a folder of its own, and whose tests check what the programs
    compute and never read their text, need not pay it, as the fuzzer does not
    (tools/fuzzrun.py).  The layout is checked where it is the subject: the
    checked-in modules (tests/test_generated.py, tests/test_artifact.py) and
    the tests that read generated text.  AUTOBATCH_TEST_BLACK=1 keeps black.
    """
    from tools.fuzzrun import memoized_emission, unformatted_generation as unformatted

    with memoized_emission():  # same text, each program emitted once (tools/fuzzrun.py)
        if os.environ.get("AUTOBATCH_TEST_BLACK") == "1":
            yield
            return
        with unformatted():
            yield


_RUNTIMES = ("autobatch_runtime.tensorflow_backend", "autobatch_runtime.jax_backend")


@pytest.fixture(autouse=True, scope="module")
def released_programs():
    """Each test module's compiled programs are freed when it ends.

    The runtimes cache every program they trace for the life of the
    process (TensorFlow's graphs and XLA code, JAX's executables).  Without
    this, one process grew about 6 MB a test (4.3 GB after 750 of the
    suite's 3,300 tests), and the whole suite in one process ended, 58
    minutes in, in a segmentation fault inside XLA's compiler; with it, and
    the suite on two processes (pyproject.toml), neither went past 5 GB.
    Later modules trace again what they need.
    """
    yield
    for name in _RUNTIMES:
        runtime = sys.modules.get(name)
        if runtime is not None:
            runtime.release_compiled()
    gc.collect()


# ---- the order files run in -------------------------------------------------
#
# xdist's loadfile hands each process one test file at a time, and by default
# (--loadscope-reorder) the files with the most tests first.  Few tests are
# not short ones: posteriordb (5 tests, minutes), the fuzzer (16) and the
# samplers came last, and one process ran them while the other had finished.
# Instead the longest files go first (longest processing time first: the
# shortest ones fill in at the end), by tests/durations.json, the seconds each
# file took alone (`python -m tools.test_durations`); a file it lacks counts
# DEFAULT_SECONDS_PER_TEST a test.  Within a file the order is unchanged.

DURATIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "durations.json")
DEFAULT_SECONDS_PER_TEST = 0.8  # test_corpus: 709 s of CPU for 787 tests with black, ~0.55 without


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # xdist's reorder by test count would undo ours
        config.option.loadscopereorder = False


def file_seconds(items):
    """{test file: expected seconds} for the collected items."""
    import json

    with open(DURATIONS, encoding="utf-8") as f:
        known = json.load(f)["seconds"]
    counts = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        counts[path] = counts.get(path, 0) + 1
    return {path: known.get(path, DEFAULT_SECONDS_PER_TEST * n) for path, n in counts.items()}


def pytest_collection_modifyitems(session, config, items):
    seconds = file_seconds(items)
    items.sort(key=lambda item: -seconds[item.nodeid.split("::")[0]])  # stable: a file keeps its order
