"""Python's operators mean what they mean on one example (issue 29).

Every program of tests/python_operators.py on NumPy, TF graph and TF+XLA at
batch sizes 1, 7 and 64 against the plain function per example, values and
kinds (a bool where Python gives a bool, an int where it gives an int).
"""

import re

import numpy as np
import pytest

from examples.corpus import example
from tests import python_operators as P
from tests.oracle import MODES, oracle_params
from transpiler import BatchTypeError

# Its modules are generated into a temporary folder and run; the tests that
# read their text look for code, not layout: black is skipped (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

def pairs(low, high, zeros=True):
    """Two integers per example; with `zeros`, some of each are zero."""

    def make(rng, n):
        a, b = rng.integers(low, high, n), rng.integers(low, high, n)
        if zeros:
            a[rng.random(n) < 0.2] = 0
            b[rng.random(n) < 0.3] = 0
        return a, b

    return make


def ints(low, high, dtype=np.int64):
    return lambda rng, n: (rng.integers(low, high, n).astype(dtype),)


CASES = {
    # idle lanes never raise
    "gcd": pairs(0, 60),
    "gcd_loop": pairs(0, 60),
    "gcd_through_recursion": lambda rng, n: (*pairs(0, 60)(rng, n), rng.integers(0, 4, n)),
    "quotient_sum": pairs(0, 60),
    "harmonic": lambda rng, n: (rng.integers(-50, 50, n), rng.integers(-2, 7, n)),
    "divisible": pairs(-30, 30),
    "quotient": pairs(-30, 30),
    "lcm": pairs(0, 40),
    "power": lambda rng, n: (rng.integers(-4, 5, n), rng.integers(-3, 6, n)),
    "vector_quotients": lambda rng, n: (
        rng.integers(-40, 40, (n, 3)),
        rng.choice([-3, -2, -1, 1, 2, 5], (n, 3)),
        rng.integers(0, 3, n),
    ),
    # bit operators
    "bit_ops": lambda rng, n: (rng.integers(-1000, 1000, n), rng.integers(0, 20, n)),
    "popcount": ints(0, 100000),
    "bool_bits": pairs(-3, 3, zeros=False),
    "global_flag": ints(-100, 100),
    "shifted_vector": lambda rng, n: (rng.integers(-500, 500, (n, 3)), rng.integers(0, 9, n)),
    "narrow_bits": ints(-1000, 1000, np.int32),
    # bools in arithmetic
    "count_positive": lambda rng, n: (rng.integers(-3, 4, (n, 5)),),
    "count_zeros": lambda rng, n: (rng.integers(-1, 2, (n, 6)),),
    "edit_distance": lambda rng, n: (rng.integers(0, 3, (n, 4)), rng.integers(0, 3, (n, 5))),
    "bool_arithmetic": pairs(-3, 4, zeros=False),
    "masked": lambda rng, n: (
        rng.choice([np.nan, np.inf, -np.inf, -1.5, 0.0, 2.0], n),
        rng.choice([np.nan, np.inf, -2.0, 3.0], (n, 3)),
        rng.normal(size=n),
    ),
    "sign": ints(-5, 6),
    "literal_bools": ints(-5, 6),
    "narrow_count": ints(-6, 6, np.int32),
}


def leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    return [value]


def kind(value):
    """The dtype kinds a batched result may have for a Python value."""
    if isinstance(value, np.ndarray):  # an example's own vector: NumPy's kind
        return {"b": "b", "i": "iu", "u": "iu"}.get(value.dtype.kind, "f")
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, (int, np.integer)):
        return "iu"
    return "f"


def same(batched, expected_list):
    """Leaf by leaf: the per-example values, and the kind Python gives
    (a bool result where Python's is an int is wrong: `True + True == 2`).
    None if they agree, else what differs."""
    got = [np.asarray(leaf) for leaf in leaves(batched)]
    expected = [leaves(e) for e in expected_list]
    if any(len(e) != len(got) for e in expected):
        return f"{len(got)} leaves, Python gives {len(expected[0])}"
    for k, leaf in enumerate(got):
        values = [e[k] for e in expected]
        if leaf.dtype.kind not in kind(values[0]):
            return f"leaf {k}: dtype {leaf.dtype}, Python gives {type(values[0]).__name__}"
        want = np.array(values).reshape(leaf.shape)
        equal = np.allclose(leaf, want, equal_nan=True) if leaf.dtype.kind == "f" else np.array_equal(leaf, want)
        if not equal:
            return f"leaf {k}: {leaf.tolist()} != {want.tolist()}"
    return None


def expected(name, inputs, batch):
    plain = P.ctx.plain(name)
    return [plain(*example(inputs, i)) for i in range(batch)]


PARAMS = oracle_params(CASES)


@pytest.mark.parametrize("name, batch, mode", PARAMS)
def test_batched_equals_per_example(name, batch, mode):
    rng = np.random.default_rng(sum(map(ord, name)) * 100 + batch)
    inputs = CASES[name](rng, batch)
    result = getattr(P, name)(*inputs, **MODES[mode])
    assert same(result, expected(name, inputs, batch)) is None


def test_the_inputs_take_different_paths():
    """The oracle means something only if examples differ: each program's
    64 examples give more than one result."""
    for name, make in CASES.items():
        results = {repr(r) for r in expected(name, make(np.random.default_rng(0), 64), 64)}
        assert len(results) > 1, name


@pytest.mark.parametrize("mode", MODES)
def test_zero_divisors_everywhere_raise_nothing(mode):
    """Every example but one has b == 0 (it returns at once), and the one
    recurses: the blocks that divide run with the others' zeros."""
    a = np.array([0, 7, 9, 0, 12, 5])
    b = np.array([0, 0, 0, 0, 8, 0])
    for name in ("gcd", "gcd_loop", "quotient_sum", "divisible", "quotient", "lcm"):
        got = getattr(P, name)(a, b, **MODES[mode])
        assert same(got, expected(name, (a, b), len(a))) is None, name


def test_integer_divisors_and_exponents_are_guarded_where_they_are_used():
    """The divisor itself is guarded (`a // rt.py_divisor(b)`), not the
    block's inputs: a divisor read from a stack or computed in the block is
    covered too.  Literal divisors stay as written."""
    for backend, suffix in (("numpy", "np"), ("tensorflow", "tf")):
        P.quotient_sum(np.array([8]), np.array([3]), backend=backend)
        P.power(np.array([2]), np.array([3]), backend=backend)
        P.bool_arithmetic(np.array([1]), np.array([0]), backend=backend)
        text = open(P.ctx._generated_dir(None) + f"/tests/python_operators_{suffix}.py").read()
        assert "safe_divisor" not in text
        assert "a // rt.py_divisor(b)" in text and "a % rt.py_divisor(b)" in text
        assert "rt.py_int_power(x, rt.exponent_or_zero(k))" in text
        assert "/ 2" in text  # p / 2: a true division, never raises


def test_numpy_keeps_its_own_bit_operators():
    """NumPy's `<<`, `&`, `~` on ints are Python's: its code says them;
    TensorFlow tensors have no `<<` and read `~` on a bool as `not`."""
    P.bit_ops(np.array([5]), np.array([2]), backend="numpy")
    P.bit_ops(np.array([5]), np.array([2]), backend="tensorflow")
    P.bool_bits(np.array([1]), np.array([0]), backend="numpy")
    folder = P.ctx._generated_dir(None) + "/tests/"
    numpy_code = open(folder + "python_operators_np.py").read()
    tf_code = open(folder + "python_operators_tf.py").read()
    # code only: not the comments and the docstring that quote the source
    statements = lambda text: [  # noqa: E731
        line for line in text.splitlines() if not line.strip().startswith("#") and ".py:" not in line
    ]
    # a per-example count: `py_shift_count` stops a negative one (ValueError)
    assert any("a << rt.py_shift_count(b)" in line for line in statements(numpy_code))
    assert not any("py_lshift" in line for line in statements(numpy_code))
    assert any("rt.py_lshift(a, rt.py_shift_count(b))" in line for line in statements(tf_code))
    assert any("rt.py_rshift(a, rt.py_shift_count(b))" in line for line in statements(tf_code))
    # `~p` of a bool: ~ of its int on both backends (Python's -2 / -1)
    assert any("~rt.cast(p, 'int64')" in line.replace('"', "'") for line in statements(numpy_code))


# ---- calls the mixing probe cannot run per example --------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch", [1, 7])
def test_a_batched_helper_is_called_on_the_batch_not_refused(mode, batch):
    """A module-level helper written for the whole batch (`tf.gather(v, i,
    batch_dims=1)`) is the user's own: it runs on the batch and is not
    compared with a per-example call it was never written for."""
    rng = np.random.default_rng(batch)
    v = rng.normal(size=(batch, 4))
    i = rng.integers(0, 4, batch)
    if mode == "jax":  # the helper is NumPy's or TensorFlow's: refused on JAX, naming the line
        with pytest.raises(BatchTypeError, match="a tensorflow value, not a JAX array"):
            P.picked(v, i, **MODES[mode])
        return
    got = np.asarray(P.picked(v, i, **MODES[mode]))
    want = v[np.arange(batch), i] * np.where(i > 0, 2, 1)
    assert np.allclose(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_a_helper_made_by_exec_is_not_taken_for_a_builtin(mode):
    """A helper with no module (made by `exec`) was taken for a library
    function (its type's module is "builtins"), called per example, and the
    program refused: `pick_rows(v, i)` does not keep the batch axis first."""
    rng = np.random.default_rng(3)
    m = rng.normal(size=(5, 3, 3))
    rows = rng.integers(0, 3, (5, 3))
    if mode == "jax":  # the helper is NumPy's or TensorFlow's: refused on JAX, naming the line
        with pytest.raises(BatchTypeError, match="a tensorflow value, not a JAX array"):
            P.picked_rows(m, rows, **MODES[mode])
        return
    got = np.asarray(P.picked_rows(m, rows, **MODES[mode]))
    want = np.stack([m[b][rows[b]] for b in range(5)]) + 1
    assert np.allclose(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_an_int_to_a_negative_int_power_stops_naming_the_line(mode):
    """Python gives a float (2 ** -1 == 0.5) where the program's power is an
    int: the examples that ask for one stop with a ValueError naming the
    line, never the 1 that `exponent_or_zero` puts in their place; an
    example with n == 0 alone (k == 0) runs as Python."""
    assert np.asarray(P.halving_sum(np.array([0]), **MODES[mode])).tolist() == [1]
    with pytest.raises(ValueError, match=r"example\(s\) \[1, 2\] raised an int to a negative int power") as error:
        P.halving_sum(np.array([0, 1, 3]), **MODES[mode])
    with open(P.__file__) as f:
        line = next(i for i, text in enumerate(f, 1) if "2**k  # <-- negative k" in text)
    assert f"python_operators.py:{line}: total = total + 2**k" in str(error.value)


@pytest.mark.parametrize("mode", MODES)
def test_a_power_runs_only_where_python_evaluates_it(mode):
    k, n = np.array([-1, -3, 3, 2, 0]), np.array([5, 0, 5, 5, 0])
    got = np.asarray(P.guarded_power(k, n, **MODES[mode])).tolist()
    assert got == [bool(a >= 0 and 2**a > b) for a, b in zip(k.tolist(), n.tolist())]
