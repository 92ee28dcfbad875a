"""`autobatch generate / check / diff`, freshness, frozen mode, atomic writes."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conftest import ROOT
from transpiler import StaleGeneratedCodeError, cli, loader

HELPERS = '''
from transpiler import Context

ctx = Context()


@ctx.batch
def step(n):
    return n * 2
'''

PROG = '''
import numpy as np

from pkg.helpers import ctx, step
from transpiler import TensorType


@ctx.batch(signature=[TensorType(np.int64, ())])
def twice_plus_one(n):
    return step(n) + 1
'''


def run_cli(project, *args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # the CLI quiets TensorFlow itself
    return subprocess.run(
        [sys.executable, "-m", "transpiler", *args, "--root", str(project)],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.autobatch]\nsources = ["pkg"]\nbackends = ["numpy"]\n'
    )
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "prog.py").write_text(PROG)
    return tmp_path


def module_file(project):
    return project / "generated" / "pkg" / "prog_np.py"


def test_generate_then_check_then_callee_edit_makes_caller_stale(project):
    assert run_cli(project, "check").returncode == 1  # missing
    done = run_cli(project, "generate")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # progress goes to stderr
    assert "wrote generated/pkg/prog_np.py" in done.stderr
    header = loader.read_header(module_file(project).read_text())
    assert header["functions"] == "pkg/helpers.py::step,pkg/prog.py::twice_plus_one"
    assert header["programs"] == "twice_plus_one(int64[])"
    # Success ends with one line saying what was done and vouched for.
    assert done.stderr.splitlines()[-1] == (
        "autobatch: wrote 1; 1 module(s), 1 program(s) under generated/ current"
    )
    current = run_cli(project, "check")
    assert (current.returncode, current.stdout) == (0, "")
    assert current.stderr == "autobatch: 1 module(s), 1 program(s) under generated/ current\n"
    again = run_cli(project, "generate")
    assert again.stderr.splitlines() == [
        "autobatch: nothing to write; 1 module(s), 1 program(s) under generated/ current"
    ]
    same = run_cli(project, "diff")
    assert (same.returncode, same.stdout) == (0, "")
    assert "no differences: 1 module(s)" in same.stderr

    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(HELPERS.replace("n * 2", "n * 3"))
    stale = run_cli(project, "check")
    assert stale.returncode == 1
    assert stale.stdout == ""  # the text is `diff`'s; check names the problem and the fix
    assert "generated/pkg/prog_np.py is stale" in stale.stderr
    assert "run `autobatch generate pkg/prog.py`" in stale.stderr
    changed = run_cli(project, "diff")
    assert changed.returncode == 1
    assert "--- generated/pkg/prog_np.py\n+++ generated/pkg/prog_np.py (expected)" in changed.stdout
    assert run_cli(project, "generate", "-q").returncode == 0
    assert run_cli(project, "check").returncode == 0


def test_hand_edited_module_is_not_overwritten_without_force(project):
    assert run_cli(project, "generate").returncode == 0
    path = module_file(project)
    edited = path.read_text() + "# a note of mine\n"
    path.write_text(edited)
    assert run_cli(project, "check").returncode == 1
    refused = run_cli(project, "generate")
    assert refused.returncode == 1 and "edited by hand" in refused.stderr
    assert path.read_text() == edited
    assert run_cli(project, "generate", "--force").returncode == 0
    assert run_cli(project, "check").returncode == 0


def test_usage_and_internal_errors(monkeypatch):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["frobnicate"])
    assert exit_info.value.code == 2

    from transpiler import gate

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(gate, "survey", broken)
    assert cli.main(["check", "--root", ROOT]) == 123


def test_frozen_mode_refuses_to_generate(project, monkeypatch):
    monkeypatch.chdir(project)  # a run from the project, which its Context writes to
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_FROZEN", "1")
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    # at import: decorating finds that no module holds the declared program
    with pytest.raises(StaleGeneratedCodeError, match=r"prog_np\.py is missing.*autobatch generate pkg/prog\.py"):
        from pkg import prog
    monkeypatch.delenv("AUTOBATCH_FROZEN")
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)  # pkg.helpers holds the frozen Context
    from pkg import prog

    assert not prog.ctx.frozen
    assert prog.twice_plus_one(np.array([1, 2]), backend="numpy").tolist() == [3, 5]
    prog.ctx.frozen = True  # now fresh: frozen mode imports it
    prog.ctx._entries.clear()
    assert prog.twice_plus_one(np.array([4]), backend="numpy").tolist() == [9]
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)


def test_fresh_module_loads_without_the_compiler():
    script = textwrap.dedent(
        """
        import sys
        BLOCKED = ("gast", "black", "transpiler.frontend", "transpiler.passes",
                   "transpiler.emit", "transpiler.pipeline", "transpiler.ir.builder")
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.startswith(BLOCKED):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {root!r})
        import numpy as np
        from examples.fib import fib, ctx
        ctx.frozen = True
        print(np.asarray(fib(np.array([6, 7, 8, 9]), backend="numpy")).tolist())
        """
    ).format(root=ROOT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[13, 21, 34, 55]"


def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "generated" / "x_np.py"
    loader.write_atomic(str(path), "old = 1\n", package_root=str(tmp_path / "generated"))
    assert not (tmp_path / "__init__.py").exists()  # nothing above the generated folder

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        loader.write_atomic(str(path), "new = 2\n")
    assert path.read_text() == "old = 1\n"
    assert sorted(os.listdir(path.parent)) == ["__init__.py", "x_np.py"]


def test_two_processes_generating_at_once_end_with_a_correct_file(project):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "transpiler", "generate", "--root", str(project)]
    procs = [subprocess.Popen(cmd, env=env, cwd=project, stderr=subprocess.PIPE) for _ in range(2)]
    assert [p.wait() for p in procs] == [0, 0]
    assert run_cli(project, "check").returncode == 0
    assert not [f for f in os.listdir(module_file(project).parent) if f.endswith(".tmp")]


def test_check_is_a_gate_missing_orphan_unreached_and_bad_lock_lines(project):
    assert run_cli(project, "generate", "-q").returncode == 0
    assert run_cli(project, "check").returncode == 0
    module_file(project).unlink()
    missing = run_cli(project, "check", "-q")
    assert missing.returncode == 1
    assert "generated/pkg/prog_np.py is missing; run `autobatch generate pkg/prog.py`" in missing.stderr
    assert run_cli(project, "generate", "-q").returncode == 0

    # A new batched function that no declared program reaches.
    prog = project / "pkg" / "prog.py"
    prog.write_text(PROG + "\n\n@ctx.batch\ndef extra(n):\n    return n - 1\n")
    unreached = run_cli(project, "check", "-q")
    assert unreached.returncode == 1
    assert "pkg/prog.py::extra is batched but no declared program reaches it" in unreached.stderr
    assert "autobatch.lock" in unreached.stderr
    (project / "autobatch.lock").write_text("pkg/prog.py::extra(int64[])\n")
    assert run_cli(project, "generate", "-q").returncode == 0
    header = loader.read_header(module_file(project).read_text())
    assert header["programs"] == "extra(int64[]); twice_plus_one(int64[])"
    assert run_cli(project, "check").returncode == 0

    # A module no input asks for.
    orphan = project / "generated" / "pkg" / "gone_np.py"
    orphan.write_text("# autobatch: source=pkg/gone.py\n")
    stray = run_cli(project, "check", "-q")
    assert stray.returncode == 1 and "generated/pkg/gone_np.py is an orphan" in stray.stderr
    assert run_cli(project, "generate", "-q").returncode == 0
    assert not orphan.exists()

    # A lock line naming no batched function.
    (project / "autobatch.lock").write_text(
        "pkg/prog.py::extra(int64[])\npkg/prog.py::missing(int64[])\n"
    )
    bad = run_cli(project, "check", "-q")
    assert bad.returncode == 1
    assert "`pkg/prog.py::missing(int64[])` names no batched function of pkg/prog.py" in bad.stderr


def test_check_suggests_force_after_a_hand_edit_and_diff_exits_1(project):
    assert run_cli(project, "generate", "-q").returncode == 0
    assert run_cli(project, "diff").returncode == 0
    path = module_file(project)
    path.write_text(path.read_text() + "# mine\n")
    edited = run_cli(project, "check", "-q")
    assert edited.returncode == 1
    assert "run `autobatch generate --force pkg/prog.py`" in edited.stderr
    changed = run_cli(project, "diff")
    assert changed.returncode == 1 and "-# mine" in changed.stdout


def test_check_of_a_current_tree_imports_neither_tensorflow_nor_black(project):
    assert run_cli(project, "generate", "-q").returncode == 0
    script = (
        "import sys, time\n"
        "from transpiler import cli\n"
        "start = time.perf_counter()\n"
        f"status = cli.main(['check', '--root', {str(project)!r}])\n"
        "print(status, 'tensorflow' in sys.modules, 'black' in sys.modules,"
        " time.perf_counter() - start)\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=project
    )
    status, tf, black, seconds = out.stdout.split()
    assert (status, tf, black) == ("0", "False", "False"), out.stderr
    assert float(seconds) < 1.0


DEV = """
from transpiler import Context

ctx = Context()


@ctx.batch
def triple(n):
    return n * 3
"""


def test_a_development_call_appends_to_the_lock_file(project, monkeypatch):
    (project / "pkg" / "dev.py").write_text(DEV)
    monkeypatch.chdir(project)  # a development run, from the project it writes to
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.delenv("AUTOBATCH_FROZEN", raising=False)
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import dev

    dev.ctx.frozen = True
    with pytest.raises(StaleGeneratedCodeError, match=r"add the line `pkg/dev\.py::triple\(int64\[\]\)` to autobatch\.lock"):
        dev.triple(np.array([1, 2]), backend="numpy")
    dev.ctx.frozen = False
    assert dev.triple(np.array([1, 2]), backend="numpy").tolist() == [3, 6]
    lock = (project / "autobatch.lock").read_text()
    assert "pkg/dev.py::triple(int64[])\n" in lock
    written = (project / "generated" / "pkg" / "dev_np.py").read_text()
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    # The call's module is what the CLI makes from the inputs, twice over.
    assert run_cli(project, "generate", "-q").returncode == 0
    assert (project / "generated" / "pkg" / "dev_np.py").read_text() == written
    assert run_cli(project, "check").returncode == 0
    shutil.rmtree(project / "generated")
    assert run_cli(project, "generate", "-q").returncode == 0
    assert (project / "generated" / "pkg" / "dev_np.py").read_text() == written


LOCAL_FUNCTIONS = """
import numpy as np

from transpiler import Context


def first_test():
    ctx = Context()

    @ctx.batch
    def function(x):
        return x + 1

    return function(np.array([1, 2]), backend="numpy")


def second_test():
    ctx = Context()

    @ctx.batch
    def function(a, b):
        return a * b

    return function(np.array([3]), np.array([4]), backend="numpy")
"""


def test_functions_defined_inside_functions_build_into_the_cache_not_the_lock(
    project, monkeypatch, tmp_path
):
    # Issue 35: the predecessor's tests define `function` in test after test,
    # with other parameters.  A lock line names a function by file and name,
    # so the second made the first's line fail to regenerate; such functions
    # are built as closures are, one cache module per program.
    (project / "pkg" / "local.py").write_text(LOCAL_FUNCTIONS)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AUTOBATCH_FROZEN", raising=False)
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import local

    for _ in range(2):
        assert local.first_test().tolist() == [2, 3]
        assert local.second_test().tolist() == [12]
    lock = project / "autobatch.lock"
    assert not lock.exists() or "local.py" not in lock.read_text()
    assert not (project / "generated" / "pkg" / "local_np.py").exists()
    assert len(list((tmp_path / "cache").rglob("*local_np_*.py"))) == 2
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)


CALLABLE_OBJECTS = """
import numpy as np

from transpiler import Context


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def make(scale):
    ctx = Context()

    @ctx.batch
    def scaled(x):
        return scale(x) + 1

    return scaled
"""


def test_closures_over_callable_objects_of_one_class_share_one_cache_module(
    project, monkeypatch, tmp_path
):
    # Issue 35: TFP's NUTS closes over a SeedStream object, whose repr holds
    # its address; each kernel had keyed, built and written a module of its own.
    (project / "pkg" / "objects.py").write_text(CALLABLE_OBJECTS)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AUTOBATCH_FROZEN", raising=False)
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import objects

    for k in (2, 3, 5):
        assert objects.make(objects.Scale(k))(np.array([1, 4]), backend="numpy").tolist() == [k + 1, 4 * k + 1]
    assert len(list((tmp_path / "cache").rglob("*objects_np_*.py"))) == 1
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)


COUNTING = """
import numpy as np

from transpiler import Context


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x + self.calls


def make(counter):
    ctx = Context()

    @ctx.batch
    def counted(x):
        return counter(x) * 2

    return counted
"""


def test_what_compiling_runs_leaves_closed_over_objects_as_it_found_them(
    project, monkeypatch, tmp_path
):
    # Issue 35: type inference runs each primitive; TFP's NUTS draws its
    # seeds from a SeedStream it closes over, so a call that compiled drew
    # other seeds than one that found its program in the cache.
    (project / "pkg" / "counting.py").write_text(COUNTING)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AUTOBATCH_FROZEN", raising=False)
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import counting

    compiled, cached = counting.Counter(), counting.Counter()
    first = counting.make(compiled)(np.array([10, 20]), backend="numpy").tolist()
    second = counting.make(cached)(np.array([10, 20]), backend="numpy").tolist()
    assert first == second == [22, 42]
    assert compiled.calls == cached.calls == 1
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)


def test_tensorflow_start_up_lines_do_not_reach_the_terminal(project):
    done = run_cli(project, "generate")
    assert done.returncode == 0
    assert "absl" not in done.stderr and "oneDNN" not in done.stderr, done.stderr
    assert "I0000" not in done.stderr


def test_profile_reports_user_mistakes_with_exit_1(capsys):
    assert cli.main(["profile", "examples.nonexistent:fib", "--args", "[3]"]) == 1
    assert "cannot import module 'examples.nonexistent'" in capsys.readouterr().err
    assert cli.main(["profile", "examples.fib:nope", "--args", "[3]"]) == 1
    assert "has no function 'nope'" in capsys.readouterr().err
    deep = ["profile", "examples.fib:fib", "--args", "[30]", "--backend", "numpy"]
    assert cli.main(deep + ["--max-stack-depth", "2"]) == 1
    assert "StackOverflowError" in capsys.readouterr().err


def test_bench_without_matplotlib_claims_no_plot(tmp_path, monkeypatch, capsys):
    """`tools/bench.py --quick` prints `plot: PATH` only for a plot it wrote."""
    from tools import bench

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import raises ImportError
    path = tmp_path / "bench.png"
    rows = [("fib", 16, "xla", 0.0, 0.001)]
    assert bench._plot(rows, str(path)) is False
    assert not path.exists()
    assert f"no plot written to {path}" in capsys.readouterr().err


CLOSURE = '''
import numpy as np
from transpiler import Context, TensorType

ctx = Context()


def make_scaled(factor, offset):
    """A factory: each call makes a batched function closing over its values."""

    @ctx.batch(signature=[TensorType(np.int64, ())])
    def scaled(n):
        total = offset
        while n > 0:
            total = total + factor
            n = n - 1
        return total

    return scaled


triple = make_scaled(3, 0)  # what `autobatch generate` compiles the program from
'''


def test_a_closure_generates_stably_and_serves_closures_of_other_values(project, monkeypatch):
    """`generate` writes a factory taking the closed-over values; a second
    `generate` and `check` find nothing to do; in one process, two closures of
    the factory with different values run the one generated program."""
    (project / "pkg" / "closure.py").write_text(CLOSURE)
    assert run_cli(project, "generate").returncode == 0
    path = project / "generated" / "pkg" / "closure_np.py"
    text = path.read_text()
    assert "\ndef make_scaled(offset, factor):\n" in text  # in the order the body reads them
    assert 'CLOSURES = {"scaled(int64[])": ("offset", "factor")}' in text
    again = run_cli(project, "generate")
    assert again.returncode == 0 and "wrote" not in again.stderr
    assert path.read_text() == text
    assert run_cli(project, "check").returncode == 0

    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_FROZEN", "1")  # generating again would raise
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import closure

    n = np.array([0, 1, 4])
    by_five = closure.make_scaled(5, 100)
    assert closure.triple(n, backend="numpy").tolist() == [0, 3, 12]
    assert by_five(n, backend="numpy").tolist() == [100, 105, 120]
    assert closure.triple(n, backend="numpy").tolist() == [0, 3, 12]
    assert path.read_text() == text


def test_a_closure_whose_factory_import_does_not_call_is_refused_with_the_fix(project):
    """The compiler needs a closure's values; `generate` says which factory to
    call at module level, and leaves the module as it was."""
    (project / "pkg" / "closure.py").write_text(CLOSURE.replace("triple = make_scaled(3, 0)", ""))
    (project / "autobatch.lock").write_text("pkg/closure.py::scaled(int64[])\n")
    refused = run_cli(project, "generate")
    assert refused.returncode == 1
    assert "scaled (in make_scaled) closes over values of a factory" in refused.stderr
    assert '"pkg/closure.py::make_scaled" = {' in refused.stderr
    assert "[tool.autobatch.closures]" in refused.stderr
    assert not (project / "generated" / "pkg" / "closure_np.py").exists()


# A factory that must not run at build time, whose closures call each other
# and a plain nested helper, decorated by a Context the factory makes.
FACTORY = '''
import numpy as np
from transpiler import Context, TensorType


def halve(x):
    return x // 2


def make_walk(step, limit=10, context=None):
    """Counts the steps of a walk toward zero; `step` is a function."""
    if context is None:
        raise RuntimeError("the factory ran")
    ctx = context

    def near(n):
        return n < limit

    @ctx.batch(signature=[TensorType(np.int64, ())])
    def walk(n):
        if near(n):
            return 0
        return 1 + walk(step(n))

    @ctx.batch
    def twice(n):
        return walk(n) + walk(n + limit)

    return walk, twice
'''


def plain_walk(step, limit, n):
    return 0 if n < limit else 1 + plain_walk(step, limit, step(n))


def declare(project, table):
    with open(project / "pyproject.toml", "a") as f:
        f.write("\n[tool.autobatch.closures]\n" + table + "\n")


def test_a_declared_closure_is_generated_without_calling_its_factory(project, monkeypatch):
    """`[tool.autobatch.closures]` gives the values: `generate` builds the
    closures from the factory's code (its body, which raises, never runs),
    the parameter default fills `limit`, a second `generate` and `check` find
    nothing to do, and at run time factories called with other values (and
    another Context) use the module as it is, frozen."""
    (project / "pkg" / "walks.py").write_text(FACTORY)
    (project / "autobatch.lock").write_text("pkg/walks.py::twice(int64[])\n")
    declare(project, '"pkg/walks.py::make_walk" = { step = "pkg.walks:halve" }')
    done = run_cli(project, "generate")
    assert done.returncode == 0, done.stderr
    path = project / "generated" / "pkg" / "walks_np.py"
    text = path.read_text()
    assert "walk(int64[])" in text and "twice(int64[])" in text
    again = run_cli(project, "generate")
    assert again.returncode == 0 and "wrote" not in again.stderr, again.stderr
    assert path.read_text() == text
    assert run_cli(project, "check").returncode == 0

    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_FROZEN", "1")
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import walks
    from transpiler import Context

    n = np.array([0, 9, 10, 37, 400])
    by_half = walks.make_walk(walks.halve, context=Context())
    by_three = walks.make_walk(lambda x: x - 3, limit=5, context=Context())
    for (walk, twice), step, limit in [(by_half, walks.halve, 10), (by_three, lambda x: x - 3, 5)]:
        expected = [plain_walk(step, limit, int(v)) for v in n]
        assert walk(n, backend="numpy", max_stack_depth=256).tolist() == expected
        doubled = [a + plain_walk(step, limit, int(v) + limit) for a, v in zip(expected, n)]
        assert twice(n, backend="numpy", max_stack_depth=256).tolist() == doubled
    assert path.read_text() == text


@pytest.mark.parametrize(
    "table, message",
    [
        ("{ limit = 3 }", "walk closes over 'step', which the declaration does not give"),
        ('{ step = "pkg.walks:nothing" }', "cannot import 'pkg.walks:nothing'"),
        ('{ step = "halve" }', "is neither a number nor `module:name`"),
        ('{ step = "pkg.walks:halve", stride = 2 }', "declares ['stride'], which no function"),
    ],
)
def test_a_closure_declaration_that_cannot_build_is_refused_with_the_fix(project, table, message):
    (project / "pkg" / "walks.py").write_text(FACTORY)
    declare(project, f'"pkg/walks.py::make_walk" = {table}')
    refused = run_cli(project, "generate")
    assert refused.returncode == 1
    assert "pkg/walks.py: [tool.autobatch.closures] 'make_walk'" in refused.stderr
    assert message in refused.stderr
    assert "internal error" not in refused.stderr
    assert not (project / "generated" / "pkg" / "walks_np.py").exists()


def test_a_declared_closure_joins_the_module_level_context_it_names(project, monkeypatch):
    """`make_scaled`'s closure is decorated by the module's own `ctx`: built
    from the declaration, it joins that Context, and the module it makes is
    the one a later call of the factory finds fresh."""
    (project / "pkg" / "closure.py").write_text(
        CLOSURE.replace("triple = make_scaled(3, 0)", "")
    )
    declare(project, '"pkg/closure.py::make_scaled" = { factor = 3, offset = 0 }')
    done = run_cli(project, "generate")
    assert done.returncode == 0, done.stderr
    assert run_cli(project, "check").returncode == 0

    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("AUTOBATCH_FROZEN", "1")
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import closure

    assert closure.make_scaled(2, 1)(np.array([0, 3]), backend="numpy").tolist() == [1, 7]


def test_a_factory_both_called_at_import_and_declared_is_refused(project):
    (project / "pkg" / "closure.py").write_text(CLOSURE)
    declare(project, '"pkg/closure.py::make_scaled" = { factor = 3, offset = 0 }')
    refused = run_cli(project, "generate")
    assert refused.returncode == 1
    assert "['scaled'] are batched when the file is imported" in refused.stderr
