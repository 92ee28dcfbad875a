"""Test set-up: quiet TensorFlow, and the project root importable (examples/)."""

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
