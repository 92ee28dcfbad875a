"""Where Python raises on one example, the batched call raises it too.

The oracle: each example run alone in plain Python either returns a value
or raises.  Batched, on every backend, the call returns what each example
returns when none raises, and otherwise raises the error Python raises for
the first raising example, listing exactly the examples that raise and
naming the line.  Guards (`if d != 0`, `x >= 0 and ...`) keep examples
from stopping where Python never evaluates the operation.
"""

import math
import re

import numpy as np
import pytest

from tests import python_errors as P
from tests.oracle import MODES

BATCH = 8  # one shape per program: XLA and JAX compile each once

NAN, INF = math.nan, math.inf

# op of P.risky -> (x values, y values) of BATCH examples, some of which
# raise in Python and some of which do not.
RISKY = {
    0: ([1.0, 2.0, -3.0, 0.0, 5.0, INF, NAN, 1.0], [2.0, 0.0, 4.0, 0.0, -0.0, 1.0, 0.0, INF]),
    1: ([7.0, 7.0, -7.5, 0.0, 1.0, 2.0, 3.0, 4.0], [2.0, 0.0, 2.0, 1.0, -0.0, 3.0, 1.0, 5.0]),
    2: ([7.0, 7.0, -7.5, INF, 1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 2.0, 2.0, 0.0, 3.0, 1.0, INF]),
    3: ([4.0, -4.0, 0.0, -0.0, INF, -INF, NAN, 2.0], [0.0] * BATCH),
    4: ([1.0, 0.0, -1.0, INF, NAN, 1e-300, -INF, 10.0], [0.0] * BATCH),
    5: ([1.0, 1000.0, -1000.0, INF, -INF, NAN, 709.0, 710.0], [0.0] * BATCH),
    6: (
        [2.0, -8.0, 0.0, 10.0, -2.0, 0.0, INF, 1e-300],
        [0.5, 0.5, -1.0, 400.0, 3.0, 0.0, -1.0, -2.0],
    ),
    7: ([1.5, -2.7, NAN, INF, -INF, 1e18, -9.2e18, 0.0], [0.0] * BATCH),
    8: ([0.5, 1.0, -1.0, 1.5, -2.0, NAN, INF, 0.0], [0.0] * BATCH),
    9: ([1.5, -2.5, NAN, INF, 3.0, -INF, 0.0, 7.9], [0.0] * BATCH),
    10: ([2.0, -1.0, 0.0, 10.0, 0.0, 4.0, -8.0, INF], [3.0, 0.5, -1.0, 400.0, 0.0, 0.5, 3.0, -1.0]),
    11: ([8.0, 8.0, 0.0, -1.0, 1.0, 100.0, 8.0, 2.0], [2.0, 1.0, 2.0, 10.0, 1.0, 10.0, -2.0, 0.5]),
    12: ([4.0, -4.0, 0.0, 9.0, -0.0, INF, -INF, 2.0], [0.0] * BATCH),
    13: ([0.5, 1.5, -2.5, NAN, INF, 2.6, -0.4, -INF], [0.0] * BATCH),
}


def plain_results(function, columns):
    """Per example: ("value", v) or ("error", the exception) in plain Python.
    A complex value (`(-8.0) ** 0.5`) is refused: the program computes
    floats, so that example stops with a ValueError."""
    out = []
    for values in zip(*columns):
        try:
            value = function(*values)
        except (ArithmeticError, ValueError) as error:
            out.append(("error", error))
            continue
        out.append(
            ("error", ValueError("complex")) if isinstance(value, complex) else ("value", value)
        )
    return out


def check_against_python(name, columns, mode, arrays=None):
    """The batched call of `name` on `columns` (lists of Python numbers,
    one per example) does what each example does alone in plain Python."""
    plain = plain_results(P.ctx.plain(name), columns)
    arrays = arrays if arrays is not None else [np.array(c) for c in columns]
    raising = [k for k, (kind, _) in enumerate(plain) if kind == "error"]
    call = getattr(P, name)
    if not raising:
        got = np.asarray(call(*arrays, **MODES[mode]))
        want = np.array([value for _, value in plain], dtype=got.dtype)
        # NaN equals NaN here; TensorFlow's exp and log may differ in the last bit
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
        return None
    first = plain[raising[0]][1]
    with pytest.raises(type(first)) as caught:
        call(*arrays, **MODES[mode])
    message = str(caught.value)
    assert f"example(s) {raising}" in message, (message, raising)
    assert re.search(r"python_errors\.py:\d+: ", message), message
    return message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", sorted(RISKY))
def test_each_risky_operation_raises_what_python_raises(op, mode):
    xs, ys = RISKY[op]
    ops = [op] * BATCH
    # The batch raises as the examples do ...
    check_against_python("risky", [ops, xs, ys], mode)
    # ... and the examples that do not raise, alone with others that take
    # another path (op 99) with the raising values, give Python's values.
    plain = P.ctx.plain("risky")
    safe = [k for k in range(BATCH) if _returns(plain, op, xs[k], ys[k])]
    assert safe and len(safe) < BATCH  # each case has both kinds
    ops = [op if k in safe else 99 for k in range(BATCH)]
    xs2 = [xs[k] if k in safe else 0.25 for k in range(BATCH)]
    check_against_python("risky", [ops, xs2, ys], mode)


def _returns(function, *args):
    (result,) = plain_results(function, [[a] for a in args])
    return result[0] == "value"


@pytest.mark.parametrize("mode", ["numpy", "tf_graph"])
def test_an_int_beyond_64_bits_is_refused(mode):
    """int(1e19) is a Python int the program's int64 cannot hold: that
    example stops with an OverflowError saying so."""
    ops, xs = [7, 9, 13, 7, 7, 7, 7, 7], [1e19, -1e300, 1e300, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(OverflowError, match=r"example\(s\) \[0, 1, 2\].*64-bit ints"):
        P.risky(np.array(ops), np.array(xs), np.zeros(BATCH), **MODES[mode])


@pytest.mark.parametrize("mode", MODES)
def test_integer_division_by_zero_raises(mode):
    a = [7, -7, 0, 5, 9, -3, 12, 1]
    b = [2, 3, 4, 0, 0, 5, -5, 1]
    message = check_against_python("int_division", [a, b], mode)
    assert "ZeroDivisionError" in message and "q = a // b" in message
    b = [2, 3, 4, 1, 7, 5, -5, 1]
    check_against_python("int_division", [a, b], mode)


@pytest.mark.parametrize("mode", MODES)
def test_guards_keep_python_from_evaluating(mode):
    """Every example would raise somewhere if the guards ran everything:
    none stops, and each gets Python's value."""
    x = [4.0, -4.0, 0.0, 9.0, 800.0, -0.5, 12.0, 1e-3]
    d = [2, 0, 0, -3, 0, 5, 4, 0]
    check_against_python("guarded", [x, d], mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_textbook_function_stops_where_python_divides_by_zero(mode):
    a = [1.0, 1.0, 2.0, 1.0, 3.0, 1.0, 0.5, 1.0]
    b = [0.0, 2.0, -3.0, 0.0, 1.0, 5.0, 1.0, -2.0]
    c = [-1.0, 1.0, 1.0, 1.0, -4.0, 6.0, 0.0, 1.0]
    check_against_python("quadratic_root", [a, b, c], mode)  # NaN where no real root
    a[2] = a[5] = 0.0
    message = check_against_python("quadratic_root", [a, b, c], mode)
    assert "division by zero" in message and "(2.0 * a)" in message


@pytest.mark.parametrize("mode", ["numpy", "jax"])
def test_an_examples_own_array_keeps_numpys_meaning(mode):
    """v / s of an example's NumPy vector: inf where s == 0, no error."""
    v = np.array([[1.0, -2.0], [3.0, 0.5], [0.0, 1.0]])
    s = np.array([2.0, 0.0, -1.0])
    plain = P.ctx.plain("scaled")
    with np.errstate(divide="ignore"):
        want = np.stack([plain(v[k], s[k]) for k in range(3)])
    got = np.asarray(P.scaled(v, s, **MODES[mode]))
    np.testing.assert_array_equal(got, want)


def test_the_generated_code_says_what_it_checks():
    P.guarded(np.array([1.0]), np.array([1]), backend="numpy")
    text = open(P.ctx._generated_dir(None) + "/tests/python_errors_np.py").read()
    assert 'rt.python_error(active, "ValueError", "sqrt", x)' in text
    assert "x / rt.py_divisor(" in text and "% rt.py_divisor(d)" in text
    assert 'rt.python_error(active, "ZeroDivisionError", "divide", d)' in text


@pytest.mark.parametrize("mode", MODES)
def test_negative_shift_counts_and_zero_steps_raise_value_error(mode):
    a = [5, 6, 7, 8, -9, 10, 11, 12]
    k = [1, -1, 0, 3, 2, -4, 5, 0]
    message = check_against_python("shifted", [a, k], mode)
    assert "negative shift count" in message
    k = [1, 1, 0, 3, 2, 4, 5, 0]
    check_against_python("shifted", [a, k], mode)
    n = [9, 9, -5, 10, 4, 0, 7, -7]
    step = [2, 0, -1, 3, 0, 1, -2, -3]
    message = check_against_python("stepped_sum", [n, step], mode)
    assert "range() arg 3 must not be zero" in message
    step = [2, 5, -1, 3, 1, 1, -2, -3]
    check_against_python("stepped_sum", [n, step], mode)


@pytest.mark.parametrize("mode", MODES)
def test_comb_perm_and_factorial_are_exact_or_raise(mode):
    # exact at the edge of int64 (comb(66, 33), perm(2000000, 3)), 0 where k > n,
    # and n = -1 where a guard keeps Python from evaluating comb
    n = [66, 1000, 2000000, 3, 0, 62, -1, 20]
    k = [33, 2, 3, 5, 0, 31, 13, 12]
    check_against_python("counting", [n, k], mode)
    # a negative argument: ValueError, as in Python
    n = [66, -1, 5, 67, 10, 7, 2, 9]
    k = [33, 2, -1, 3, 12, 3, 2, 4]
    message = check_against_python("counting", [n, k], mode)
    assert "must be a non-negative integer" in message
    # beyond int64 (comb(67, 33), perm(100, 12)), where Python's int grows: OverflowError
    n, k = [66, 67, 100, 7, 2, 9, 3, 4], [33, 33, 12, 3, 2, 4, 3, 4]
    with pytest.raises(OverflowError, match=r"example\(s\) \[1, 2\].*64-bit ints"):
        P.counting(np.array(n), np.array(k), **MODES[mode])


@pytest.mark.parametrize("mode", MODES)
def test_an_int_power_beyond_64_bits_raises_overflow_error(mode):
    b = [2, -2, 0, 3, 10, 3037000499, 7, -3]
    e = [62, 61, 0, 39, 18, 1, 22, 39]
    check_against_python("int_powers", [b, e], mode)  # all fit, at the edges
    b[1], e[1], e[3], b[6] = 2, 63, 40, 3037000500  # 2**63, 3**40, 3037000500**2: Python's int grows
    with pytest.raises(OverflowError, match=r"example\(s\) \[1, 3, 6\].*64-bit ints.*b\*\*e"):
        P.int_powers(np.array(b), np.array(e), **MODES[mode])
