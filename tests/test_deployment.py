"""The checked-in artifact runs where the compiler is not installed.

A deployment installs `autobatch` alone (NumPy; TensorFlow for *_tf.py
modules): black is absent, and gast too unless TensorFlow is there (it
requires gast for its own AutoGraph).  These tests build such an
environment from this one (a folder of links to the installed packages,
minus the compiler's, on a `python -S` path, so the missing packages are
not on the path at all, not merely blocked), run tests/deployment_probe.py
in it, and compare every program's result with the same call here.
"""

import json
import os
import subprocess
import sys
import sysconfig

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import deployment_probe  # noqa: E402

ROOT = deployment_probe.ROOT
# Top-level names in site-packages that belong to the compiler (or to this
# project's own editable install, which the probe gets from its path).
COMPILER_PACKAGES = ("gast", "black", "blib2to3", "_black_version", "astunparse")
TENSORFLOW_PACKAGES = ("tensorflow", "tf_keras", "keras", "tensorflow_probability", "tensorboard")


def _excluded(entry, packages):
    base = entry.split("-")[0].split(".")[0].lower()
    return (
        base in packages
        or base.startswith("__editable__")
        or base in ("autobatch", "transpiler", "autobatch_runtime")
        or entry.endswith(".pth")
    )


def deployment_path(tmp_path, without):
    """A folder linking every installed package except those in `without`."""
    site = sysconfig.get_paths()["purelib"]
    folder = tmp_path / "site-packages"
    folder.mkdir()
    for entry in sorted(os.listdir(site)):
        if not _excluded(entry, without):
            os.symlink(os.path.join(site, entry), folder / entry)
    return str(folder)


def run_probe(tmp_path, backend, without):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, deployment_path(tmp_path, without)]))
    env.pop("AUTOBATCH_FROZEN", None)  # the probe sets it
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    done = subprocess.run(
        [sys.executable, "-S", os.path.join(ROOT, "tests", "deployment_probe.py"), backend],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_probe_environment_lacks_the_compiler(tmp_path):
    """The environment really lacks gast and black (not a probe that passes anyway)."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([ROOT, deployment_path(tmp_path, COMPILER_PACKAGES)]),
    )
    code = "import importlib.util as u; print(u.find_spec('gast'), u.find_spec('black'), u.find_spec('numpy') is not None)"
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["None", "None", "True"], out.stderr
    # And the compiler itself cannot run there: generating needs gast.
    code = "import transpiler.pipeline"
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode != 0 and "gast" in out.stderr


def close(a, b):
    """Equal results, floats to within rounding (two backends' math may differ in the last bit)."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, list) or isinstance(b, list):
        return False
    return a == b or (isinstance(a, float) and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)))


@pytest.fixture(scope="module")
def numpy_report(tmp_path_factory):
    """The probe's report where neither the compiler nor TensorFlow is installed."""
    return run_probe(tmp_path_factory.mktemp("numpy"), "numpy", COMPILER_PACKAGES + TENSORFLOW_PACKAGES)


def test_numpy_modules_and_examples_run_without_the_compiler_or_tensorflow(numpy_report):
    expected = deployment_probe.program_results("numpy")  # the same calls here
    assert numpy_report["programs"] == expected
    # Every program of every module ran (the probe cannot skip one silently).
    assert len(expected) == len(deployment_probe.generated_modules("numpy")) > 10
    assert numpy_report["cases"] == len(__import__("examples.corpus").corpus.CASES)
    assert 0.2 < numpy_report["sampler_variance"] < 3.0


def test_tensorflow_modules_and_examples_run_without_the_compiler(tmp_path, numpy_report):
    # TensorFlow requires gast and astunparse (its AutoGraph): black goes.
    without = tuple(p for p in COMPILER_PACKAGES if p not in ("gast", "astunparse"))
    report = run_probe(tmp_path, "tensorflow", without)
    # Each TensorFlow program gives its NumPy twin's results.
    twins = {name[: -len("_tf")]: programs for name, programs in report["programs"].items()}
    numpy_twins = {name[: -len("_np")]: p for name, p in numpy_report["programs"].items()}
    assert sorted(twins) == sorted(numpy_twins)
    for module, programs in twins.items():
        assert sorted(programs) == sorted(numpy_twins[module]), module
        for key, result in programs.items():
            assert close(result, numpy_twins[module][key]), (module, key)


def test_a_missing_program_without_the_compiler_says_what_to_install(tmp_path):
    """Unfrozen, a call whose module is missing would compile; without the
    compiler it says so, rather than failing on `import gast` deep inside."""
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.autobatch]\nsources = ["pkg"]\nbackends = ["numpy"]\n')
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "twice.py").write_text(
        "from autobatch import Context\n\nctx = Context()\n\n\n@ctx.batch\ndef twice(n):\n    return 2 * n\n"
    )
    site = deployment_path(tmp_path, COMPILER_PACKAGES + TENSORFLOW_PACKAGES)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(project), ROOT, site]))
    env.pop("AUTOBATCH_FROZEN", None)
    code = "from pkg.twice import twice; twice([1, 2], backend='numpy')"
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("transpiler.errors.StaleGeneratedCodeError") and "twice_np.py is missing" in last
    assert "pip install 'autobatch[compiler]'" in last and "autobatch generate pkg/twice.py" in last
    assert not (project / "autobatch.lock").exists()
