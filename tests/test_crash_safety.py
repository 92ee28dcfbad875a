"""Generation is crash-safe: a failure or a kill never leaves a broken module.

A module is written whole (a temporary file renamed into place), only after
every stage succeeded; until then the last good module stays.  A stage is
made to fail by monkeypatching it; a process is killed in the middle of its
write; two processes generate at once.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.test_cli import run_cli
from tests.test_fence import write_module
from transpiler import loader, pipeline

SOURCE = """
@ctx.batch
def f(n):
    if n > 2:
        return n * 2
    return n + 1
"""


def module_file(tmp_path, module):
    return tmp_path / "generated" / f"{module.__name__}_np.py"


def leftovers(folder):
    """Files in the generated folder that are not a module or a package marker."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".py"))


@pytest.fixture
def generated(tmp_path, monkeypatch):
    """A module with `f`, its generated module written once (for int64)."""
    module, _ = write_module(tmp_path, monkeypatch, SOURCE)
    assert module.f(np.array([1, 5]), backend="numpy").tolist() == [2, 10]
    path = module_file(tmp_path, module)
    return module, path, path.read_bytes()


@pytest.mark.parametrize("stage", ["infer_types", "lower_program", "emit_module"])
@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_a_failing_stage_keeps_the_last_good_module(generated, monkeypatch, stage, failure):
    module, path, good = generated

    def fails(*args, **kwargs):
        raise failure(f"{stage} failed")

    monkeypatch.setattr(pipeline, stage, fails)
    with pytest.raises(failure, match=f"{stage} failed"):
        module.f(np.array([1.5]), backend="numpy")  # float64: a new program to generate
    assert path.read_bytes() == good
    assert leftovers(path.parent) == []
    monkeypatch.undo()
    # The old program still runs; once the stage works, the new one is added.
    assert module.f(np.array([1, 5]), backend="numpy").tolist() == [2, 10]
    assert module.f(np.array([1.5, 3.0]), backend="numpy").tolist() == [2.5, 6.0]
    assert "f(float64[])" in path.read_text() and "f(int64[])" in path.read_text()


KILLED_WRITER = """
import os, sys, time
sys.path[:0] = [{root!r}, {folder!r}]
import numpy as np
import {name} as m

def stall(fd):  # the temporary file is written, not yet renamed: stop here
    open({signal_file!r}, "w").close()
    time.sleep(60)

os.fsync = stall
m.f(np.array([1.5]), backend="numpy")
"""


def test_a_process_killed_while_writing_leaves_the_last_good_module(generated, tmp_path):
    module, path, good = generated
    signal_file = tmp_path / "writing"
    script = KILLED_WRITER.format(
        root=ROOT, folder=str(tmp_path), name=module.__name__, signal_file=str(signal_file)
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    writer = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not signal_file.exists():
        assert writer.poll() is None, writer.stderr.read().decode()
        assert time.monotonic() < deadline, "the writer never reached its write"
        time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert path.read_bytes() == good  # whole, and still the old one
    # What the kill left is a temporary file, never a module.
    assert all(name.startswith(".autobatch-") and name.endswith(".tmp") for name in leftovers(path.parent))
    assert module.f(np.array([1.5, 3.0]), backend="numpy").tolist() == [2.5, 6.0]
    assert loader.read(str(path)).count("def f_") >= 2


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path):
    folder = tmp_path / "generated"
    folder.mkdir()
    stale, fresh = folder / ".autobatch-killed.tmp", folder / ".autobatch-writing.tmp"
    stale.write_text("half a module")
    fresh.write_text("a module being written right now")
    hours_ago = time.time() - 2 * loader.STALE_TEMPORARY_SECONDS
    os.utime(stale, (hours_ago, hours_ago))
    loader.write_atomic(str(folder / "m_np.py"), "VALUE = 1\n")
    assert not stale.exists()  # left by a writer killed long ago
    assert fresh.exists()  # may belong to a writer still running
    assert (folder / "m_np.py").read_text() == "VALUE = 1\n"


def test_a_written_module_is_readable_by_everyone_not_only_its_writer(tmp_path):
    path = tmp_path / "m_np.py"
    loader.write_atomic(str(path), "VALUE = 1\n")
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    path.chmod(0o664)
    loader.write_atomic(str(path), "VALUE = 2\n")
    assert path.stat().st_mode & 0o777 == 0o664  # a rewrite keeps the mode


BROKEN = """
from pkg.helpers import ctx


def refuses(n):
    raise ArithmeticError("refuses every input")


@ctx.batch
def broken(n):
    return refuses(n)
"""


def test_one_function_failing_does_not_touch_another_functions_module(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.autobatch]\nsources = ["pkg"]\nbackends = ["numpy"]\n\n'
        '[tool.autobatch.signatures]\n"pkg/good.py::double" = ["(int64[])"]\n'
        '"pkg/bad.py::broken" = ["(int64[])"]\n'
    )
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("from transpiler import Context\n\nctx = Context()\n")
    good_source = "from pkg.helpers import ctx\n\n\n@ctx.batch\ndef double(n):\n    return n * {}\n"
    (pkg / "good.py").write_text(good_source.format(2))
    (pkg / "bad.py").write_text(BROKEN.replace("return refuses(n)", "return n"))  # fine, for now
    assert run_cli(tmp_path, "generate").returncode == 0
    bad_module = tmp_path / "generated" / "pkg" / "bad_np.py"
    last_good = bad_module.read_bytes()

    (pkg / "bad.py").write_text(BROKEN)  # now it fails to generate...
    (pkg / "good.py").write_text(good_source.format(3))  # ...and this one is stale
    out = run_cli(tmp_path, "generate")
    assert out.returncode == 1, out.stderr
    assert "cannot generate pkg/bad.py" in out.stderr and "refuses every input" in out.stderr
    assert "wrote generated/pkg/good_np.py" in out.stderr
    assert bad_module.read_bytes() == last_good
    check = run_cli(tmp_path, "check", "pkg/good.py")
    assert check.returncode == 0, check.stdout + check.stderr
    assert leftovers(bad_module.parent) == []


CALLER = """
import sys
sys.path[:0] = [{root!r}, {folder!r}]
import numpy as np
import {name} as m
print(m.f(np.array([{value}]), backend="numpy").tolist())
"""


def test_two_processes_generating_one_module_at_once(tmp_path, monkeypatch):
    module, _ = write_module(tmp_path, monkeypatch, SOURCE)
    path = module_file(tmp_path, module)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    scripts = [
        textwrap.dedent(CALLER).format(root=ROOT, folder=str(tmp_path), name=module.__name__, value=v)
        for v in ("5", "1.5")  # two signatures: each process writes its own program
    ]
    procs = [
        subprocess.Popen([sys.executable, "-c", s], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for s in scripts
    ]
    outputs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert [o.strip() for o, _ in outputs] == ["[10]", "[2.5]"]
    text = loader.read(str(path))
    assert not loader.is_hand_edited(text)  # whole: its body matches its hash
    compile(text, str(path), "exec")
    assert leftovers(path.parent) == []
    # Whichever program the last writer kept, both signatures run now.
    assert module.f(np.array([5]), backend="numpy").tolist() == [10]
    assert module.f(np.array([1.5]), backend="numpy").tolist() == [2.5]
