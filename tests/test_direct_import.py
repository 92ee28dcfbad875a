"""A generated module imported directly refuses sources edited since it was generated.

`import generated.pkg.prog_np` has no Context behind it to notice that
`pkg/prog.py` changed, so the module checks at import
(autobatch_runtime/freshness.py) that each function it was built from still
has the text it was generated from.  These tests generate a temporary
project with the CLI, then import its module in a fresh interpreter, as a
user's program or a deployment would.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from autobatch_runtime import freshness
from tests.conftest import ROOT

# The same small project as test_cli's: a helper file and a program calling it.
from tests.test_cli import HELPERS, PROG  # noqa: E402

# Imports the generated module as a user's program would, and calls it.
DIRECT = """
import numpy as np
import generated.pkg.prog_np as module
print(module.twice_plus_one(np.array([1, 2, 3])).tolist())
"""


def _environment(**extra):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    for name in ("AUTOBATCH_FRESHNESS", "AUTOBATCH_FROZEN"):
        env.pop(name, None)
    env.update(extra)
    return env


def run_python(project, code, **extra):
    """`python -c code` in `project` (first on the path, before ROOT's own `generated`)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_environment(**extra),
        cwd=project,
    )


@pytest.fixture(scope="module")
def generated_project(tmp_path_factory):
    """A project whose module generated/pkg/prog_np.py is generated once (the
    compiler is slow); each test works on a copy of it."""
    project = tmp_path_factory.mktemp("generated_project")
    (project / "pyproject.toml").write_text(
        '[tool.autobatch]\nsources = ["pkg"]\nbackends = ["numpy"]\n'
    )
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "helpers.py").write_text(HELPERS)
    (project / "pkg" / "prog.py").write_text(PROG)
    done = subprocess.run(
        [sys.executable, "-m", "transpiler", "generate", "--root", str(project)],
        capture_output=True,
        text=True,
        env=_environment(),
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    return project


@pytest.fixture
def project(generated_project, tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(generated_project, copy)
    return copy


def test_a_fresh_module_imports_and_runs(project):
    text = (project / "generated" / "pkg" / "prog_np.py").read_text()
    assert "rt.check_fresh(" in text and '"pkg.prog": {"twice_plus_one": "' in text
    assert '"pkg.helpers": {"step": "' in text  # a callee in another file too
    done = run_python(project, DIRECT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3, 5, 7]"


def test_an_edited_function_refuses_a_direct_import(project):
    (project / "pkg" / "prog.py").write_text(PROG.replace("step(n) + 1", "step(n) + 2"))
    done = run_python(project, DIRECT)
    assert done.returncode == 1
    assert "StaleSourceError" in done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert "generated.pkg.prog_np" in message
    assert f"twice_plus_one changed in {project / 'pkg' / 'prog.py'}" in message
    assert "`autobatch generate pkg/prog.py`" in message
    assert "AUTOBATCH_FRESHNESS=warn" in message
    assert "[3, 5, 7]" not in done.stdout  # the old program did not run


def test_an_edited_callee_in_another_file_refuses_it_too(project):
    (project / "pkg" / "helpers.py").write_text(HELPERS.replace("n * 2", "n * 3"))
    done = run_python(project, DIRECT)
    assert done.returncode == 1
    assert f"step changed in {project / 'pkg' / 'helpers.py'}" in done.stderr
    assert "`autobatch generate pkg/prog.py`" in done.stderr


def test_a_removed_function_is_stale(project):
    (project / "pkg" / "prog.py").write_text(PROG.replace("def twice_plus_one", "def renamed"))
    done = run_python(project, DIRECT)
    assert done.returncode == 1
    assert f"twice_plus_one is no longer defined in {project / 'pkg' / 'prog.py'}" in done.stderr


def test_warn_mode_warns_and_runs_the_old_program(project):
    (project / "pkg" / "prog.py").write_text(PROG.replace("step(n) + 1", "step(n) + 2"))
    done = run_python(project, DIRECT, AUTOBATCH_FRESHNESS="warn")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3, 5, 7]"
    assert "StaleSourceWarning" in done.stderr and "twice_plus_one changed" in done.stderr


def test_off_mode_skips_the_check(project):
    (project / "pkg" / "prog.py").write_text(PROG.replace("step(n) + 1", "step(n) + 2"))
    done = run_python(project, DIRECT, AUTOBATCH_FRESHNESS="off")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3, 5, 7]" and "Stale" not in done.stderr


def test_an_unknown_mode_is_refused_by_name(project):
    done = run_python(project, DIRECT, AUTOBATCH_FRESHNESS="sometimes")
    assert done.returncode == 1
    assert "AUTOBATCH_FRESHNESS='sometimes': expected one of error, warn, off" in done.stderr


def test_an_edit_outside_the_functions_keeps_the_module_fresh(project):
    prog = project / "pkg" / "prog.py"
    prog.write_text("# a comment above everything\n" + PROG + "\n\nUNUSED = 1  # and below\n")
    done = run_python(project, DIRECT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3, 5, 7]"


def test_without_the_source_there_is_nothing_to_compare(project):
    (project / "pkg" / "prog.py").unlink()
    done = run_python(project, DIRECT)
    assert done.returncode == 0, done.stderr  # the helpers' source is still there, unchanged
    assert done.stdout.strip() == "[3, 5, 7]"


def test_a_deployment_that_ships_only_generated_code_imports_it(project):
    shutil.rmtree(project / "pkg")
    done = run_python(project, DIRECT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3, 5, 7]"


def test_a_context_call_after_an_edit_regenerates_and_the_module_is_fresh_again(project):
    """Through the Context, the edit is regenerated, not refused; the module
    it writes then imports directly."""
    (project / "pkg" / "prog.py").write_text(PROG.replace("step(n) + 1", "step(n) + 2"))
    call = (
        "import numpy as np\nimport pkg.prog\n"
        "print(pkg.prog.twice_plus_one(np.array([1, 2, 3]), backend='numpy').tolist())\n"
    )
    done = run_python(project, call)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[4, 6, 8]"
    done = run_python(project, DIRECT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[4, 6, 8]"


# ---- the runtime's functions, in this process --------------------------------

NESTED = '''
import functools


def make(scale):
    offset = 1  # outside the nested functions

    @functools.wraps(make)
    def inner(n):
        return n * scale + offset

    class Helper:
        def method(self):
            def deeper():
                return 0
            return deeper

    return inner


class Model:
    async def run(self):
        return 1

if True:
    def guarded():
        return 2
'''


def test_qualified_names_follow_python(tmp_path):
    path = str(tmp_path / "nested.py")
    with open(path, "w") as f:
        f.write(NESTED)
    assert sorted(freshness.file_digests(path)) == [
        "Model.run",
        "guarded",
        "make",
        "make.<locals>.Helper.method",
        "make.<locals>.Helper.method.<locals>.deeper",
        "make.<locals>.inner",
    ]
    lines = NESTED.splitlines()
    assert freshness.qualname_at(path, lines.index("    def inner(n):") + 1) == "make.<locals>.inner"
    assert freshness.qualname_at(path, lines.index("    @functools.wraps(make)") + 1) == "make.<locals>.inner"
    assert freshness.qualname_at(path, 1) is None


def test_a_digest_covers_the_function_and_its_decorators_only(tmp_path):
    path = tmp_path / "nested.py"
    path.write_text(NESTED)
    before = dict(freshness.file_digests(str(path)))
    path.write_text(NESTED.replace("offset = 1  # outside", "offset = 2  # outside"))
    os.utime(path, ns=(1, 1))  # a new modification time, whatever the clock's resolution
    after = freshness.file_digests(str(path))
    assert after["make.<locals>.inner"] == before["make.<locals>.inner"]
    assert after["make"] != before["make"]  # the outer function holds the edit
    path.write_text(NESTED.replace("@functools.wraps(make)", "@functools.wraps(Model)"))
    os.utime(path, ns=(2, 2))
    assert freshness.file_digests(str(path))["make.<locals>.inner"] != before["make.<locals>.inner"]


def test_the_checked_in_nuts_module_records_its_closures_by_qualified_name():
    with open(os.path.join(ROOT, "generated", "examples", "nuts_np.py"), encoding="utf-8") as f:
        text = f.read()
    for name in ("build_tree", "nuts_chain", "nuts_step"):
        assert f'"make_nuts_programs.<locals>.{name}": "' in text, name


def test_a_source_that_cannot_be_found_is_not_compared():
    assert freshness.source_file("__main__") is None
    assert freshness.source_file("no_such_package.module") is None
    assert freshness.stale_functions({"no_such_package.module": {"f": "0" * 16}}) == []


def test_a_module_loaded_by_a_context_is_not_checked_again(monkeypatch):
    monkeypatch.setenv("AUTOBATCH_FRESHNESS", "error")
    stale = {"tests.test_direct_import": {"no_such_function": "0" * 16}}
    with pytest.raises(freshness.StaleSourceError, match="no_such_function is no longer defined"):
        freshness.check_fresh({"__name__": "m"}, "tests/test_direct_import.py", stale)
    freshness.check_fresh({freshness.CHECKED_BY_LOADER: True}, "tests/test_direct_import.py", stale)


def test_the_example_modules_import_directly_and_fresh():
    """Every checked-in module passes its own check (they are regenerated)."""
    code = textwrap.dedent(
        """
        import importlib, os, warnings
        warnings.simplefilter("error")
        for name in sorted(os.listdir("generated/examples")):
            if name.endswith("_np.py"):
                importlib.import_module("generated.examples." + name[:-3])
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_environment(), cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
