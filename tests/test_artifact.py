"""The checked-in tree is a pure function of the declared inputs, and `check` gates it."""

import os
import shutil
import subprocess
import sys
import time

from tests.conftest import ROOT
from transpiler import gate, inputs, loader

GENERATED = os.path.join(ROOT, "generated")


def _tracked_copy(destination):
    """The repository's files as git tracks them (or the folder minus its clutter)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True
    )
    if listed.returncode == 0 and listed.stdout:
        for rel in filter(None, listed.stdout.split("\0")):
            source = os.path.join(ROOT, rel)
            if os.path.isfile(source):
                target = os.path.join(destination, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(source, target)
        return
    shutil.copytree(
        ROOT, destination, dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info"),
    )


def _tree(folder):
    out = {}
    for path in gate.generated_files(folder):
        with open(path, "rb") as f:
            out[os.path.relpath(path, folder)] = f.read()
    return out


def test_rm_generated_then_generate_reproduces_the_checked_in_tree(tmp_path):
    copy = tmp_path / "repo"
    _tracked_copy(str(copy))
    shutil.rmtree(copy / "generated")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "transpiler", "generate", "-q", "--root", str(copy)],
        cwd=copy, capture_output=True, text=True, env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no TensorFlow start-up lines either
    assert _tree(str(copy / "generated")) == _tree(GENERATED)
    again = subprocess.run(
        [sys.executable, "-m", "transpiler", "check", "--root", str(copy)],
        cwd=copy, capture_output=True, text=True, env=env,
    )
    assert again.returncode == 0, again.stderr


def test_the_lock_file_is_sorted_one_program_a_line():
    with open(inputs.lock_path(ROOT), encoding="utf-8") as f:
        text = f.read()
    lines = inputs.read_lock(ROOT)
    assert lines == sorted(set(lines))
    assert text == inputs.lock_text(lines)
    for line in lines:
        path, name, signature, mode = inputs.parse_line(line)
        assert os.path.exists(os.path.join(ROOT, path)) and mode in ("", "stackless")


def test_check_on_this_repository_is_fast_and_imports_neither_tensorflow_nor_black():
    script = (
        "import sys, time\n"
        "start = time.perf_counter()\n"
        "from transpiler import cli\n"
        f"status = cli.main(['check', '--root', {ROOT!r}])\n"
        "print(status, 'tensorflow' in sys.modules, 'black' in sys.modules,"
        " time.perf_counter() - start)\n"
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    status, tf, black, seconds = out.stdout.split()
    assert (status, tf, black) == ("0", "False", "False"), out.stderr
    assert float(seconds) < 1.0 and wall < 5.0


def test_every_module_header_names_its_inputs_hash():
    for path in gate.generated_files(GENERATED):
        header = loader.read_header(loader.read(path))
        assert header["source"] and len(header["inputs-sha256"]) == 64
