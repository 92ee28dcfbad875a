"""The runtime package: one versioned place that generated modules import.

A generated module holds only its programs and reaches every helper as
`rt.<name>`; it imports where the compiler is not installed, refuses a
runtime of another version at import time, and `autobatch check` reports a
module that asks for another version.
"""

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autobatch_runtime
from autobatch_runtime import RUNTIME_VERSION
from tests.test_cli import module_file, project, run_cli  # noqa: F401 (fixture)
from transpiler import Context, loader
from transpiler.emit import program as program_emitter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = os.path.join(ROOT, "generated")

# Blocks the compiler and its dependencies: a finder that refuses them.
# (TensorFlow imports gast itself, so gast is blocked for NumPy modules only.)
BLOCKER = """
import sys
BLOCKED = ("transpiler", "templates", "black") + EXTRA
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
"""


@pytest.mark.parametrize("suffix", ["np", "tf"])
def test_generated_modules_run_with_the_compiler_blocked(suffix):
    """Only autobatch_runtime and NumPy (+ TensorFlow) are needed: the module
    imports, runs, and raises the runtime's own errors."""
    script = BLOCKER.replace("EXTRA", '("gast",)' if suffix == "np" else "()") + textwrap.dedent(
        f"""
        sys.path.insert(0, {ROOT!r})
        import numpy as np
        from generated.examples import fib_{suffix} as fib
        from autobatch_runtime.errors import StackOverflowError
        print(np.asarray(fib.fib(np.array([6, 7, 8, 9]))).tolist())
        print(np.asarray(fib.fib_stackless(np.array([6, 7]))).tolist())
        try:
            fib.fib(np.array([30]), max_stack_depth=3)
        except StackOverflowError as error:
            print("overflow", "max_stack_depth=3" in str(error))
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("transpiler", "black")))
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:4] == ["[13, 21, 34, 55]", "[13, 21]", "overflow True", "[]"]


def test_the_compiler_raises_the_runtimes_error_classes():
    from transpiler import errors

    assert errors.StackOverflowError is autobatch_runtime.errors.StackOverflowError
    assert errors.IterationLimitError is autobatch_runtime.errors.IterationLimitError
    assert errors.StackMemoryError is autobatch_runtime.errors.StackMemoryError


def test_every_generated_module_states_the_runtime_version_it_imports():
    for folder, _, files in os.walk(GENERATED):
        for name in sorted(f for f in files if f.endswith(("_np.py", "_tf.py"))):
            text = loader.read(os.path.join(folder, name))
            backend = "tensorflow" if name.endswith("_tf.py") else "numpy"
            assert loader.read_header(text)["runtime"] == str(RUNTIME_VERSION), name
            assert f"from autobatch_runtime import {backend}_backend as rt\n" in text, name
            assert f"\nrt.require({RUNTIME_VERSION}, __name__)\n" in text, name


def _import_as(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_for_another_runtime_version_fails_at_import(tmp_path):
    with open(os.path.join(GENERATED, "examples", "gcd_np.py"), encoding="utf-8") as f:
        text = f.read()
    assert _import_as(_written(tmp_path, "same.py", text), "same_version").gcd(12, 18).tolist() == [6]
    newer = text.replace(
        f"rt.require({RUNTIME_VERSION}, __name__)", f"rt.require({RUNTIME_VERSION + 1}, __name__)"
    )
    with pytest.raises(ImportError) as info:
        _import_as(_written(tmp_path, "newer.py", newer), "newer_version")
    message = str(info.value)
    assert isinstance(info.value, autobatch_runtime.RuntimeVersionError)
    assert f"generated for autobatch_runtime version {RUNTIME_VERSION + 1}" in message
    assert f"is version {RUNTIME_VERSION}" in message and "autobatch generate" in message


def _written(folder, name, text):
    path = folder / name
    path.write_text(text)
    return str(path)


def test_check_reports_a_module_that_needs_another_runtime(project):  # noqa: F811
    assert run_cli(project, "generate").returncode == 0
    path = module_file(project)
    text = path.read_text()
    path.write_text(text.replace(f"runtime={RUNTIME_VERSION}\n", f"runtime={RUNTIME_VERSION + 1}\n", 1))
    refused = run_cli(project, "check")
    assert refused.returncode == 1
    assert (
        f"generated/pkg/prog_np.py needs autobatch_runtime version {RUNTIME_VERSION + 1}, "
        f"but the installed runtime is version {RUNTIME_VERSION}" in refused.stderr
    )
    assert run_cli(project, "generate").returncode == 0
    assert path.read_text() == text
    assert run_cli(project, "check").returncode == 0


USER_NAMES = '''
import numpy as np
from transpiler import Context

ctx = Context(generated_dir=GENERATED_DIR)


def select(x):
    """A user's primitive that shares a runtime helper's name."""
    return x * 2


@ctx.batch
def run(n):
    """A batched function named like the runtime's driver, with locals named
    like helpers (`push`, `where`) and like the runtime's module (`rt`)."""
    push = 0
    rt = 1
    while n > 0:
        where = select(n)
        push = push + where
        n = n - 1
        rt = rt + 1
    return push + rt
'''


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_user_names_may_be_runtime_helper_names(tmp_path, monkeypatch, backend):
    """Helpers are reached as `rt.<name>`, so a user function called `select`
    or `run` keeps its name, and a local called `rt` is renamed."""
    package = tmp_path / f"names_{backend}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = USER_NAMES.replace("GENERATED_DIR", repr(str(tmp_path / "generated")))
    (package / "prog.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(f"names_{backend}.prog")
    n = np.array([0, 1, 3])
    # run(n) = 2 * (1 + ... + n) + 1 + n
    assert np.asarray(module.run(n, backend=backend)).tolist() == [1, 4, 16]
    suffix = "tf" if backend == "tensorflow" else "np"
    (path,) = (tmp_path / "generated").rglob(f"prog_{suffix}.py")
    generated = path.read_text()
    assert f"from names_{backend}.prog import select\n" in generated
    assert "\ndef run(n, **options):" in generated
    assert "rt_ = " in generated and "rt.select(" in generated


def test_reserved_names_hold_only_what_generated_code_binds():
    """No runtime helper's name is reserved any more: only the locals the
    templates bind and the runtime's module name."""
    assert program_emitter.RUNTIME in program_emitter.RESERVED
    for helper in ("select", "push", "run", "where", "take", "merged", "checked"):
        assert helper not in program_emitter.RESERVED


def test_the_runtime_imports_nothing_of_the_compiler():
    folder = os.path.dirname(autobatch_runtime.__file__)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            for word in ("transpiler", "gast", "black", "templates"):
                assert f"import {word}" not in text and f"from {word}" not in text, name


@pytest.mark.parametrize("halt", [9, 100])  # counted by a compare / a scatter-add
@pytest.mark.parametrize("busiest", [False, True])
def test_both_runtimes_choose_the_same_next_block(busiest, halt):
    """The NumPy and TensorFlow drivers run the same blocks: the busiest (the
    lowest of equal counts) or the lowest pending; `halt` once none waits."""
    from autobatch_runtime import numpy_backend, tensorflow_backend

    rng = np.random.default_rng(7)
    cases = [rng.integers(0, halt + 1, size=n).astype(np.int32) for n in (1, 5, 40, 300)]
    cases += [np.array([4, 2, 2, 4, halt], np.int32), np.full(3, halt, np.int32)]
    for pc in cases:
        expected = numpy_backend.next_block(pc, halt, busiest)
        chosen = tensorflow_backend.next_block(tf_constant(pc), halt, busiest)
        assert int(chosen) == expected, pc
        waiting = np.bincount(pc, minlength=halt + 1)[:halt]
        if busiest and waiting.any():
            assert waiting[expected] == waiting.max() and expected == int(np.argmax(waiting))
    assert numpy_backend.next_block(np.array([4, 2, 2, 4, halt], np.int32), halt, True) == 2
    for pc in cases:  # and under XLA, as the driver runs it
        import tensorflow as tf

        choose = tf.function(
            lambda pc: tensorflow_backend.next_block(pc, halt, busiest), jit_compile=True
        )
        assert int(choose(tf_constant(pc))) == numpy_backend.next_block(pc, halt, busiest)


def tf_constant(array):
    import tensorflow as tf

    return tf.constant(array)
