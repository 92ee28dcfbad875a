"""The Python subset, construct by construct: batched == per-example Python.

Every program of tests/language.py on NumPy, TF graph and TF+XLA at batch
sizes 1, 7 and 64, with inputs whose examples take different paths and
different trip counts.
"""

import numpy as np
import pytest

from examples.corpus import example
from tests import language as L
from transpiler.demo import agrees
from tests.oracle import MODES, oracle_params

# Its modules are generated into a temporary folder and run; the tests that
# read their text look for code, not layout: black is skipped (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")


def ints(low, high):
    return lambda rng, n: (rng.integers(low, high, n),)


CASES = {
    "collatz_steps": lambda rng, n: (rng.integers(1, 201, n),),
    "range_sum": lambda rng, n: (
        rng.integers(-10, 11, n),
        rng.integers(-10, 11, n),
        rng.choice([-3, -2, -1, 1, 2, 3], n),
    ),
    "skip_and_stop": ints(0, 25),
    "first_divisor": ints(2, 60),
    "nested_loops": ints(0, 9),
    "logic": lambda rng, n: (rng.integers(-3, 12, n), rng.integers(-3, 12, n)),
    "value_logic": lambda rng, n: (rng.integers(-1, 2, n), rng.integers(-1, 2, n)),
    "guarded": ints(-3, 8),
    "assignments": lambda rng, n: (rng.integers(-5, 5, n), rng.integers(-5, 5, n)),
    "loop_with_recursion": ints(0, 7),
    "shadowing": ints(-5, 5),
    "runtime_names": ints(-5, 9),
    "uses_numpy": lambda rng, n: (rng.normal(size=n),),
    "uses_tensorflow": lambda rng, n: (rng.normal(size=n).astype(np.float32),),
    "calls_with_keywords": ints(-5, 6),
}

NUMPY_ONLY = {"uses_numpy"}
# Programs whose primitives are NumPy or TensorFlow functions: on JAX, a
# clear build-time error (test_foreign_primitives_on_jax_name_the_line).
NOT_JAX = {"uses_numpy", "uses_tensorflow"}


def expected(name, inputs, batch):
    plain = L.ctx.plain(name)
    out = [plain(*example(inputs, i)) for i in range(batch)]
    return [np.asarray(o) if hasattr(o, "numpy") else o for o in out]


# A program calling NumPy functions runs on the NumPy backend only (on
# TensorFlow it is a clear error: see test_numpy_program_on_tensorflow...).
PARAMS = oracle_params(
    CASES,
    lambda name, mode: not (name in NUMPY_ONLY and mode != "numpy")
    and not (name in NOT_JAX and mode == "jax"),
)


@pytest.mark.parametrize("name, batch, mode", PARAMS)
def test_batched_equals_per_example(name, batch, mode):
    rng = np.random.default_rng(hash((name, batch)) % 2**32)
    inputs = CASES[name](rng, batch)
    result = getattr(L, name)(*inputs, **MODES[mode])
    assert agrees(result, expected(name, inputs, batch))


def test_collatz_over_1_to_200_takes_different_trip_counts():
    x = np.arange(1, 201)
    steps = np.asarray(L.collatz_steps(x, backend="tensorflow", xla=True))
    plain = L.ctx.plain("collatz_steps")
    assert steps.tolist() == [plain(int(v)) for v in x]
    assert len(set(steps.tolist())) > 50


def test_numpy_program_on_tensorflow_names_the_line():
    from transpiler import BatchTypeError

    # np.sqrt, np.abs and np.maximum run as TensorFlow twins; np.hypot has none
    with pytest.raises(BatchTypeError, match=r"language\.py:\d+.*`np\.hypot\(x, 1\.0\)`: NumPy's hypot has no twin on the tensorflow backend"):
        L.uses_numpy(np.array([1.0]), backend="tensorflow")


def _generated_text(name, suffix):
    import glob
    import os

    (path,) = glob.glob(os.path.join(L.ctx.generated_dir, "**", f"language_{suffix}.py"), recursive=True)
    with open(path) as f:
        return f.read()


def test_tensorflow_primitives_on_jax_name_the_line():
    from transpiler import BatchTypeError

    with pytest.raises(BatchTypeError, match=r"language\.py:\d+.*a tensorflow value, not a JAX array"):
        L.uses_tensorflow(np.array([1.0], np.float32), backend="jax")


def test_numpy_primitives_run_on_jax_as_jax_numpy():
    """`np.sqrt(np.abs(x)) + np.maximum(x, 0.0) + np.hypot(x, 1.0)` on the JAX
    backend: jax.numpy's functions of the same names (NumPy's would meet the
    jitted loop's tracers and fail)."""
    x = np.array([1.0, -4.0, 0.25, -0.0, 9.0])
    got = np.asarray(L.uses_numpy(x, backend="jax"))
    np.testing.assert_allclose(got, [L.ctx.plain("uses_numpy")(v) for v in x], rtol=1e-15)
    np.testing.assert_allclose(L.uses_numpy(x, backend="numpy"), got, rtol=1e-15)
    assert "rt.jax_numpy.sqrt(rt.jax_numpy.abs(x))" in _generated_text("uses_numpy", "jax")
    assert "rt.jax_numpy" not in _generated_text("uses_numpy", "np")


@pytest.mark.parametrize("backend", ["numpy", "tensorflow", "jax"])
def test_functions_without_a_value_return_none(backend):
    assert L.no_return(np.array([1, 2]), backend=backend) is None
    assert L.bare_return(np.array([1, -2]), backend=backend) is None


def test_short_circuit_call_runs_only_where_needed():
    # count_down(n) recurses n deep: at max_stack_depth=6 it only fits because
    # the examples with n <= 0 never call it, and n = 7 is not in the batch.
    n = np.array([-3, 0, 2, 5])
    ok, other, pick = L.guarded(n, backend="numpy", max_stack_depth=6)
    assert ok.tolist() == [False, False, True, True]
    assert pick.tolist() == [-1, -1, 2, 5]


def test_loop_blocks_quote_the_loop_lines():
    # the module holds these programs once they have run (alone, -k, or first)
    L.collatz_steps(np.array([3]), backend="numpy")
    L.range_sum(np.array([0]), np.array([3]), np.array([1]), backend="numpy")
    text = open(L.ctx._generated_dir(None) + "/tests/language_np.py").read()
    assert "# tests/language.py:" in text
    assert "while x != 1:" in text
    assert "for i in range(a, b, s):" in text


@pytest.mark.parametrize("backend", ["numpy", "tensorflow", "jax"])
def test_top_level_call_with_keywords_and_defaults(backend):
    x = np.array([1, 2, 3])
    assert np.asarray(L.scaled(x, backend=backend)).tolist() == [2, 4, 6]
    assert np.asarray(L.scaled(x, offset=1, backend=backend)).tolist() == [3, 5, 7]
    assert np.asarray(L.scaled(factor=3, x=x, backend=backend)).tolist() == [3, 6, 9]
    with pytest.raises(TypeError, match="scaled"):
        L.scaled(x, 1, factor=2, backend=backend)


def _closures(text):
    """The generated module's CLOSURES table (its value, whatever the layout)."""
    import ast

    tables = [
        statement.value
        for statement in ast.parse(text).body
        if isinstance(statement, ast.Assign)
        and [getattr(t, "id", None) for t in statement.targets] == ["CLOSURES"]
    ]
    assert len(tables) == 1, len(tables)
    return ast.literal_eval(tables[0])


@pytest.mark.parametrize("mode", list(MODES))
def test_closures_are_factory_parameters_not_frozen_values(mode):
    x = np.linspace(-2.0, 3.0, 9)
    n = np.arange(9) % 4
    results = []
    for log_density, step, table in ((L.bump, 0.5, np.array([1.0])), (L.valley, 0.25, np.array([2.0]))):
        climb = L.make_climber(log_density, step, table)
        got = np.asarray(climb(x, n, **MODES[mode]))
        plain = climb.context.plain("climb")
        assert np.allclose(got, [plain(float(a), int(b)) for a, b in zip(x, n)])
        results.append(got)
        text = open(climb.context._generated_dir(None) + "/tests/language_np.py").read() if mode == "numpy" else None
        if text is not None:
            assert "def make_climb(log_density, step, table):" in text
            assert _closures(text) == {"climb(float64[], int64[])": ("log_density", "step", "table")}
    assert not np.allclose(results[0], results[1])  # the values were not frozen


def test_an_error_in_a_primitive_names_the_users_line():
    with pytest.raises(ValueError, match="negative") as info:
        L.raises_inside(np.array([3.0, -5.0]), backend="numpy")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "tests/language.py" in notes and "return checked_sqrt(y)" in notes
