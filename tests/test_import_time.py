"""Decorating happens at import: what it checks, and what it leaves to the first call (issue 36).

- A construct the fence or the builder refuses raises when the module is
  imported, naming the user's file and line, as Python's own syntax errors
  do; the rest of the module never runs.
- What only the finished module decides (a callee, a constant or a closure
  cell bound further down) is never refused early: such modules import and
  run as before.
- A function whose current text its generated modules were built from
  imports without the compiler (gast, black, transpiler.pipeline) and
  without TensorFlow.
- Frozen, a declared program that no module can run raises at import with
  the command that regenerates it; in development it is rebuilt by the
  first call that needs it, not at import.

Modules under tmp_path write to a folder named `out` (a Context's own
folder, no lock file); the projects have a pyproject.toml and run in
subprocesses started in them, as a user's do.
"""

import importlib.util
import itertools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conftest import ROOT
from transpiler import Context, StaleGeneratedCodeError, UnsupportedSyntaxError

_counter = itertools.count()

COMPILER = ("gast", "black", "transpiler.pipeline", "transpiler.frontend.fence")


def write(tmp_path, body):
    """A module holding a Context writing to tmp_path/out, then `body`: (name, path)."""
    name = f"autobatch_import_case_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    header = (
        "import numpy as np\n"
        "from autobatch import Context\n\n"
        f"ctx = Context(generated_dir={str(tmp_path / 'out')!r})\n"
    )
    path.write_text(header + textwrap.dedent(body) + "\nRAN_TO_THE_END = True\n")
    return name, path


def load(monkeypatch, name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def line_of(path, text):
    return next(k for k, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# ---- refusals at import -------------------------------------------------------


def test_a_refused_construct_raises_at_import_naming_file_and_line(tmp_path, monkeypatch):
    name, path = write(
        tmp_path,
        """
        @ctx.batch
        def f(n):
            total = later(n)
            try:
                total = total + 1
            except ValueError:
                pass
            return total


        @ctx.batch
        def later(n):
            return n
        """,
    )
    with pytest.raises(UnsupportedSyntaxError) as info:
        load(monkeypatch, name, path)
    err = info.value
    assert err.filename == str(path)
    assert err.lineno == line_of(path, "try:")
    assert "`try` statement is not supported in batched function 'f'" in err.msg
    # at import: the module stopped at the decorator, nothing was generated
    assert "RAN_TO_THE_END" not in vars(sys.modules[name])
    assert not (tmp_path / "out").exists()


def test_python_reports_it_as_a_syntax_error_of_the_users_file(tmp_path):
    # what the user sees: `python -c "import mod"` fails at the decorator,
    # the traceback ending at their file and line, not in the compiler
    name, path = write(
        tmp_path,
        """
        @ctx.batch
        def f(n):
            with open("x") as handle:
                n = n + 1
            return n
        """,
    )
    done = subprocess.run(
        [sys.executable, "-c", f"import {name}\nprint('imported')"],
        cwd=tmp_path, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert done.returncode == 1
    assert "imported" not in done.stdout
    assert f'File "{path}", line {line_of(path, "with open")}' in done.stderr
    assert "UnsupportedSyntaxError: `with` statement is not supported" in done.stderr
    assert "transpiler/frontend" not in done.stderr  # no compiler frames


def test_a_refusal_by_the_builder_raises_at_import(tmp_path, monkeypatch):
    # a call of a batched function above with a parameter it lacks: the
    # builder's refusal, which needs the callee's parameters only
    name, path = write(
        tmp_path,
        """
        @ctx.batch
        def step(n):
            return n + 1


        @ctx.batch
        def f(n):
            return step(m=n)
        """,
    )
    with pytest.raises(UnsupportedSyntaxError, match="'step' has no parameter 'm'") as info:
        load(monkeypatch, name, path)
    assert info.value.lineno == line_of(path, "step(m=n)")


def test_a_function_under_another_decorator_is_checked_as_it_is_written(tmp_path, monkeypatch):
    name, path = write(
        tmp_path,
        """
        import functools


        def logged(function):
            @functools.wraps(function)
            def wrapper(*args):
                return function(*args)
            return wrapper


        @ctx.batch
        @logged
        def f(n, table=np.zeros(3)):
            return n
        """,
    )
    with pytest.raises(UnsupportedSyntaxError, match="default value of parameter 'table'") as info:
        load(monkeypatch, name, path)
    assert info.value.lineno == line_of(path, "def f(")


def test_a_refused_redefinition_keeps_the_function_it_would_replace(tmp_path):
    ctx = Context(generated_dir=str(tmp_path / "out"))

    def define(good):
        if good:
            def f(n):
                return n + 1
        else:
            def f(n):
                assert n > 0
                return n
        return ctx.batch(f)

    first = define(True)
    with pytest.raises(UnsupportedSyntaxError, match="`assert` statement"):
        define(False)
    assert ctx.function_names() == ["f"]
    assert first(np.array([1, 2]), backend="numpy").tolist() == [2, 3]


# ---- what only the finished module decides waits for the call -------------


def test_names_bound_further_down_never_fail_at_decoration(tmp_path, monkeypatch):
    name, path = write(
        tmp_path,
        """
        @ctx.batch
        def f(n):
            total = 0
            for k in range(COUNT):          # a constant assigned below
                total = total + TABLE[k]    # a table assigned below
            return total + g(n)             # a batched function defined below


        @ctx.batch
        def g(n):
            return [n for _ in range(COUNT)][0] * 2


        COUNT = 3
        TABLE = np.array([1, 2, 3])


        def make(step):
            inner = Context(generated_dir=ctx.generated_dir)

            @inner.batch
            def down(n):                    # calls `up`, a closure cell filled below
                if n <= 0:
                    return 0
                return up(n - step)

            @inner.batch
            def up(n):
                return down(n) + 1

            return down


        def h(n):
            return helper(n) + 1            # given to a Context below, callee after it


        def helper(n):
            return n * 10


        by_hand = Context(generated_dir=ctx.generated_dir)
        h = by_hand.batch(h)
        helper = by_hand.batch(helper)
        """,
    )
    module = load(monkeypatch, name, path)
    assert module.RAN_TO_THE_END
    n = np.array([1, 4])
    assert module.f(n, backend="numpy").tolist() == [8, 14]
    assert module.make(2)(np.array([3, 4]), backend="numpy").tolist() == [2, 2]
    assert module.h(n, backend="numpy").tolist() == [11, 41]


def test_a_local_named_like_a_batched_function_shadows_it_as_in_python(tmp_path, monkeypatch):
    # Assigning makes `flag` local to `f`, whatever else the module binds to
    # that name (here a batched function decorated later): Python reads the
    # local, and so does the batched program.
    name, path = write(
        tmp_path,
        """
        @ctx.batch
        def f(n):
            flag = n > 0
            if flag:
                return n
            return flag - n


        @ctx.batch
        def flag(n):
            return n * 100
        """,
    )
    module = load(monkeypatch, name, path)
    assert module.f(np.array([-1, 2, 0]), backend="numpy").tolist() == [1, 2, 0]
    assert module.flag(np.array([3]), backend="numpy").tolist() == [300]


# ---- projects: current modules, development and frozen --------------------------

PYPROJECT = """\
[tool.autobatch]
sources = ["shapes"]
backends = ["numpy"]
"""

SOURCE = '''\
import numpy as np
from autobatch import Context, TensorType

ctx = Context()


@ctx.batch(signature=[TensorType(np.int64, ())])
def steps(n):
    count = 0
    while n > 1:
        n = half(n)
        count += 1
    return count


@ctx.batch
def half(n):
    return n // 2


RAN_TO_THE_END = True
'''

COUNT_LOADED = (
    "import sys, json; "
    f"print(json.dumps([m for m in {COMPILER + ('tensorflow',)!r} if m in sys.modules]))"
)


@pytest.fixture
def project(tmp_path):
    """A project whose declared program `steps(int64[])` is generated (NumPy)."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "shapes").mkdir()
    (tmp_path / "shapes" / "__init__.py").write_text("")
    (tmp_path / "shapes" / "walk.py").write_text(SOURCE)
    assert steps(tmp_path, [1, 8, 9]) == [0, 3, 3]
    return tmp_path


def run(project, code, frozen=False):
    """Runs `code` in a fresh Python started in `project`, frozen or not."""
    env = {k: v for k, v in os.environ.items() if k != "AUTOBATCH_FROZEN"}
    env["PYTHONPATH"] = os.pathsep.join([str(project), ROOT])
    if frozen:
        env["AUTOBATCH_FROZEN"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, env=env
    )


def last_json(done):
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def steps(project, values, frozen=False):
    """`shapes.walk.steps` of `values` on NumPy, in a fresh process."""
    code = (
        "import json, numpy as np, shapes.walk as w; "
        f"print(json.dumps(w.steps(np.array({values!r}), backend='numpy').tolist()))"
    )
    return last_json(run(project, code, frozen))


def generated(project):
    return (project / "generated" / "shapes" / "walk_np.py").read_text()


def edit(project, old, new):
    path = project / "shapes" / "walk.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def loaded_after_import(project, frozen=False):
    """The compiler's modules and TensorFlow, where importing shapes.walk loaded them."""
    return last_json(run(project, "import shapes.walk\n" + COUNT_LOADED, frozen))


def test_a_current_module_imports_without_the_compiler_or_tensorflow(project):
    assert loaded_after_import(project) == []
    assert loaded_after_import(project, frozen=True) == []


def test_the_examples_import_without_the_compiler_or_tensorflow():
    # every example of this repository, against the checked-in generated/
    names = sorted(
        f[:-3] for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py") and f != "__init__.py"
    )
    code = "".join(f"import examples.{n}\n" for n in names) + COUNT_LOADED
    assert last_json(run(ROOT, code)) == []


def test_in_development_an_edited_function_is_checked_at_import_and_rebuilt_by_the_first_call(project):
    before = generated(project)
    edit(project, "n = half(n)", "n = half(n) - 0")
    # its text is no longer the one compiled: the compiler's first stages
    # check it (no black, no TensorFlow) and nothing is written yet
    assert sorted(loaded_after_import(project)) == ["gast", "transpiler.frontend.fence", "transpiler.pipeline"]
    assert generated(project) == before
    assert steps(project, [8]) == [3]
    assert generated(project) != before
    assert loaded_after_import(project) == []


def test_in_development_an_edit_that_is_refused_raises_at_import(project):
    edit(project, "    return n // 2\n", "    assert n > 0\n    return n // 2\n")
    done = run(project, "import shapes.walk")
    assert done.returncode == 1
    assert "UnsupportedSyntaxError: `assert` statement is not supported in batched function 'half'" in done.stderr
    path = project / "shapes" / "walk.py"
    assert f'File "{path}", line {line_of(path, "assert n > 0")}' in done.stderr


def test_frozen_a_stale_declared_program_raises_at_import(project):
    edit(project, "count += 1", "count += 10")
    done = run(project, "import shapes.walk\nprint('imported')", frozen=True)
    assert done.returncode == 1
    assert "imported" not in done.stdout
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("transpiler.errors.StaleGeneratedCodeError: generated module ")
    assert "walk_np.py is stale for steps(int64[])" in message
    assert "steps changed in" in message
    assert "autobatch generate shapes/walk.py" in message
    # unfrozen, the same import works (development: the first call rebuilds it)
    assert run(project, "import shapes.walk").returncode == 0


def test_frozen_a_declared_program_no_module_holds_raises_at_import(project):
    # a lock line declares another program; `autobatch generate` was not run
    (project / "autobatch.lock").write_text("shapes/walk.py::half(int64[])\n")
    done = run(project, "import shapes.walk", frozen=True)
    assert done.returncode == 1
    message = done.stderr.strip().splitlines()[-1]
    assert "walk_np.py is missing for half(int64[])" in message
    assert "autobatch generate shapes/walk.py" in message


def test_frozen_the_command_line_still_reports_and_rewrites_a_stale_module(project):
    # a CI that exports AUTOBATCH_FROZEN=1: `autobatch check` imports the
    # source to say what is stale, and `generate` to rewrite it
    edit(project, "count += 1", "count += 10")
    check = run(project, "from transpiler import cli; raise SystemExit(cli.main(['check', '-q']))", frozen=True)
    assert check.returncode == 1, check.stderr
    assert "walk_np.py" in check.stderr and "autobatch generate" in check.stderr
    generate = run(project, "from transpiler import cli; raise SystemExit(cli.main(['generate', '-q']))", frozen=True)
    assert generate.returncode == 0, generate.stderr
    assert steps(project, [8], frozen=True) == [30]


def test_frozen_a_current_module_imports_and_runs(project):
    assert steps(project, [4, 16], frozen=True) == [2, 4]


def test_frozen_an_edit_of_an_undeclared_function_waits_for_its_call(tmp_path, monkeypatch):
    # frozen, nothing compiles at import: a refused construct in a function
    # no input declares is the call's to report (as missing)
    name, path = write(
        tmp_path,
        """
        @ctx.batch
        def f(n):
            assert n > 0
            return n
        """,
    )
    monkeypatch.setenv("AUTOBATCH_FROZEN", "1")
    module = load(monkeypatch, name, path)
    with pytest.raises(StaleGeneratedCodeError, match="is missing for f"):
        module.f(np.array([1]), backend="numpy")
