"""The JAX backend beyond the oracle (tests/oracle.py runs every oracle test
on it): composition with jax.jit, jax.grad / jvp and jax.vmap, errors inside
a user's trace, block selection, what a JAX run imports, and the checked-in
`*_jax.py` modules.
"""

import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from autobatch_runtime import jax_backend as rt  # noqa: E402 - after the skip; turns on x64
import jax.numpy as jnp  # noqa: E402

from examples.collatz import collatz_steps  # noqa: E402
from examples.fib import fib  # noqa: E402
from examples.search import bisect_left  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from transpiler import Context, IterationLimitError, StackOverflowError, config, gate, loader  # noqa: E402

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-jax-"))


@ctx.batch
def poly(x, n):
    """1 + x + x**2 + ... + x**n, by recursion (1 where n <= 0)."""
    if n <= 0:
        return 1.0
    return 1.0 + x * poly(x, n - 1)


@ctx.batch
def halvings(x):
    """Per example, a loop of its own trip count (no recursion)."""
    count = 0
    while x > 1.0:
        x = x / 2.0
        count += 1
    return count


def plain_fib(n):
    return 1 if n <= 1 else plain_fib(n - 1) + plain_fib(n - 2)


X = np.array([0.5, 1.5, 2.0, -1.25])
N = np.array([0, 3, 5, 2])


def poly_derivative(x, n):
    return sum(k * x ** (k - 1) for k in range(1, n + 1))


def test_generated_entry_runs_inside_a_users_jit():
    n = np.array([3, 9, 1, 12])

    @jax.jit
    def twice(n):
        return 2 * fib(n, backend="jax")

    assert np.asarray(twice(n)).tolist() == [2 * plain_fib(v) for v in n]
    # the module's own entry, without a Context
    from generated.examples.fib_jax import fib as fib_entry

    assert np.asarray(jax.jit(fib_entry)(n)).tolist() == [plain_fib(v) for v in n]


def test_overflow_inside_a_users_jit_stops_the_computation():
    with pytest.raises(Exception, match=r"recursed deeper than max_stack_depth=3") as info:
        jax.jit(lambda n: fib(n, backend="jax", max_stack_depth=3))(np.array([2, 9])).block_until_ready()
    assert isinstance(info.value, jax.errors.JaxRuntimeError)


def test_overflow_and_iteration_limit_raise_after_an_eager_call():
    with pytest.raises(StackOverflowError, match=r"example\(s\) \[1\]"):
        fib(np.array([2, 9]), backend="jax", max_stack_depth=3)
    with pytest.raises(IterationLimitError, match="max_iterations=5"):
        fib(np.array([2, 9]), backend="jax", max_iterations=5)


def test_forward_mode_differentiates_through_the_while_loop():
    value, tangent = jax.jvp(
        lambda x: poly(x, N, backend="jax"), (jnp.asarray(X),), (jnp.ones(len(X)),)
    )
    assert np.allclose(value, [sum(x**k for k in range(n + 1)) for x, n in zip(X, N)])
    assert np.allclose(tangent, [poly_derivative(x, n) for x, n in zip(X, N)])


def test_reverse_mode_needs_max_iterations():
    def total(x, **options):
        return poly(x, N, backend="jax", **options).sum()

    gradient = jax.grad(lambda x: total(x, max_iterations=64))(jnp.asarray(X))
    assert np.allclose(gradient, [poly_derivative(x, n) for x, n in zip(X, N)])
    # A while_loop of unknown trip count: JAX's own refusal, as README says.
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(total)(jnp.asarray(X))


def test_vmap_of_a_batched_call_matches_each_row():
    rows = np.array([[1, 5, 9], [12, 0, 3]])
    got = jax.vmap(lambda n: fib(n, backend="jax"))(rows)
    assert np.asarray(got).tolist() == [[plain_fib(v) for v in row] for row in rows]
    x = np.array([[0.5, 40.0], [3.0, 1000.0]])
    got = jax.vmap(lambda x: halvings(x, backend="jax"))(x)
    assert np.asarray(got).tolist() == [[0, 6], [2, 10]]


def test_overflow_under_vmap_is_reported():
    with pytest.raises(Exception, match="recursed deeper than max_stack_depth=3"):
        jax.vmap(lambda n: fib(n, backend="jax", max_stack_depth=3))(
            np.array([[2, 9], [1, 1]])
        ).block_until_ready()


@pytest.mark.parametrize("selection", ["sweep", "switch", "masked"])
def test_every_block_selection_gives_the_same_results_and_blocks(selection, monkeypatch):
    monkeypatch.setattr(rt, "SELECTION", selection)
    monkeypatch.setattr(rt, "_COMPILED", {})
    n = np.arange(0, 13)
    result, profile = fib(n, backend="jax", profile=True)
    assert np.asarray(result).tolist() == [plain_fib(v) for v in n]
    _, numpy_profile = fib(n, backend="numpy", profile=True)
    # Each example runs the same blocks under every selection ...
    assert profile.block_active == numpy_profile.block_active
    if selection == "masked":
        # ... but "masked" runs every block on every trip, for the examples
        # waiting at it, so its trips group them differently.
        ran = [runs > 0 for runs in numpy_profile.block_runs]
        assert [runs > 0 for runs in profile.block_runs] == ran
        assert profile.block_runs != numpy_profile.block_runs
    else:
        assert profile.block_runs == numpy_profile.block_runs
    # A block that loops on itself ("masked" runs it MASKED_LOOPING_REPEATS
    # times a trip): Collatz's loop, some examples leaving it after 1 trip.
    x = np.array([1, 2, 3, 6, 7, 27, 97, 871])
    steps, profile = collatz_steps(x, backend="jax", profile=True)
    _, numpy_profile = collatz_steps(x, backend="numpy", profile=True)
    assert np.asarray(steps).tolist() == [0, 1, 7, 8, 16, 111, 118, 178]
    assert profile.block_active == numpy_profile.block_active
    v = np.sort(np.random.default_rng(0).integers(0, 40, (9, 16)), axis=1)
    x = np.arange(-2, 43, 5)
    want = [int(np.searchsorted(row, t)) for row, t in zip(v, x)]
    assert np.asarray(bisect_left(v, x, backend="jax")).tolist() == want


def test_stackless_recursion_is_refused_and_loops_run():
    with pytest.raises(RuntimeError, match="stackless mode runs recursive programs"):
        fib(np.array([3, 4]), backend="jax", stackless=True)
    assert np.asarray(halvings(np.array([0.5, 9.0]), backend="jax", stackless=True)).tolist() == [0, 4]


def test_xla_is_accepted_and_numpy_still_refuses_it():
    assert np.asarray(fib(np.array([5]), backend="jax", xla=True)).tolist() == [8]
    with pytest.raises(ValueError, match="xla=True needs the TensorFlow backend"):
        fib(np.array([5]), backend="numpy", xla=True)


def test_a_jax_run_imports_no_tensorflow():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from examples.fib import fib\n"
        "from generated.examples.collatz_jax import collatz_steps\n"
        "assert fib(np.array([3, 9]), backend='jax').tolist() == [3, 55]\n"
        "assert collatz_steps(np.array([1, 6])).tolist() == [0, 8]\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'tensorflow'))\n"
    )
    env = dict(os.environ, AUTOBATCH_FROZEN="1")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_importing_autobatch_and_running_numpy_imports_no_jax():
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import autobatch\n"
        "from examples.fib import fib\n"
        "assert fib(np.array([3, 9]), backend='numpy').tolist() == [3, 55]\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')))\n"
    )
    env = dict(os.environ, AUTOBATCH_FROZEN="1")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_every_example_but_nuts_has_a_jax_module_of_the_same_shape():
    files = {os.path.basename(p) for p in gate.generated_files(os.path.join(ROOT, "generated"))}
    for path in gate.generated_files(os.path.join(ROOT, "generated")):
        name = os.path.basename(path)
        if name.endswith("_np.py"):
            stem = name[: -len("_np.py")]
            assert (f"{stem}_jax.py" in files) == (stem != "nuts"), stem
    numpy_text = loader.read(os.path.join(ROOT, "generated", "examples", "vectors_np.py"))
    jax_text = loader.read(os.path.join(ROOT, "generated", "examples", "vectors_jax.py"))

    def body(text):  # past the header's hashes, the docstring's title and the import
        lines = loader.split_header(text)[1].splitlines()
        return [
            line for line in lines
            if "generated from" not in line and not line.startswith("from autobatch_runtime")
        ]

    assert body(numpy_text) == body(jax_text)


def test_source_backends_choose_a_files_backends(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.autobatch]\nbackends = ["numpy", "jax"]\n'
        '[tool.autobatch.source_backends]\n"pkg" = ["numpy"]\n"pkg/fast.py" = ["jax", "tensorflow"]\n'
    )
    loaded = config.load(str(tmp_path))
    assert loaded.backends_for("examples/fib.py") == ("numpy", "jax")
    assert loaded.backends_for("pkg/slow.py") == ("numpy",)
    assert loaded.backends_for("pkg/fast.py") == ("jax", "tensorflow")
    assert loaded.backends_for("pkgs/other.py") == ("numpy", "jax")
    (tmp_path / "pyproject.toml").write_text('[tool.autobatch]\nbackends = ["numpy", "jaxx"]\n')
    with pytest.raises(ValueError, match=r"unknown backend\(s\) \['jaxx'\]"):
        config.load(str(tmp_path))


def test_jax_modules_same_bytes_under_any_hash_seed():
    script = (
        "import sys; sys.path.insert(0, {root!r})\n"
        "from transpiler import config, regenerate\n"
        "[t] = [t for t in regenerate.targets(config.load({root!r}), ['examples/rotate.py'])\n"
        "       if t.backend.name == 'jax']\n"
        "print(regenerate.expected_text(t), end='')\n"
    )
    outputs = set()
    for seed in ("0", "7"):
        env = dict(os.environ, PYTHONHASHSEED=seed, TF_CPP_MIN_LOG_LEVEL="3")
        outputs.add(
            subprocess.run(
                [sys.executable, "-c", script.format(root=ROOT)],
                env=env, capture_output=True, text=True, check=True,
            ).stdout
        )
    assert len(outputs) == 1
    assert outputs.pop() == loader.read(os.path.join(ROOT, "generated", "examples", "rotate_jax.py"))


def test_max_batch_runs_jax_chunks_and_joins_them_with_jax():
    n = np.arange(10)
    got = fib(n, backend="jax", max_batch=4)
    assert isinstance(got, jax.Array)
    assert np.asarray(got).tolist() == [plain_fib(v) for v in n]
    result, profile = fib(n, backend="jax", max_batch=4, profile=True)
    assert len(profile.pieces) == 3 and profile.batch == 10
    with pytest.raises(StackOverflowError):
        fib(n, backend="jax", max_batch=4, max_stack_depth=3)


def test_traced_once_per_shape():
    x = np.array([0.5, 40.0, 3.0])
    assert np.asarray(halvings(x, backend="jax")).tolist() == [0, 6, 2]
    [function] = [f for key, f in rt._COMPILED.items() if key[0].__name__ == "halvings_program"]
    before = function._cache_size()
    halvings(x + 1.0, backend="jax")  # same shapes: no new trace
    assert function._cache_size() == before
    halvings(np.array([4.0, 6.0]), backend="jax")  # a new batch size: one more
    assert function._cache_size() == before + 1


@pytest.mark.parametrize("halt", [9, 100])  # counted by a compare / a scatter-add
@pytest.mark.parametrize("busiest", [False, True])
def test_jax_chooses_numpys_next_block(busiest, halt):
    from autobatch_runtime import numpy_backend

    rng = np.random.default_rng(7)
    cases = [rng.integers(0, halt + 1, size=n).astype(np.int32) for n in (1, 5, 40, 300)]
    cases += [np.array([4, 2, 2, 4, halt], np.int32), np.full(3, halt, np.int32)]
    choose = jax.jit(lambda pc: rt.next_block(pc, halt, busiest))
    for pc in cases:
        expected = numpy_backend.next_block(pc, halt, busiest)
        assert int(rt.next_block(jnp.asarray(pc), halt, busiest)) == expected, pc
        assert int(choose(jnp.asarray(pc))) == expected, pc


def test_the_jax_module_runs_with_the_compiler_and_tensorflow_blocked():
    script = textwrap.dedent(
        f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("transpiler", "templates", "black", "gast", "tensorflow"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {ROOT!r})
        import numpy as np
        from generated.examples import fib_jax as fib
        from autobatch_runtime.errors import StackOverflowError
        print(np.asarray(fib.fib(np.array([6, 7, 8, 9]))).tolist())
        try:
            fib.fib(np.array([30]), max_stack_depth=3)
        except StackOverflowError as error:
            print("overflow", "max_stack_depth=3" in str(error))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["[13, 21, 34, 55]", "overflow True"]


@ctx.batch
def running_max_gaps(v):
    """A loop over a vector with a subscript, a comparison and a store: the
    kinds of expression type inference evaluates (issue 31)."""
    best = v[0]
    gaps = 0
    for i in range(1, len(v)):
        if v[i] > best:
            gaps += i
            best = v[i]
    return best, gaps


def test_type_inference_compiles_almost_nothing():
    """On JAX type inference traces each expression (jax.eval_shape) instead
    of running it on concrete placeholders, where every operation was an
    XLA compilation of its own (24 for insertion_sort, twice that with
    symbolic sizes).  The few left are the mixing probes' scalar ops."""
    import jax.monitoring

    compiles = []

    def listener(name, seconds, **kwargs):
        if name.endswith("backend_compile_duration"):
            compiles.append(name)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        v = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]], np.float64)
        ctx.lowered_for_args("running_max_gaps", (v,), "jax")
        in_inference = len(compiles)
        best, gaps = running_max_gaps(v, backend="jax")  # the program itself compiles
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert len(compiles) > in_inference  # the listener sees compilations at all
    assert in_inference <= 8, f"{in_inference} XLA compilations during type inference"
    plain = ctx.plain("running_max_gaps")
    assert [tuple(plain(row)) for row in v] == list(zip(np.asarray(best), np.asarray(gaps)))
