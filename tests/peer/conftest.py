"""A time limit for each peer test: one that runs too long fails, never hangs.

The peer tests run TensorFlow Probability's NUTS client in TF1 graph mode,
where a batched call once built a loop that never ended (issue 35).  A
Python signal cannot interrupt a thread busy in TensorFlow's C++ code (a
`Session.run`, an eager loop: the handler waits until it returns), so there
are three guards, each later than the one before:

- at the limit, SIGALRM fails the test by name, wherever it is in Python
  code (graph construction, tracing, a host loop);
- GRACE_S later, a watchdog thread (TensorFlow releases the GIL while it
  computes) prints the test's name and every thread's stack to the
  terminal, and ends the process with exit status 1: the run fails
  instead of waiting for ever;
- GRACE_S after that, should the GIL never be released, faulthandler ends
  the process from C (its stacks may then stay in pytest's capture).

Graph-mode tests also give their sessions `operation_timeout_in_ms`
(test_nuts_client.SESSION_TIMEOUT_MS), which cancels a running graph and
raises DeadlineExceededError, so they fail one by one before any guard.

AUTOBATCH_PEER_TEST_LIMIT_S sets the limit in seconds (0 turns the guards
off), AUTOBATCH_PEER_TEST_GRACE_S the time between guards.
"""

import faulthandler
import os
import signal
import sys
import threading

import pytest

LIMIT_S = float(os.environ.get("AUTOBATCH_PEER_TEST_LIMIT_S", "300"))
GRACE_S = float(os.environ.get("AUTOBATCH_PEER_TEST_GRACE_S", "30"))


@pytest.fixture(autouse=True)
def time_limit(request):
    """Fails the test past LIMIT_S (see the module's docstring)."""
    if LIMIT_S <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return
    nodeid = request.node.nodeid

    def expire(signum, frame):
        pytest.fail(f"{nodeid} ran past its {LIMIT_S:.0f} s limit (AUTOBATCH_PEER_TEST_LIMIT_S)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
    watchdog = threading.Timer(LIMIT_S + GRACE_S, end_stuck_run, (request.config, nodeid))
    watchdog.daemon = True
    watchdog.start()
    faulthandler.dump_traceback_later(LIMIT_S + 2 * GRACE_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        watchdog.cancel()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def end_stuck_run(config, nodeid):
    """Prints the stuck test's name and stacks where the terminal shows them
    (pytest's capture suspended), then ends the process with status 1."""
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    sys.stderr.write(
        f"\n{nodeid} is still running {LIMIT_S + GRACE_S:.0f} s after it started, in code "
        "that a signal cannot interrupt; ending the test run (exit status 1). Stacks:\n"
    )
    sys.stderr.flush()
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    sys.stderr.flush()
    os._exit(1)
