"""The checked-in artifact under its users' own use (issue 30).

A library checks in the programs its inputs declare, including a factory's
(`[tool.autobatch.closures]`).  Its users specialise the factory to their
own functions, call it from their own projects, and fail builds: none of
that may rewrite the library's tree, drop its programs, or grow its lock.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conftest import ROOT
from transpiler import StaleGeneratedCodeError

LIBRARY_PYPROJECT = """\
[project]
name = "mylib"
version = "1.0"

[tool.autobatch]
sources = ["mylib"]
backends = ["numpy"]

[tool.autobatch.signatures]
"mylib/solve.py::iterate" = ["(float64[])"]

[tool.autobatch.closures]
"mylib/solve.py::make_iterate" = { f = "mylib.solve:halve" }
"""

LIBRARY = '''\
from autobatch import Context


def halve(x):
    return x * 0.5


def make_iterate(f):
    """Counts the steps `f` needs to bring |x| to at most 1, per example."""
    ctx = Context()

    @ctx.batch
    def iterate(x):
        steps = 0
        while abs(x) > 1:
            x = f(x)
            steps += 1
        return steps

    return iterate
'''

# Another project: two functions of its own, of two types; one call of
# each, alternating, twice over.
APP = '''\
import json
import numpy as np
from mylib.solve import make_iterate


def third(x):
    return x // 3


def shrink(x):
    return x * 0.25


by_third, by_shrink = make_iterate(third), make_iterate(shrink)
out = []
for _ in range(2):
    out.append(by_third(np.array([10, 100, 1000, -7]), backend="numpy").tolist())
    out.append(by_shrink(np.array([10.0, 0.5, 1000.0, -3.0]), backend="numpy").tolist())
print(json.dumps(out))
'''


def plain_steps(f, x):
    steps = 0
    while abs(x) > 1:
        x = f(x)
        steps += 1
    return steps


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def autobatch(project, *args, env=None):
    env = dict(os.environ if env is None else env, PYTHONPATH=os.pathsep.join([str(project), ROOT]))
    return subprocess.run(
        [sys.executable, "-m", "autobatch", *args, "--root", str(project)],
        capture_output=True, text=True, env=env, cwd=project,
    )


@pytest.fixture
def library(tmp_path):
    """A library with a factory, its generated tree checked into git."""
    lib = tmp_path / "lib"
    (lib / "mylib").mkdir(parents=True)
    (lib / "pyproject.toml").write_text(LIBRARY_PYPROJECT)
    (lib / "mylib" / "__init__.py").write_text("")
    (lib / "mylib" / "solve.py").write_text(LIBRARY)
    done = autobatch(lib, "generate")
    assert done.returncode == 0, done.stderr
    git(lib, "init", "-q")
    git(lib, "add", "-A")
    git(lib, "commit", "-q", "-m", "library")
    return lib


def test_users_closures_of_other_types_never_touch_the_librarys_tree(library, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n')
    (app / "app_main.py").write_text(APP)
    cache = tmp_path / "cache"
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(library), ROOT]),
        AUTOBATCH_CACHE_DIR=str(cache),
    )
    env.pop("AUTOBATCH_FROZEN", None)
    done = subprocess.run(
        [sys.executable, "-W", "error", "app_main.py"],  # a "dropped" warning would fail it
        cwd=app, env=env, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    import json

    out = json.loads(done.stdout.splitlines()[-1])
    third = [plain_steps(lambda x: x // 3, x) for x in [10, 100, 1000, -7]]
    shrink = [plain_steps(lambda x: x * 0.25, x) for x in [10.0, 0.5, 1000.0, -3.0]]
    assert out == [third, shrink, third, shrink]
    # The int program was built into the cache; the float one is the
    # library's declared program (a factory serving any callable).
    assert [p.name for p in cache.rglob("*.py")] and all(
        "solve_np_" in p.name for p in cache.rglob("*.py")
    )
    assert git(library, "status", "--porcelain") == ""
    assert autobatch(library, "check").returncode == 0
    assert not list(app.rglob("generated")) and not (app / "autobatch.lock").exists()


def test_a_closure_called_inside_its_own_project_leaves_the_tree_alone(library, tmp_path, monkeypatch):
    """Even from the library's own folder, a closure of other values is the
    caller's program: built into the cache, not into the declared module."""
    monkeypatch.chdir(library)
    monkeypatch.syspath_prepend(str(library))
    monkeypatch.setenv("AUTOBATCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AUTOBATCH_FROZEN", raising=False)
    sys.modules.pop("mylib.solve", None)
    sys.modules.pop("mylib", None)
    from mylib import solve

    def third(x):
        return x // 3

    iterate = solve.make_iterate(third)
    assert iterate(np.array([10, 100]), backend="numpy").tolist() == [plain_steps(third, 10), plain_steps(third, 100)]
    assert solve.make_iterate(solve.halve)(np.array([3.0]), backend="numpy").tolist() == [2]
    assert git(library, "status", "--porcelain") == ""
    # Frozen, a program nobody declared and the cache lacks says what to do.
    def quarter(x):
        return x // 4

    frozen = solve.make_iterate(quarter)
    frozen.context.frozen = True
    with pytest.raises(StaleGeneratedCodeError, match=r"iterate\(int64\[\]\).*declare"):
        frozen(np.array([10, 100]), backend="numpy")
    assert git(library, "status", "--porcelain") == ""


BROKEN = '''\
from autobatch import Context

ctx = Context()


@ctx.batch
def first(v):
    return v[0]
'''


def test_a_failed_build_adds_nothing_to_the_lock(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.autobatch]\nsources = ["pkg"]\nbackends = ["numpy"]\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "broken.py").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("AUTOBATCH_FROZEN", raising=False)
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import broken

    with pytest.raises(Exception, match=r"broken\.py:8"):
        broken.first(np.array([1, 2]), backend="numpy")  # a scalar cannot be subscripted
    assert not (tmp_path / "autobatch.lock").exists()
    assert not (tmp_path / "generated" / "pkg" / "broken_np.py").exists()
    # A good call afterwards adds exactly its own line.
    assert broken.first(np.array([[4, 5], [6, 7]]), backend="numpy").tolist() == [4, 6]
    lock = (tmp_path / "autobatch.lock").read_text()
    assert [l for l in lock.splitlines() if not l.startswith("#")] == ["pkg/broken.py::first(int64[n])"]  # sizes are symbols
    with pytest.raises(Exception, match=r"broken\.py:8"):
        broken.first(np.array([1.5]), backend="numpy")
    assert (tmp_path / "autobatch.lock").read_text() == lock


def test_a_declared_program_that_no_longer_compiles_fails_generate_naming_it(library):
    text = (library / "mylib" / "solve.py").read_text()
    (library / "mylib" / "solve.py").write_text(text.replace("while abs(x) > 1:", "while abs(x[0]) > 1:"))
    done = autobatch(library, "generate")
    assert done.returncode != 0
    assert "iterate(float64[])" in done.stderr and "[tool.autobatch.signatures]" in done.stderr
    assert "dropped" not in done.stderr


@pytest.mark.parametrize("backend", ["numpy", "tensorflow", "xla"])
def test_python_lists_and_numbers_are_arguments_on_every_backend(backend):
    from examples.collatz import collatz_steps
    from examples.vectors import relax

    options = {"xla": {"xla": True}}.get(backend, {"backend": backend})
    assert np.asarray(collatz_steps([6, 7, 27], **options)).tolist() == [8, 16, 111]
    assert np.asarray(collatz_steps(27, **options)).tolist() == [111]
    got = np.asarray(relax([[1.0, 2, 3]], 4, **options))
    assert got.tolist() == np.asarray(relax(np.array([[1.0, 2.0, 3.0]]), np.int64(4), **options)).tolist()


def test_generated_modules_convert_python_values_without_loss():
    from autobatch_runtime import common

    assert common.python_numbers("f", "x", [1, 2], np.int32).dtype == np.int32
    assert common.python_numbers("f", "x", [1, 2], np.float32).dtype == np.float32
    with pytest.raises(TypeError, match="argument x .*int32.*cannot hold exactly"):
        common.python_numbers("f", "x", [2**40], np.int32)
    with pytest.raises(TypeError, match="argument x"):
        common.python_numbers("f", "x", [1.5], np.int64)
    with pytest.raises(TypeError, match="float64.*cannot hold exactly"):
        common.python_numbers("f", "x", [2**53 + 1], np.float64)  # Python's int is exact
    assert common.python_numbers("f", "x", [2**53, 3], np.float64).tolist() == [2.0**53, 3.0]
    array = np.array([1, 2], np.int16)
    assert common.python_numbers("f", "x", array, np.int64) is array  # arrays are the caller's
