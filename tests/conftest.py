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
