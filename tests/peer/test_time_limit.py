"""The peer tests' time limit (conftest.py) fails a test that runs too long,
in Python code and in TensorFlow's C++ code alike, instead of hanging.

Each case runs pytest on a small test file of its own, in a subprocess,
beside a copy of the peer conftest, with a limit of one second.
"""

import os
import shutil
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def run_pytest(tmp_path, body):
    shutil.copy(os.path.join(HERE, "conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_stuck.py").write_text(textwrap.dedent(body))
    env = dict(os.environ, AUTOBATCH_PEER_TEST_LIMIT_S="1", AUTOBATCH_PEER_TEST_GRACE_S="2")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_stuck.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_test_stuck_in_python_fails_by_name_and_the_next_one_runs(tmp_path):
    done = run_pytest(
        tmp_path,
        """
        import time

        def test_stuck():
            while True:
                time.sleep(0.05)

        def test_next():
            pass
        """,
    )
    assert done.returncode == 1
    assert "test_stuck.py::test_stuck ran past its 1 s limit" in done.stdout
    assert "1 failed, 1 passed" in done.stdout


def test_a_test_stuck_in_tensorflows_cpp_code_ends_the_run_naming_it(tmp_path):
    done = run_pytest(
        tmp_path,
        """
        import tensorflow as tf

        def test_stuck():
            with tf.Graph().as_default():
                forever = tf.while_loop(lambda i: i >= 0, lambda i: i + 1, [tf.constant(0)])
                with tf.compat.v1.Session() as session:
                    session.run(forever)
        """,
    )
    assert done.returncode == 1
    assert "test_stuck.py::test_stuck is still running 3 s after it started" in done.stderr
    assert "session.run(forever)" in done.stderr or "in test_stuck" in done.stderr
