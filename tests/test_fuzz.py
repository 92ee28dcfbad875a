"""Differential fuzzing: random batched programs agree with plain Python.

Programs come from tools/fuzzgen.py's hypothesis strategy under a fixed seed
(the same programs on every CI run); each runs on random input batches of
several sizes, whose examples take different paths, and must agree with the
plain per-example function (tools/fuzzrun.py).  A failure prints the
program, its inputs and what differed; hypothesis shrinks NumPy failures.

Budgets (about a minute and a half on one core, the suite's share; CI
runs the same programs each time, `python -m tools.fuzz` runs thousands):
NumPy costs only generation, so it gets most programs; the TF graph costs a trace (~1-2 s) and XLA a compile per
batch size (~3-6 s), so they get fewer and smaller programs, and XLA one
batch size per program.  `python -m tools.fuzz` runs thousands.

A second set of programs (VECTOR_PLANS, under a minute more) also has
per-example arrays: subscripts, slices, `len`, item assignment, constant
tables, arrays through calls and recursion, and sometimes an index out of
range (the batched call must raise IndexError exactly when an example's
plain run does).  It leaves out the constructs of `fuzzgen.KNOWN_BUGS`.

A third set (FEATURE_PLANS, with and without arrays) also writes the Python
constructs of issue 29 (`fuzzgen.FEATURES`: builtins and `math`, `is`,
`in`, bit operators, comparisons as numbers, swaps, `for` over arrays,
in-place helpers), each family at its default probability but those a
backend still refuses (FEATURES_OFF), and leaves out KNOWN_BUGS too (about
a minute and a half more).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tools import fuzzgen, fuzzrun

# backend: (programs, statements per program, batch sizes to draw from, batches per program)
PLANS = {
    "numpy": (140, 30, (1, 5, 16), 3),
    "tf": (14, 12, (1, 5, 16), 3),
    "xla": (5, 10, (1, 7, 16), 1),
}


# the same, for programs with per-example arrays
VECTOR_PLANS = {
    "numpy": (120, 24, (1, 5, 16), 3),
    "tf": (10, 12, (1, 5, 16), 2),
    "xla": (4, 10, (1, 7, 16), 1),
}


# the same, for programs with the constructs of issue 29 (half of them with arrays)
FEATURE_PLANS = {
    "numpy": (60, 24, (1, 5, 16), 3),
    "tf": (6, 12, (1, 5, 16), 2),
    "xla": (2, 10, (1, 7, 16), 1),
}
# The families drawn in CI: all of them, but on the backends that still
# refuse a family (family -> backends) its programs would only crash there.
FEATURES_OFF = {
    # None: TF refused `a << b` of two tensors and `n + (a != b)` (int64 +
    # bool) while "bits" and "bool_arith" were written, until b8ff5d4.
}


def ci_features(backend):
    return {name: p for name, p in fuzzgen.FEATURES.items() if backend not in FEATURES_OFF.get(name, ())}


@pytest.mark.parametrize("backend", list(PLANS))
def test_batched_equals_plain_python(backend, tmp_path, capsys):
    _check_programs(backend, PLANS[backend], False, sorted(PLANS).index(backend), tmp_path, capsys)


@pytest.mark.parametrize("backend", list(VECTOR_PLANS))
def test_batched_equals_plain_python_with_arrays(backend, tmp_path, capsys):
    _check_programs(backend, VECTOR_PLANS[backend], True, 10 + sorted(VECTOR_PLANS).index(backend), tmp_path, capsys)


@pytest.mark.parametrize("vectors", [False, True], ids=["scalars", "arrays"])
@pytest.mark.parametrize("backend", list(FEATURE_PLANS))
def test_batched_equals_plain_python_with_python_constructs(backend, vectors, tmp_path, capsys):
    hypothesis_seed = 20 + 2 * sorted(FEATURE_PLANS).index(backend) + vectors
    _check_programs(backend, FEATURE_PLANS[backend], vectors, hypothesis_seed, tmp_path, capsys, ci_features(backend))


def _check_programs(backend, plan, vectors, hypothesis_seed, tmp_path, capsys, features=None):
    programs, statements, sizes, per_program = plan
    counts = fuzzrun.Counts()
    known = []  # crashes of a cause pinned in tests/test_fuzz_regressions.py
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if backend == "numpy" else [])

    @seed(hypothesis_seed)
    @settings(
        database=None,
        deadline=None,
        max_examples=programs,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        program=fuzzgen.programs(statements, vectors=vectors, features=features),
        input_seed=st.integers(0, 2**32 - 1),
        batches=st.lists(st.sampled_from(sizes), min_size=per_program, max_size=per_program),
    )
    def check(program, input_seed, batches):
        findings = fuzzrun.run_program(program, [backend], input_seed, str(tmp_path), batches, counts)
        known.extend(f for f in findings if f.kind == "known")
        findings = [f for f in findings if f.kind != "known"]
        if findings:
            pytest.fail(findings[0].report() + "program:\n" + program.source, pytrace=False)

    with fuzzrun.unformatted_generation():
        check()
    with capsys.disabled():
        print(f"\n[fuzz] {counts.summary()}; known-cause crashes: {len(known)}")
    assert counts.programs[backend] >= programs


def test_compare_flags_wrong_values_and_dtypes():
    """The comparison the fuzzer relies on does fail (ints exactly, floats to a tolerance)."""
    ok = fuzzrun.compare((np.array([1, 2]), np.array([0.5, 1.0])), [(1, 0.5), (2, 1.0 + 1e-12)], ("int", "float"))
    assert ok == []
    assert fuzzrun.compare(np.array([1, 3]), [1, 2], ("int",))
    assert fuzzrun.compare(np.array([0.5, 1.1]), [0.5, 1.0], ("float",))
    assert fuzzrun.compare(np.array([1.0, 2.0]), [1, 2], ("int",))  # a float where Python has an int
    assert fuzzrun.compare(np.array([1, 2]), [(1, 2), (2, 3)], ("int", "int"))  # one result, two expected


def test_generator_is_reproducible_and_programs_are_valid_python(tmp_path):
    import random

    for vectors in (False, True):
        a = fuzzgen.generate(random.Random(7), vectors=vectors)
        assert a.source == fuzzgen.generate(random.Random(7), vectors=vectors).source
        assert a.source != fuzzgen.generate(random.Random(8), vectors=vectors).source
        compile(a.source, "program.py", "exec")
    assert "np." not in fuzzgen.generate(random.Random(7)).source  # arrays only when asked for
    plain = fuzzgen.generate(random.Random(7), vectors=True).source
    assert "math." not in plain and "import math" not in plain  # the constructs of issue 29 too
    assert fuzzgen.generate(random.Random(7), vectors=True, features={}).source == plain
    with_all = fuzzgen.generate(random.Random(7), vectors=True, features=fuzzgen.FEATURES)
    assert with_all.source == fuzzgen.generate(random.Random(7), vectors=True, features=fuzzgen.FEATURES).source
    compile(with_all.source, "program.py", "exec")


# What each construct family of issue 29 writes (a regular expression each).
CONSTRUCTS = {
    "builtins": [r"\b(min|max)\([^()]*,", r"\b(min|max)\((v|w)\d+\)", r"\bdivmod\(", r"\bpow\([^()]*, \d+\)",
                 r"\bpow\(.*,.*,", r"\bround\(", r"\bint\(", r"\bfloat\(", r"\bbool\(", r"\bsum\(",
                 r"\b(any|all)\(", r"\bsorted\(", r"math\.sqrt\(abs\(", r"math\.floor\(", r"math\.ceil\(",
                 r"math\.isqrt\(abs\(", r"math\.gcd\(", r"math\.log\(abs\(", r"isinstance\(.*, int\)",
                 r"isinstance\(.*, float\)", r"len\(str\(", r'bin\(.*\)\.count\("1"\)'],
    "identity": [r"\) is True", r"is not False", r"is None", r"is not None"],
    "membership": [r" in \(", r" not in [\[(]", r" in (v|w|m|g|T)\d+\b", r" in range\("],
    "bits": [r"<<", r">>", r" & ", r" \| ", r" \^ ", r"~"],
    "bool_arith": [r"[+*-] \(.*(<|>|==|!=).*\)", r"\+= \("],
    "swaps": [r"^\s+(\w+\[[^=]*\]), (\w+\[[^=]*\]) = \2, \1$"],
    "for_vectors": [r"for \w+ in [vw]\d+:", r"for \w+, \w+ in enumerate\(", r"for \w+, \w+ in zip\(",
                    r"for \w+ in reversed\("],
    "inplace": [r"^    if d (>|>=) \d:\n\s+f\d\(d - 1, [vwmg]\d+", r"^\s+i\d+ = f\d\(d - 1, [vwmg]\d+"],
}


def test_generator_writes_every_python_construct():
    """Every family of fuzzgen.FEATURES shows up within a few hundred
    programs (with arrays and without)."""
    import random
    import re

    assert set(CONSTRUCTS) == set(fuzzgen.FEATURES)
    sources = [fuzzgen.generate(random.Random(seed), vectors=seed % 2 == 1, features=fuzzgen.FEATURES).source
               for seed in range(300)]
    text = "\n".join(sources)
    missing = [(family, pattern) for family, patterns in CONSTRUCTS.items() for pattern in patterns
               if not re.search(pattern, text, re.MULTILINE)]
    assert missing == []
    assert fuzzgen.parse_features("all,bits=0,swaps=0.5") == {
        **{k: v for k, v in fuzzgen.FEATURES.items() if k != "bits"}, "swaps": 0.5}
    assert fuzzgen.parse_features(fuzzgen.format_features(fuzzgen.FEATURES)) == fuzzgen.FEATURES
    assert fuzzgen.parse_features("none") == {} and fuzzgen.parse_features("membership") == {
        "membership": fuzzgen.FEATURES["membership"]}


def test_compare_flags_index_errors():
    """The batched call must raise IndexError exactly when an example's plain
    run does, naming those examples; array results compare per example."""
    raised = fuzzrun.Raised(1, "index 5 is out of bounds")
    message = "f0: example(s) [1] indexed out of range (f.py:3  v[i]); each stopped there"
    assert fuzzrun.compare_raised(message, [(1,), raised]) == []
    assert fuzzrun.compare_raised(None, [(1,), raised])  # no error, but one was due
    assert fuzzrun.compare_raised(message, [(1,), (2,)])  # an error, but none was due
    assert fuzzrun.compare_raised(message.replace("[1]", "[0, 1]"), [(1,), raised])  # the wrong examples
    assert fuzzrun.compare(np.array([[1, 2], [3, 4]]), [np.array([1, 2]), np.array([3, 4])], ("int[2]",)) == []
    assert fuzzrun.compare(np.array([[1, 2], [3, 5]]), [np.array([1, 2]), np.array([3, 4])], ("int[2]",))
