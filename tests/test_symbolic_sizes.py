"""Symbolic sizes (transpiler/sizes.py): one program serves every vector length.

The checked-in examples are called with several lengths on every backend,
frozen (no compiler may write), and the generated tree and lock must be
byte for byte what they were; programs of a test Context show the
fallback to a concrete program where a function computes with a size.
"""

import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from autobatch import Context
from tests.oracle import MODES
from transpiler import signature as S
from transpiler import sizes
from transpiler import types as T

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tree_digest():
    """sha256 of every file under generated/ and of the lock file."""
    digest = hashlib.sha256()
    paths = [os.path.join(ROOT, "autobatch.lock")]
    for folder, _, files in sorted(os.walk(os.path.join(ROOT, "generated"))):
        paths.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
    for path in paths:
        digest.update(path.encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


# ---- the signature algebra ------------------------------------------------


def test_generalize_names_sizes_in_order_and_shares_equal_ones():
    """Equal sizes share a symbol; 0 stays 0; dtypes and ranks stay."""
    concrete = S.parse("(float64[8], int64[8, 3], int64[0], int64[])")
    general = sizes.generalize(concrete)
    assert T.signature_text(general) == "(float64[n], int64[n, m], int64[0], int64[])"
    # One structure, one program: other sizes generalize to the same signature.
    assert sizes.generalize(S.parse("(float64[5], int64[5, 2], int64[0], int64[])")) == general
    assert sizes.generalize(S.parse("(float64[5], int64[6, 2], int64[0], int64[])")) != general
    assert T.signature_text(sizes.generalize(S.parse("(float64[2], int64[2, 2])"))) == "(float64[n], int64[n, n])"


def test_declared_symbols_are_renamed_canonically_and_text_agrees():
    declared = S.parse("(float64[d], int64[k, d])")
    assert T.signature_text(declared) == "(float64[n], int64[m, n])"
    for text in ("(int64[8], float64[8, 3])", "(float64[d], int64[8])", "([float32[3], int64[]], int64[0])"):
        assert sizes.generalize_text(text) == T.signature_text(sizes.generalize(S.parse(text)))


def test_probe_values_avoid_the_codes_literals():
    first = sizes.probe_values(2, {101, 103, 108})
    assert first == [113, 127]  # 107 and 109 are next to 108
    assert sizes.probe_values(2, {101, 103, 108}, skip=2) == [131, 137]


# ---- the checked-in examples: every length, one program -----------------

VECTOR_CALLS = {
    "insertion_sort": lambda n, rng: (rng.integers(0, 50, (6, n)),),
    "histogram": lambda n, rng: (rng.integers(0, 4, (6, n)), np.full(6, n)),
    "bisect_left": lambda n, rng: (np.sort(rng.integers(0, 50, (6, n)), axis=1), rng.integers(0, 50, 6)),
    "spiral": lambda n, rng: (rng.uniform(0.5, 2.0, (6, n)), rng.integers(0, 3, (6, n + 1)), rng.integers(1, 6, 6)),
    "predict": lambda n, rng: (rng.uniform(-1, 1, (6, n)),),
}


def _examples():
    from examples.search import bisect_left
    from examples.sort import histogram, insertion_sort
    from examples.tree import predict
    from examples.vectors import spiral

    return {f.__name__: f for f in (insertion_sort, histogram, bisect_left, spiral, predict)}


@pytest.mark.parametrize("mode", list(MODES))
def test_examples_run_every_length_without_a_new_program(mode):
    before = _tree_digest()
    functions = _examples()
    rng = np.random.default_rng(3)
    lengths = {"predict": (2, 5)}  # the tree tests features 0 and 1
    for name, make in VECTOR_CALLS.items():
        function = functions[name]
        function.context.frozen = True
        for n in lengths.get(name, (1, 9)):
            args = make(n, rng)
            got = function(*args, **MODES[mode])
            plain = function.context.plain(name)
            for b in range(6):
                want = plain(*(np.array(a[b]) for a in args))
                pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
                for batched, one in pairs:
                    np.testing.assert_allclose(np.asarray(batched)[b], one, err_msg=f"{name} n={n} example {b}")
    assert _tree_digest() == before


def test_the_sampler_has_one_program_per_function():
    path = os.path.join(ROOT, "generated", "examples", "nuts_np.py")
    with open(path) as f:
        header = [line for line in f if line.startswith("# autobatch: programs=")][0]
    programs = header.split("=", 1)[1].split("; ")
    assert sorted(p.split("(")[0] for p in programs) == ["nuts_chain", "nuts_step"]
    assert all("[n" in p for p in programs)


# ---- a Context of its own: generic programs and the concrete fallback ----

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-sizes-"))


@ctx.batch
def suffix_sums(v):
    out = v * 0.0
    total = 0.0
    for i in range(len(v) - 1, -1, -1):
        total += v[i]
        out[i] = total
    return out


@ctx.batch
def padded(v):
    out = np.zeros(len(v) + 1)
    for i in range(len(v)):
        out[i + 1] = out[i] + v[i]
    return out


@ctx.batch
def dot_until(u, w, limit):
    total = 0.0
    i = 0
    while i < len(u) and total < limit:
        total += u[i] * w[i]
        i += 1
    return total


@ctx.batch
def weighted_total(u, w):
    total = 0.0
    for i in range(len(u)):
        total += u[i] * w[i % len(w)]
    return total


@ctx.batch
def vector_depth(v, k):
    if k <= 0:
        return v
    return vector_depth(v * 0.5, k - 1) + v


def _programs(name, backend="np"):
    from transpiler import loader

    path = loader.module_path(ctx.generated_dir, "tests/test_symbolic_sizes.py", backend)
    header = loader.read_header(loader.split_header(loader.read(path))[0])
    return [p for p in header["programs"].split("; ") if p.startswith(name + "(")]


@pytest.mark.parametrize("mode", list(MODES))
def test_one_generic_program_for_every_length(mode):
    rng = np.random.default_rng(0)
    for n in (2, 5, 11):
        v = rng.normal(size=(4, n))
        got = np.asarray(suffix_sums(v, **MODES[mode]))
        np.testing.assert_allclose(got, np.cumsum(v[:, ::-1], axis=1)[:, ::-1])
    assert _programs("suffix_sums", "np" if mode == "numpy" else "tf" if "tf" in mode else "jax") == [
        "suffix_sums(float64[n])"
    ]


def test_a_function_that_computes_with_a_size_keeps_concrete_programs():
    rng = np.random.default_rng(1)
    for n in (3, 6):
        v = rng.normal(size=(5, n))
        got = padded(v, backend="numpy")
        want = np.concatenate([np.zeros((5, 1)), np.cumsum(v, axis=1)], axis=1)
        np.testing.assert_allclose(got, want)
    assert _programs("padded") == ["padded(float64[3])", "padded(float64[6])"]


SCRIPT = """
import sys
import numpy as np
from autobatch import Context

ctx = Context()


@ctx.batch
def two_smallest(v):
    s = np.sort(v)
    return s[0] + s[1]


v = np.random.default_rng(3).normal(size=(5, 7))
want = np.sort(v, axis=1)[:, :2].sum(axis=1)
for backend in ("numpy", "tensorflow", "jax"):
    print(backend, np.allclose(two_smallest(v, backend=backend), want, rtol=1e-15, atol=0))
"""


def test_a_concrete_program_runs_on_every_backend_in_one_process(tmp_path):
    # `s[1]` needs a size of 2 or more: the program is kept at the size it
    # was called with (its lock line says float64[7]).  A second backend's
    # first call in the same process found its module written at that size
    # and looked for the symbolic program in it (KeyError).
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "sizes"\n')
    (tmp_path / "two.py").write_text(SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("AUTOBATCH_FROZEN", None)
    out = subprocess.run(
        [sys.executable, "two.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["numpy", "True", "tensorflow", "True", "jax", "True"], out.stdout
    assert "two.py::two_smallest(float64[7])" in (tmp_path / "autobatch.lock").read_text()


def test_arguments_of_one_size_share_a_symbol_and_differing_sizes_get_another_program():
    rng = np.random.default_rng(2)
    u, w = rng.uniform(0, 1, (7, 6)), rng.uniform(0, 1, (7, 6))
    limit = rng.uniform(0.5, 2.0, 7)
    got = dot_until(u, w, limit, backend="numpy")
    plain = ctx.plain("dot_until")
    assert np.allclose(got, [plain(u[b], w[b], limit[b]) for b in range(7)])
    w9 = rng.uniform(0, 1, (7, 9))
    got = dot_until(u, w9, limit, backend="numpy")
    assert np.allclose(got, [plain(u[b], w9[b], limit[b]) for b in range(7)])
    assert _programs("dot_until") == [
        "dot_until(float64[n], float64[m], float64[])",
        "dot_until(float64[n], float64[n], float64[])",
    ]


def test_a_generic_entry_refuses_arguments_whose_shared_size_differs():
    from transpiler import loader

    dot_until(np.ones((2, 4)), np.ones((2, 4)), np.ones(2), backend="numpy")
    path = loader.module_path(ctx.generated_dir, "tests/test_symbolic_sizes.py", "np")
    module = loader.import_file(path, loader.read(path))
    shared = module.PROGRAMS["dot_until(float64[n], float64[n], float64[])"]
    with pytest.raises(TypeError, match="size n is 4 in argument u but 5 in argument w"):
        shared(np.ones((2, 4)), np.ones((2, 5)), np.ones(2))


@pytest.mark.parametrize("mode", ["numpy", "tf_graph", "jax"])
def test_recursion_stacks_vectors_of_a_symbolic_size(mode):
    rng = np.random.default_rng(4)
    for n in (1, 3, 8):
        v = rng.normal(size=(5, n))
        k = rng.integers(0, 4, 5)
        got = np.asarray(vector_depth(v, k, **MODES[mode]))
        plain = ctx.plain("vector_depth")
        np.testing.assert_allclose(got, [plain(v[b], k[b]) for b in range(5)])
    suffix = {"numpy": "np", "tf_graph": "tf", "jax": "jax"}[mode]  # the module this mode wrote
    text = open(
        __import__("transpiler").loader.module_path(ctx.generated_dir, "tests/test_symbolic_sizes.py", suffix)
    ).read()
    assert "def vector_depth_stack_bytes(*, size_n):" in text


def test_equal_sizes_run_the_program_of_unequal_ones_it_already_has():
    rng = np.random.default_rng(5)
    plain = ctx.plain("weighted_total")
    for n, m in ((4, 7), (5, 5), (3, 3)):
        u, w = rng.normal(size=(3, n)), rng.normal(size=(3, m))
        got = weighted_total(u, w, backend="numpy")
        np.testing.assert_allclose(got, [plain(u[b], w[b]) for b in range(3)])
    assert _programs("weighted_total") == ["weighted_total(float64[n], float64[m])"]


@ctx.batch
def padded_length(v):
    buf = np.zeros(max(len(v), 5))
    count = 0
    for i in range(len(buf)):
        count += 1
    return count


def test_a_shape_that_depends_on_which_side_of_a_constant_a_size_is_stays_concrete():
    """`np.zeros(max(len(v), 5))` has length len(v) for long vectors and 5 for
    short ones: one program for every size would give 3 for a vector of 3
    (it did, silently, when both probe sizes were above 5)."""
    plain = ctx.plain("padded_length")
    for n in (8, 3, 9, 2):
        got = padded_length(np.ones((2, n)), backend="numpy")
        assert got.tolist() == [plain(np.ones(n))] * 2, n
    assert all("[n]" not in p for p in _programs("padded_length"))
