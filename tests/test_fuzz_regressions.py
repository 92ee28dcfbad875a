"""Programs the differential fuzzer (tools/fuzz.py, tests/test_fuzz.py) broke,
minimized, with their inputs and the per-example results plain Python gives.

Each is checked on NumPy, TF graph and TF+XLA; an open bug is marked
`xfail(strict=True)` with its diagnosis, so fixing it turns the test red
until the mark goes.
"""

import re

import numpy as np
import pytest

from tools.fuzzgen import HEADER
from tools import fuzzrun

MODES = list(fuzzrun.BACKENDS)

# Generated as the fuzzer that found them generates (tools/fuzzrun.py): run,
# never read, without black (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

# name: (program body, entry, inputs, expected per-example results)
CASES = {
    # A tuple display's elements never meet: the weak `100 and 100` took
    # float64 from `x1` beside it, and `n2` got two types (a BatchTypeError
    # on every backend).  Found by seed 26.
    "literal_and_beside_a_float_in_a_tuple": (
        '''
@ctx.batch
def f0(n2, x1):
    n2, x1 = 100 and 100, x1
    return n2, x1
''',
        "f0",
        (np.array([3, -4]), np.array([0.5, 1.0])),
        [(100, 0.5), (100, 1.0)],
    ),
    # A Select's side `1.0` read no variable but was typed as if it met the
    # condition's strong `n`: TF's float32 then met float64 at the join
    # ("returns values of incompatible types").  Found by TF seeds 0 and 3.
    "literal_only_conditional_meets_float64": (
        '''
@ctx.batch
def f0(n, x):
    y = 1.0 if n < 0 else 2.25
    if n > 0:
        return x
    return y
''',
        "f0",
        (np.array([3, -4, 0]), np.array([0.5, 1.0, 7.0])),
        [0.5, 1.0, 2.25],
    ),
    # Guards the fix above: elements are typed apart, yet a weak `n` (only a
    # literal is passed) that meets int64 `d` in one element is int64 in all
    # (a first version of the fix left it int32 in `n + n`: TF seed 34).
    "weak_parameter_in_two_tuple_elements": (
        '''
@ctx.batch
def inner(d, n):
    n, m = (d + n) % 7, (n + n) % -13
    return n + m


@ctx.batch
def f0(d):
    return inner(d, 5)
''',
        "f0",
        (np.array([0, 1, 2]),),
        [2, 3, -3],
    ),
    # Open: weakness is tracked per variable, not per tuple leaf.  `pair`
    # returns (float64, weak int); `pair(x)[1]` read a variable with a strong
    # leaf, so the int leaf came out strong int32 on TF and could not join
    # `d`'s int64.  Found by TF seeds 12 and 33.
    # Once literals became float64 on TF, `tf.where` still made a lone
    # Python float side float32 at run time: "SelectV2 ... float64 does not
    # match float32" (the TF fuzz test, seed of the CI run).
    "literal_side_of_a_choice_beside_a_float64_tensor": (
        '''
@ctx.batch
def f0(d, x1):
    return 0.5 if d > 0 else x1
''',
        "f0",
        (np.array([1, 0, 2]), np.array([3.0, -1.5, 2.0])),
        [0.5, -1.5, 0.5],
    ),
    # ... and two literal sides gave a float32 tensor that then met x0
    # (float64) in `*` (the XLA fuzz test).
    "choice_between_two_float_literals_times_float64": (
        '''
@ctx.batch
def f0(x0):
    return (x0 + (x0 * (10.0 if x0 != (-0.25) else 1.0))) % 100.0
''',
        "f0",
        (np.array([2.5, -0.25, 7.0]),),
        [27.5, 99.5, 77.0],
    ),
    # A weak int met a tuple whose float leaf was strong (and int leaf still
    # weak, early in the fixpoint): promotion took the tuple's float, so `i`
    # became float64 ("i10 gets int64 vs float64").  Found by the long run,
    # seed 201644.
    "weak_int_beside_a_tuple_with_a_float": (
        '''
@ctx.batch
def pair(d, x):
    if d > 0:
        return pair(d - 1, x)[0] + 1, x
    return 0, x


@ctx.batch
def f0(d, x):
    i = 0
    while i < pair(d, x)[0] % 5:
        i += 1
    return i
''',
        "f0",
        (np.array([0, 3, 7]), np.array([0.5, 1.5, -2.0])),
        [0, 3, 2],
    ),
    # `i = 0` met a float in `(0.0 + i) > x`, and the weak int was promoted
    # to float64 for good: `return i` gave floats where Python gives ints.
    # Found once the generator mixed ints and floats (test_fuzz, numpy).
    "weak_int_meets_a_float_in_a_comparison": (
        '''
@ctx.batch
def f0(n, x):
    i = 0
    while i < n:
        i += 1
        if (0.0 + i) > x:
            return i
    return 0
''',
        "f0",
        (np.array([3, 2, 0]), np.array([2.5, 0.5, 0.0])),
        [3, 1, 0],
    ),
    # A float made of literals (`0.5 % 2.5`, `10.0 * 3.0`) met an int64
    # tensor: TF refused ("Expected int64, but got 0.5"); the int is converted
    # as for a single float literal.  Long run 2, seeds 300171 and 300480.
    "float_literal_expression_meets_an_int": (
        '''
@ctx.batch
def f0(d, n0):
    a = (0.5 % 2.5) - n0
    b = ((10.0 * 3.0) + (d * n0)) % -20.0
    return a, b
''',
        "f0",
        (np.array([1, 2, 3]), np.array([4, -5, 6])),
        [(-3.5, -6.0), (5.5, 0.0), (-5.5, -12.0)],
    ),
    # The same through a call: `abs(-(0.5 * 0.0)) <= n0` and
    # `abs(10.0 % 2.5) * (n1 * d)`: the float comes from `abs` of literals.
    # Long run 3, seeds 400541 and 400829.
    "float_from_a_call_on_literals_meets_an_int": (
        '''
@ctx.batch
def f0(d, n0, n1):
    a = 1 if abs(-(0.5 * 0.0)) <= n0 else 100
    b = (-(abs((abs(10.0 % 2.5)) * (n1 * d)))) % 7.5
    return a, b
''',
        "f0",
        (np.array([1, 2, 3]), np.array([4, -5, 6]), np.array([1, 2, -3])),
        [(1, 0.0), (100, 0.0), (1, 0.0)],
    ),
    # `1.0 == d` with d int64: type inference ran TF primitives in a plain
    # tf.Graph, where `==` on a tensor compares identity and returns a Python
    # bool, so nothing failed and nothing was converted; under tf.function
    # the same `==` is elementwise and TF refused ("Expected int64, got 1.0").
    # Inference now runs in a function graph.  Long run 5, seed 600906; seeds
    # 600621 and 600796 were a float64 tensor `!=` an int64 one.
    "float_literal_equals_an_int_tensor": (
        '''
@ctx.batch
def f0(d, n, x):
    same = d == n
    differs = x != n
    if (1.0 == d) and (d >= (-4)):
        return 1, same, differs
    return 0, same, differs
''',
        "f0",
        (np.array([1, 2, 1]), np.array([1, 2, 3]), np.array([1.0, 2.5, 3.0])),
        [(1, True, False), (0, True, True), (1, False, False)],
    ),
    "weak_tuple_element_meets_int64_on_tf": (
        '''
@ctx.batch
def pair(x):
    return x, 100


@ctx.batch
def f0(d, x):
    return pair(x)[1] if d > 0 else d
''',
        "f0",
        (np.array([0, 1, 2]), np.array([0.5, 1.5, 2.5])),
        [0, 100, 100],
    ),
    # A block dividing by anything but a literal passed every variable it
    # loads through safe_divisor(active, x), whose [batch] mask did not
    # broadcast against a per-example vector: ValueError on NumPy and TF
    # (and, where the batch size equals the vector's length, ones written
    # into idle examples' vectors).  Found by the array fuzzer (seed 104 of
    # `--seed 1 --vectors 1`); fixed in bbad6cf.
    "division_in_a_block_that_holds_a_vector": (
        '''
@ctx.batch
def f0(d, v):
    w = v + 1
    return w[0] // (d % 3 + 1)
''',
        "f0",
        (np.array([1, 0, 1, 1]), np.array([[-814, 5, 5], [8, -3, 9], [0, 7, 12], [-3, -4958, -5]])),
        [-407, 9, 0, -1],
    ),
    # A constant table indexed by a constant item (`T1[0]`, a NumPy integer,
    # not a Python int) and a per-example one: TensorFlow's `lookup` took
    # the constant item's length for the batch size ("slice index 0 of
    # dimension 0 out of bounds" at build time on TF and XLA).  Found by
    # seed 20261482 of `--seed 20261201 --vectors 0.8`.
    "table_indexed_by_a_constant_and_a_per_example_item": (
        '''
import numpy as np

T0 = np.array([[-13, 15, -12, -6], [-2, -19, 9, 0]])
T1 = np.array([1, -1])


@ctx.batch
def f0(d, v):
    return T0[T1[2 % len(v)], d % 4] + T0[T1[1], -1]
''',
        "f0",
        (np.array([0, 1, 6]), np.array([[0.5, 1.5], [2.0, 3.0], [1.0, 1.0]])),
        [-2, -19, 9],
    ),
    # `n in range(d, 5)`, a per-example bound: refused at build time ("range()
    # of per-example values works only in a `for` header"), the call
    # `range(d, 5)` being translated before the membership test that
    # contains it.  Found by hand while writing the generator's membership
    # family (constant bounds work).
    "membership_in_a_range_of_per_example_bounds": (
        '''
@ctx.batch
def f0(d, n):
    if n in range(d, 5):
        return 1
    return 0
''',
        "f0",
        (np.array([0, 1, 2, 3]), np.array([0, 0, 4, 5])),
        [1, 0, 1, 0],
    ),
    # `w[0] + bump(w)`, bump assigning items of w: Python reads w[0] before
    # the call; the builder hoisted the call out of the expression, so the
    # batched code read w[0] after it (fixed: an earlier operand that reads an
    # array the call gets is evaluated first).
    "read_before_an_inplace_call_in_one_expression": (
        '''
@ctx.batch
def bump(v):
    v[0] += 10
    return 0


@ctx.batch
def f0(v):
    w = v + 0
    return w[0] + bump(w) + w[0]
''',
        "f0",
        (np.array([[9, 1], [-3, 2], [0, 0]]),),
        [28, 4, 10],
    ),
    # sum() of a module-level NumPy table from a per-example start: refused
    # ("sum() needs a per-example vector or a tuple"), though `sum(T0)` and
    # `sum(v, d)` work.  Found by seed 1230 of `--seed 1000 --vectors 0.6
    # --features all` (NumPy).
    "sum_of_a_table_from_a_per_example_start": (
        '''
import numpy as np

T0 = np.array([0, 3, 0, 5])


@ctx.batch
def f0(d):
    return sum(T0, d)
''',
        "f0",
        (np.array([0, 1, -4]),),
        [8, 9, 4],
    ),
    # `x in range(a, b)` of a float: Python looks for an int of the range
    # equal to x (0.5 is in none), the batched code tested a <= x < b.  Found
    # by seed 3140 of `--seed 3000 --vectors 0.5 --features all` (NumPy).
    "float_in_a_range": (
        '''
@ctx.batch
def f0(x):
    if x in range(0, 3):
        return 1
    return 0
''',
        "f0",
        (np.array([0.5, 1.0, 2.0, 3.0, -1.0, 2.75]),),
        [0, 1, 1, 0, 0, 0],
    ),
    # Since b8ff5d4 every `//` and `%` divisor that is not a nonzero literal
    # is `rt.safe_divisor(active, b)`, which makes a [batch] array of a
    # constant: `v % -2.5` of a per-example vector then divided each row by
    # the batch's divisors along the vector (here with an idle example: its
    # divisor 1), and TF and XLA raised "'float' object has no attribute
    # 'shape'".  Found by the campaign `--seed 20261126 --vectors 0.8`
    # (seeds 20261350, 20261414 and some thirty more after b8ff5d4 landed).
    "negative_literal_divisor_of_a_vector": (
        '''
@ctx.batch
def f0(d, v):
    if d > 0:
        w = v % -2.5
        return w[0] + w[1] * 10.0
    return v[0]
''',
        "f0",
        (np.array([1, 0, 1]), np.array([[1.0, -3.0, 6.0], [4.0, 5.0, 6.5], [-7.0, 8.0, 0.5]])),
        [-6.5, 4.0, -22.0],
    ),
    # The same: the constant index `len(v) % (1 + 1)` became a [batch]
    # array (NumPy took whole rows: shape (3, 3) for (3,); TF and XLA: "'int'
    # object has no attribute 'shape'").  Found by seeds 20261413 and
    # 20261388 of the campaign.
    "constant_index_with_a_computed_divisor": (
        '''
@ctx.batch
def f0(d, v):
    return v[len(v) % (1 + 1)]
''',
        "f0",
        (np.array([1, 0, 1]), np.array([[1, -3, 6], [4, 5, 6], [-7, 8, 0]])),
        [-3, 5, 8],
    ),
}

# Programs whose plain run raises IndexError on some examples: the batched
# call must raise it too, naming those examples.
# name: (program body, entry, inputs, the examples whose plain run raises)
RAISES = {
    # isinstance(v[n], float) became the constant True without evaluating
    # v[n]: no IndexError where n is out of range.  Found by seed 3029 of
    # `--seed 3000 --vectors 0.5 --features all` (NumPy), there as
    # `isinstance(sorted(w)[n], bool)`.
    "index_out_of_range_inside_isinstance": (
        '''
@ctx.batch
def f0(v, n):
    if isinstance(v[n], float):
        return 1
    return 0
''',
        "f0",
        (np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.5, 0.5, 0.5]]), np.array([0, 9, -4])),
        [1, 2],
    ),
}

# Regressions still open: name -> (reason, the modes that fail); marked
# xfail(strict=True) so a fix shows up.  (weak_tuple_element_meets_int64_on_tf
# was fixed when Python literals became int64 / float64 on TensorFlow too.)
OPEN = {}
OPEN_MODES = {}


def _params():
    for name in CASES:
        for mode in MODES:
            marks = []
            if name in OPEN and mode in OPEN_MODES[name]:
                marks.append(pytest.mark.xfail(strict=True, reason=OPEN[name]))
            yield pytest.param(name, mode, marks=marks, id=f"{name}-{mode}")


@pytest.mark.parametrize("name, mode", list(_params()))
def test_fuzz_regression(name, mode, tmp_path):
    body, entry, inputs, want = CASES[name]
    program = fuzzrun.Program(HEADER.format(note="") + body, entry, (), (), 0)
    module = fuzzrun.load(program, str(tmp_path))
    try:
        plain = module.ctx.plain(entry)
        assert [plain(*fuzzrun.example(inputs, i)) for i in range(len(want))] == want
        got = getattr(module, entry)(*inputs, **fuzzrun.BACKENDS[mode])
        returns = tuple("float" if isinstance(v, float) else "int" for v in fuzzrun._leaves(want[0]))
        assert fuzzrun.compare(got, want, returns) == []
    finally:
        fuzzrun.unload(module)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(RAISES))
def test_fuzz_regression_raises(name, mode, tmp_path):
    body, entry, inputs, raising = RAISES[name]
    program = fuzzrun.Program(HEADER.format(note="") + body, entry, (), (), 0, raises=True)
    module = fuzzrun.load(program, str(tmp_path))
    try:
        plain = module.ctx.plain(entry)
        want = []
        for i in range(len(inputs[0])):
            try:
                want.append(plain(*fuzzrun.example(inputs, i)))
            except IndexError as e:
                want.append(fuzzrun.Raised(i, str(e)))
        assert [w.example for w in want if isinstance(w, fuzzrun.Raised)] == raising
        try:
            getattr(module, entry)(*inputs, **fuzzrun.BACKENDS[mode])
            error = None
        except IndexError as e:
            error = str(e).splitlines()[0]
        assert fuzzrun.compare_raised(error, want) == []
    finally:
        fuzzrun.unload(module)


# Found by the fuzzer and refused since, at build time naming the line, as
# forms whose per-example meaning the batched code cannot give:
# name -> (program, entry, inputs, a fragment of the message).
REFUSED = {
    # round(x, 2) rounds the exact decimal value (round(-3.295, 2) is -3.29,
    # -3.295 being stored as -3.29499...); NumPy's scale-and-round gave -3.3.
    "round_to_two_digits": (
        """
@ctx.batch
def f0(x):
    return round(x, 2)
""",
        "f0",
        (np.array([-3.295, 2.675, 0.125]),),
        "rounds the exact decimal value",
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_fuzz_regression_refused(name, mode, tmp_path):
    from transpiler import BatchTypeError, UnsupportedSyntaxError

    body, entry, inputs, fragment = REFUSED[name]
    program = fuzzrun.Program(HEADER.format(note="") + body, entry, (), (), 0)
    module = fuzzrun.load(program, str(tmp_path))
    try:
        with pytest.raises((BatchTypeError, UnsupportedSyntaxError), match=fragment) as info:
            getattr(module, entry)(*inputs, **fuzzrun.BACKENDS[mode])
        error = info.value
        line = error.lineno if isinstance(error, SyntaxError) else int(re.search(r"\.py:(\d+):", str(error)).group(1))
        assert line > 0
    finally:
        fuzzrun.unload(module)
