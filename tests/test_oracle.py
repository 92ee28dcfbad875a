"""The core oracle: batched result == the plain function on each example alone.

Every program of the shared corpus, on NumPy, TensorFlow graph and
TensorFlow+XLA, at batch sizes 1, 7 and 64 with inputs whose examples take
different paths, plus a broadcast case (one argument of batch size 1).  The
examples' contexts are frozen (tests/conftest.py), so these tests run the
checked-in generated modules and fail if those are stale.
"""

import numpy as np
import pytest

from examples.corpus import CASES, example
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

def expected(case, inputs, batch):
    plain = case.function.context.plain(case.function.name)
    return [plain(*example(inputs, i)) for i in range(batch)]


@pytest.mark.parametrize(
    "case, batch, mode", oracle_params(CASES), ids=lambda v: getattr(v, "name", str(v))
)
def test_batched_equals_per_example(case, batch, mode):
    rng = np.random.default_rng(1000 + batch)
    inputs = case.inputs(rng, batch)
    result = case.function(*inputs, max_stack_depth=case.max_stack_depth, **MODES[mode])
    assert agrees(result, expected(case, inputs, batch))


def test_inputs_take_different_paths():
    # The oracle is only as strong as its inputs: fib's batch of 64 must mix
    # the base case with deep recursions.
    rng = np.random.default_rng(1064)
    (n,) = CASES[0].inputs(rng, 64)
    assert (n <= 1).any() and (n >= 10).any()


@pytest.mark.parametrize("mode", list(MODES))
def test_broadcast_argument_of_size_one(mode):
    case = next(c for c in CASES if c.name == "gcd")
    a = np.arange(1, 41)
    b = np.array([36])
    result = case.function(a, b, **MODES[mode])
    plain = case.function.context.plain("gcd")
    assert np.array_equal(np.asarray(result), [plain(int(x), 36) for x in a])


def test_agrees_detects_a_wrong_result():
    assert not agrees(np.array([1, 2, 3]), [1, 2, 4])
    assert not agrees((np.array([1]), np.array([2])), [(1, 3)])
    assert agrees((np.array([1]), np.array([2.0])), [(1, 2.0)])
