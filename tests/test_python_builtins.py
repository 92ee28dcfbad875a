"""Builtins, `math`, `is` and `in` mean what they mean on one example.

Every program of tests/python_builtins.py on NumPy, TF graph and TF+XLA at
batch sizes 1, 7 and 64 against the plain function per example; and the
forms with no per-example meaning refused at build time, naming the line.
"""

import re

import numpy as np
import pytest

from examples.corpus import example
from tests import python_builtins as P
from transpiler import BatchTypeError
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

# Its modules are generated into a temporary folder and run; the tests that
# read their text look for code, not layout: black is skipped (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

def ints(low, high):
    return lambda rng, n: (rng.integers(low, high, n),)


def floats(rng, n):
    # halves (ties of round()), negatives (int() truncates toward zero), zero
    x = rng.normal(scale=4.0, size=n)
    x[: n // 3] = np.round(x[: n // 3]) + 0.5
    x[n // 3 : n // 2] = 0.0
    return (x,)


CASES = {
    "clamp_distance": lambda rng, n: (rng.integers(-9, 10, n), rng.integers(-9, 10, n)),
    "mixed_extremes": lambda rng, n: (rng.normal(scale=3, size=n), rng.integers(-3, 4, n)),
    "vector_extremes": lambda rng, n: (rng.integers(-20, 20, (n, 5)),),
    "float_vector_extremes": lambda rng, n: (rng.normal(size=(n, 4)),),
    "digits_and_remainder": lambda rng, n: (rng.integers(-5000, 5000, n), rng.integers(2, 11, n)),
    "conversions": floats,
    "integer_square_root": ints(0, 200),
    "math_functions": floats,
    "exact_logarithms": ints(0, 60),
    "gcd_lcm": lambda rng, n: (rng.integers(-60, 61, n), rng.integers(0, 61, n)),
    "modular_power": lambda rng, n: (rng.integers(0, 50, n), rng.integers(0, 40, n), rng.integers(1, 1000, n)),
    "validate": ints(-5, 5),
    "validate_float": lambda rng, n: (rng.normal(size=n),),
    "validate_vector": lambda rng, n: (rng.normal(size=(n, 3)),),
    "validate_point": lambda rng, n: (P.Point(rng.normal(size=n), rng.normal(size=n)),),
    "identity_tests": ints(0, 8),
    "membership": lambda rng, n: (rng.integers(0, 30, n), rng.integers(0, 12, (n, 4))),
    "digit_count": ints(-100000, 100000),
    "bit_count": ints(-1000, 100000),
    "reductions": lambda rng, n: (rng.integers(0, 3, (n, 3)),),
    "tuple_builtins": lambda rng, n: (rng.integers(-2, 3, n), rng.integers(-2, 3, n), rng.integers(-2, 3, n)),
    "type_test": lambda rng, n: (rng.normal(size=n),),
    "shadowed_builtin": lambda rng, n: (rng.integers(-9, 10, n), rng.integers(-9, 10, n)),
    "constant_builtins": ints(-9, 10),
    "linear_search": lambda rng, n: (rng.integers(0, 9, (n, 5)), rng.integers(0, 9, n)),
    "search_or_default": lambda rng, n: (rng.integers(0, 9, (n, 5)), rng.integers(0, 9, n)),
    "best_so_far": lambda rng, n: (rng.integers(0, 20, (n, 4)), rng.integers(0, 12, n)),
    "first_negative": lambda rng, n: (rng.integers(-3, 3, n), rng.integers(-3, 3, n)),
    "binary_search": lambda rng, n: (
        np.sort(rng.integers(0, 20, (n, 8)), axis=1),
        rng.integers(0, 20, n),
        np.zeros(n, np.int64),
        np.full(n, 7),
    ),
    "truth_of_optional": ints(0, 5),
    "optional_argument": lambda rng, n: (rng.integers(-2, 3, n), rng.integers(0, 5, n)),
    "float_literal_after_an_int": lambda rng, n: (rng.integers(-9, 9, (n, 3)), rng.integers(0, 4, n)),
    "bits": lambda rng, n: (rng.integers(0, 1000, n), rng.integers(0, 9, n)),
    "reverse_bits": ints(0, 256),
    "bools_as_ints": lambda rng, n: (rng.integers(-2, 3, n), rng.integers(-2, 3, n)),
    "divide_after_a_guard": lambda rng, n: (rng.integers(0, 3, n), rng.integers(0, 3, n)),
    "triangle_kind": lambda rng, n: (rng.integers(1, 5, n), rng.integers(1, 5, n), rng.integers(1, 5, n)),
    "most_common_letter": lambda rng, n: (rng.integers(97, 123, (n, 9)),),
    "longest_increasing": lambda rng, n: (rng.integers(0, 20, (n, 7)),),
}

# Functions that return None in some examples: their batched result is an
# autobatch_runtime.optional.Optional, whose tolist() is the per-example values.
OPTIONAL_RESULTS = {"linear_search", "first_negative", "binary_search"}

NUMPY_ONLY = {"shadowed_builtin"}  # its helper calls NumPy


def expected(name, inputs, batch):
    plain = P.ctx.plain(name)
    return [plain(*example(inputs, i)) for i in range(batch)]


PARAMS = oracle_params(CASES, lambda name, mode: not (name in NUMPY_ONLY and mode != "numpy"))


@pytest.mark.parametrize("name, batch, mode", PARAMS)
def test_batched_equals_per_example(name, batch, mode):
    rng = np.random.default_rng(sum(map(ord, name)) * 100 + batch)
    inputs = CASES[name](rng, batch)
    result = getattr(P, name)(*inputs, **MODES[mode])
    if name in OPTIONAL_RESULTS:
        want = expected(name, inputs, batch)
        assert result.tolist() == want
        assert batch < 64 or (None in want and len(set(want)) > 2)  # both kinds of example
    else:
        assert agrees(result, expected(name, inputs, batch))


def test_the_inputs_take_different_paths():
    """The oracle means something only if examples differ: each program's
    64 examples give more than one result."""
    for name, make in CASES.items():
        inputs = make(np.random.default_rng(0), 64)
        results = {repr(r) for r in expected(name, inputs, 64)}
        if name not in ("validate_float", "validate_vector", "validate_point", "type_test"):
            assert len(results) > 1, name


def test_generated_code_calls_no_builtin_on_the_batch():
    """`isinstance(n, int)` on the batch object was False: every example
    took the bad-input path.  The generated code holds the answer instead,
    and calls the runtime's per-example helpers for the other builtins."""
    P.validate(np.array([1, -1]), backend="numpy")
    P.integer_square_root(np.array([9, 10]), backend="numpy")
    text = open(P.ctx._generated_dir(None) + "/tests/python_builtins_np.py").read()
    # statements only: not the comments and strings that quote the source
    code = [line for line in text.splitlines() if re.match(r"\s+\w+ = ", line)]
    assert not any("isinstance(n" in line or "math.sqrt(n" in line for line in code)
    assert any("rt.py_math('sqrt', n)" in line.replace('"', "'") for line in code)


REFUSED = {
    "text_of_value": (ints(0, 9), r"python_builtins\.py:\d+.*str\(n\).*text"),
    "formatted": (ints(0, 9), r"python_builtins\.py:\d+.*f-string"),
    "prints": (ints(0, 9), r"python_builtins\.py:\d+.*print\(\).*dry_run=True"),
    "identity_of_values": (lambda rng, n: (rng.integers(0, 3, n), rng.integers(0, 3, n)), r"python_builtins\.py:\d+.*identity"),
    "key_function": (lambda rng, n: (rng.integers(0, 3, n), rng.integers(0, 3, n)), r"python_builtins\.py:\d+.*key="),
    "no_translation": (ints(0, 9), r"python_builtins\.py:\d+.*hash\(\) has no per-example translation"),
    "text_of_float": (lambda rng, n: (rng.normal(size=n),), r"python_builtins\.py:\d+.*ints and bools only"),
    "extremes_of_a_matrix": (lambda rng, n: (rng.normal(size=(n, 2, 2)),), r"python_builtins\.py:\d+.*compares its rows"),
    "number_in_text": (ints(0, 9), r"python_builtins\.py:\d+.*TypeError in Python.*CODES"),
    "round_float_to_digits": (lambda rng, n: (rng.normal(size=n),), r"python_builtins\.py:\d+.*exact decimal"),
    "shared_rows": (ints(0, 9), r"python_builtins\.py:\d+.*same object.*for _ in range"),
}


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_at_build_time_naming_the_line(name, backend):
    make, message = REFUSED[name]
    with pytest.raises(BatchTypeError, match=message):
        getattr(P, name)(*make(np.random.default_rng(0), 3), backend=backend)
