"""`autobatch check` names every problem of the generated tree in one line,
with the command that fixes it; `generate --force` is `rm -rf generated &&
generate` (issue 30).

Each test breaks a copy of one small, generated project in one way, then
asserts: exit 1, one line naming the problem and the fix, no text diff on
stdout (that is `autobatch diff`'s), and exit 0 once the fix has run (the
command is taken from the line itself, so the line's command is what is
tested).  NumPy only: no TensorFlow import, about a second a CLI call.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.test_cli import run_cli
from transpiler import loader

# One file, three programs, declared in the three places: signature=, the
# lock file and a pyproject entry written by hand (odd spacing on purpose).
SOURCE = '''
import numpy as np

from transpiler import Context, TensorType

ctx = Context()


@ctx.batch(signature=[TensorType(np.int64, ())])
def fib(n):
    if n <= 1:
        return 1
    return fib(n - 1) + fib(n - 2)


@ctx.batch
def scale(v, k):
    return v * k
'''

PYPROJECT = """[tool.autobatch]
sources = ["pkg"]
backends = ["numpy"]

[tool.autobatch.signatures]
"pkg/fib.py::scale" = [{signatures}]
"""
SCALE = '"( float64[3],float64[] )"'
LOCK = "pkg/fib.py::fib(int64[]) stackless\n"
PROGRAMS = "fib(int64[]); fib(int64[]) stackless; scale(float64[n], float64[])"  # sizes are symbols (transpiler/sizes.py)

MODULE = os.path.join("generated", "pkg", "fib_np.py")
FIX = re.compile(r"run `(autobatch [^`]*)`")

# Rewrites the module with only its first program, through the compiler and
# with every hash right: what a Context of its own, or another tool, can leave.
TRUNCATE = """
import sys
from transpiler import config, loader, regenerate

(target,) = regenerate.targets(config.load(sys.argv[1]))
target.programs = target.programs[:1]
loader.write_atomic(target.path, regenerate.expected_text(target))
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The project generated once, and its module truncated to one program."""
    root = tmp_path_factory.mktemp("gate") / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "fib.py").write_text(SOURCE)
    (root / "pyproject.toml").write_text(PYPROJECT.format(signatures=SCALE))
    (root / "autobatch.lock").write_text(LOCK)
    done = run_cli(root, "generate", "-q")
    assert done.returncode == 0, done.stderr
    full = (root / MODULE).read_text()
    assert loader.read_header(full)["programs"] == PROGRAMS
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(root)]))
    made = subprocess.run(
        [sys.executable, "-c", TRUNCATE, str(root)],
        capture_output=True, text=True, env=env, cwd=root,
    )
    assert made.returncode == 0, made.stderr
    truncated = (root / MODULE).read_text()
    assert loader.read_header(truncated)["programs"] == "fib(int64[])"
    (root / MODULE).write_text(full)
    return root, truncated


@pytest.fixture
def project(template, tmp_path):
    """A fresh copy of the generated project (current: check passes)."""
    copy = tmp_path / "project"
    shutil.copytree(template[0], copy)
    return copy


@pytest.fixture
def truncated(template):
    return template[1]


def problems(project):
    """`check -q`'s lines, asserting it failed and printed no text diff."""
    result = run_cli(project, "check", "-q")
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert all(line.startswith("autobatch: ") for line in lines), result.stderr
    return [line[len("autobatch: "):] for line in lines]


def one_problem(project, *fragments):
    """The one line `check` prints, holding every fragment."""
    lines = problems(project)
    assert len(lines) == 1, "\n".join(lines)
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def passes(project):
    result = run_cli(project, "check", "-q")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def run_fix(project, line):
    """Runs the command a problem line names, as the user would."""
    (command,) = FIX.findall(line)
    done = run_cli(project, *command.split()[1:], "-q")
    assert done.returncode == 0, done.stderr
    return command


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def header(project):
    return loader.read_header((project / MODULE).read_text())


def test_a_current_project_passes_without_importing_the_compiler(project):
    script = (
        "import sys\n"
        "from transpiler import cli\n"
        f"status = cli.main(['check', '--root', {str(project)!r}])\n"
        "loaded = [m for m in ('gast', 'black', 'tensorflow', 'transpiler.pipeline')"
        " if m in sys.modules]\n"
        "print(status, loaded)\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=project
    )
    assert out.stdout.split("\n")[0] == "0 []", out.stderr


def test_a_missing_module(project):
    (project / MODULE).unlink()
    line = one_problem(project, "generated/pkg/fib_np.py is missing")
    assert run_fix(project, line) == "autobatch generate pkg/fib.py"
    passes(project)


def test_a_module_truncated_to_one_of_its_programs(project, truncated):
    """The inputs hash matches (it covers the declarations, not what the
    module holds): only the programs= comparison notices."""
    (project / MODULE).write_text(truncated)
    lines = problems(project)
    assert lines == [
        "generated/pkg/fib_np.py lacks program fib(int64[]) stackless, declared in "
        "autobatch.lock; run `autobatch generate pkg/fib.py`",
        "generated/pkg/fib_np.py lacks program scale(float64[n], float64[]), declared in "
        "[tool.autobatch.signatures] of pyproject.toml; run `autobatch generate pkg/fib.py`",
    ]
    run_fix(project, lines[0])
    passes(project)
    assert header(project)["programs"] == PROGRAMS


@pytest.mark.parametrize("where", ["lock", "pyproject", "signature="])
def test_a_declared_program_the_module_lacks(project, where):
    if where == "lock":
        with open(project / "autobatch.lock", "a") as f:
            f.write("pkg/fib.py::scale(float64[], float64[])\n")
        program, origin = "scale(float64[], float64[])", "autobatch.lock"
    elif where == "pyproject":
        (project / "pyproject.toml").write_text(
            PYPROJECT.format(signatures=SCALE + ', "(int64[ 2 ],  int64[])"')
        )
        program, origin = "scale(int64[n], int64[])", "[tool.autobatch.signatures]"  # sizes are symbols
    else:
        edit(
            project / "pkg" / "fib.py",
            "@ctx.batch\ndef scale",
            "@ctx.batch(signature=[TensorType(np.float64, (2, 2)), TensorType(np.float64, ())])"
            "\ndef scale",
        )
        # A matrix: a vector of another length would be the program the module holds (sizes are symbols).
        program, origin = "scale(float64[n, n], float64[])", "@batch(signature=...) in pkg/fib.py"
    line = one_problem(project, f"generated/pkg/fib_np.py lacks program {program}", origin)
    assert run_fix(project, line) == "autobatch generate pkg/fib.py"
    passes(project)
    assert program in header(project)["programs"]


def test_a_program_nobody_declares_since_its_lock_line_went(project):
    (project / "autobatch.lock").write_text("")
    line = one_problem(
        project,
        "generated/pkg/fib_np.py holds program fib(int64[]) stackless, which no input declares",
    )
    run_fix(project, line)
    passes(project)
    # regenerated from the inputs, not from what the old header listed
    assert header(project)["programs"] == "fib(int64[]); scale(float64[n], float64[])"


def test_a_program_nobody_declares_with_every_hash_right(project):
    edit(project / MODULE, f"programs={PROGRAMS}\n", f"programs={PROGRAMS}; fib(float64[])\n")
    line = one_problem(
        project, "generated/pkg/fib_np.py holds program fib(float64[]), which no input declares"
    )
    run_fix(project, line)
    passes(project)
    assert header(project)["programs"] == PROGRAMS


@pytest.mark.parametrize(
    "kind, break_it, fragment, command",
    [
        (
            "source edited",
            lambda p: edit(p / "pkg" / "fib.py", "return v * k", "return k * v"),
            "is stale (its inputs changed",
            "autobatch generate pkg/fib.py",
        ),
        (
            "hand-edited",
            lambda p: edit(p / MODULE, "\ndef ", "\n# mine\ndef "),
            "was edited by hand; move the change into pkg/fib.py",
            "autobatch generate --force pkg/fib.py",
        ),
        (
            "runtime",
            lambda p: edit(p / MODULE, "# autobatch: runtime=", "# autobatch: runtime=99"),
            "needs autobatch_runtime version 99",
            "autobatch generate pkg/fib.py",
        ),
        (
            "black",
            lambda p: edit(p / MODULE, "# autobatch: black=", "# autobatch: black=0.0"),
            "is stale (formatted by black 0.0",
            "autobatch generate pkg/fib.py",
        ),
    ],
)
def test_a_stale_module(project, kind, break_it, fragment, command):
    break_it(project)
    line = one_problem(project, "generated/pkg/fib_np.py ", fragment)
    assert run_fix(project, line) == command
    passes(project)


def test_plain_generate_refuses_a_hand_edited_module(project):
    edit(project / MODULE, "\ndef ", "\n# mine\ndef ")
    refused = run_cli(project, "generate", "-q")
    assert refused.returncode == 1 and "edited by hand" in refused.stderr


def test_an_orphan_module_and_its_package_folder_go(project):
    old = project / "generated" / "old"
    old.mkdir()
    (old / "__init__.py").write_text("")
    shutil.copy(project / MODULE, old / "fib_np.py")
    line = one_problem(project, "generated/old/fib_np.py is an orphan")
    assert run_fix(project, line) == "autobatch generate"
    passes(project)
    assert not old.exists()  # as after rm -rf generated && autobatch generate


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("pkg/fib.py::fib int64", "is not FILE::FUNCTION(SIGNATURE) [MODE]"),
        ("pkg/fib.py::fib(int64[]) fast", "has mode 'fast'"),
        ("pkg/fib.py::nothing(int64[])", "names no batched function of pkg/fib.py"),
        ("pkg/gone.py::fib(int64[])", "names pkg/gone.py, which does not exist"),
    ],
)
def test_a_bad_lock_line(project, bad, fragment):
    """One line, and the module stays current: a line that makes no program
    is not part of its inputs.  The fix is an edit of the lock file."""
    lock = project / "autobatch.lock"
    lock.write_text(LOCK + bad + "\n")
    one_problem(project, f"autobatch.lock: `{bad}` {fragment}", "remove that line")
    lock.write_text(LOCK)
    passes(project)


def test_a_pyproject_entry_naming_no_batched_function(project):
    with open(project / "pyproject.toml", "a") as f:
        f.write('"pkg/fib.py::nothing" = ["(int64[])"]\n')
    one_problem(
        project,
        'pyproject.toml: [tool.autobatch.signatures] "pkg/fib.py::nothing" names no batched '
        "function of pkg/fib.py; remove that entry",
    )
    (project / "pyproject.toml").write_text(PYPROJECT.format(signatures=SCALE))
    passes(project)


def _tree(folder):
    """Every file under a folder (byte code aside), as bytes."""
    out = {}
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            path = os.path.join(top, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = f.read()
    return out


def test_force_is_rm_generated_then_generate(project, truncated, tmp_path):
    (project / MODULE).write_text(truncated)
    (project / "generated" / "pkg" / "stray_np.py").write_text((project / MODULE).read_text())
    fresh = tmp_path / "fresh"
    shutil.copytree(project, fresh)
    shutil.rmtree(fresh / "generated")
    assert run_cli(fresh, "generate", "-q").returncode == 0
    forced = run_cli(project, "generate", "--force", "-q")
    assert forced.returncode == 0, forced.stderr
    assert _tree(project / "generated") == _tree(fresh / "generated")
    assert header(project)["programs"] == PROGRAMS
    passes(project)


def test_a_declaration_generate_cannot_build_is_named_until_removed(project):
    """A lock line whose signature names a class the file does not define
    builds nothing (the compiler skips it), so no `generate` satisfies it:
    check names the declaration to correct, and only that once regenerated."""
    lock = project / "autobatch.lock"
    lock.write_text(LOCK + "pkg/fib.py::fib(Gone(int64[]))\n")
    assert run_cli(project, "generate", "-q").returncode == 0
    one_problem(
        project,
        "autobatch.lock: pkg/fib.py::fib(Gone(int64[])) declares a program that "
        "`autobatch generate` does not build",
        "correct or remove it",
    )
    lock.write_text(LOCK)
    assert run_cli(project, "generate", "-q").returncode == 0
    passes(project)


def test_a_signature_only_running_the_file_tells_is_taken_on_trust(project):
    """`signature=SIG` is not read without importing the file (check does
    not run user code): the module may hold one program of that function
    beyond the declared ones, and is current."""
    edit(
        project / "pkg" / "fib.py",
        "@ctx.batch(signature=[TensorType(np.int64, ())])",
        "SIG = [TensorType(np.int64, ())]\n\n\n@ctx.batch(signature=SIG)",
    )
    line = one_problem(project, "generated/pkg/fib_np.py is stale (its inputs changed")
    run_fix(project, line)
    passes(project)
    assert header(project)["programs"] == PROGRAMS
