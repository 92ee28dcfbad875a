"""A process with 4 logical CPU devices that runs tests on request.

TensorFlow fixes its devices when its runtime starts, and in a pytest
process that happened long before tests/test_distribute.py runs (with one
CPU device).  So that module's tests that need 4 devices run here: one
process, started once per test module, that splits the CPU into 4 logical
devices before anything else touches TensorFlow, then runs the tests it is
sent by name, one per line on stdin, and answers each with one JSON line
{"name", "ok", "error"} on its original stdout.  One process keeps the
cost of starting TensorFlow and of compiling programs to once for all of
them.

    python -m tests.device_worker tests.test_distribute
"""

import importlib
import json
import os
import sys
import traceback

DEVICES = 4


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # As the autouse fixture of tests/conftest.py: never regenerate examples/.
    os.environ["AUTOBATCH_FROZEN"] = "1"
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what tests and TensorFlow print goes to stderr, not into replies
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(DEVICES)]
    )
    module = importlib.import_module(sys.argv[1])

    def reply(**fields):
        replies.write(json.dumps(fields) + "\n")
        replies.flush()

    reply(name="", ok=True, error="")
    for line in sys.stdin:
        name = line.strip()
        try:
            getattr(module, name).body()
        except BaseException:  # noqa: B902 - any failure is the test's answer
            reply(name=name, ok=False, error=traceback.format_exc())
        else:
            reply(name=name, ok=True, error="")


if __name__ == "__main__":
    main()
