"""A user's script that calls batched functions prints what it prints.

TensorFlow's loaders write start-up lines to stderr (oneDNN, CPU features,
absl) whatever TF_CPP_MIN_LOG_LEVEL says; the runtime imports TensorFlow
through autobatch_runtime/quiet.py, which keeps those out and lets every
other line through.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import sys
import numpy as np
from examples.fib import fib
from generated.examples import collatz_tf
print(fib(np.array([3, 4])).numpy().tolist(), collatz_tf.collatz_steps(np.array([6]), xla=True).numpy().tolist())
print("the script's own line", file=sys.stderr)
"""


def test_a_script_calling_batched_functions_gets_no_tensorflow_start_up_lines():
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}
    env["AUTOBATCH_FROZEN"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[3, 5] [8]\n"
    assert done.stderr == "the script's own line\n"


def test_lines_other_than_start_up_noise_go_through():
    from autobatch_runtime import quiet

    noise = "I0000 00:00:1795703107.081632   18888 port.cc:153] oneDNN custom operations are on."
    assert quiet._TF_NOISE.match(noise)
    assert quiet._TF_NOISE.match(
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
    )
    assert not quiet._TF_NOISE.match("Traceback (most recent call last):")
    assert not quiet._TF_NOISE.match("UserWarning: something the user should see")
    assert quiet.import_tensorflow() is sys.modules["tensorflow"]
