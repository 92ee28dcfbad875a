"""One batched call over many replicas, many processes, or in chunks.

The oracle (batched == plain Python per example) must hold however the
batch is cut: over 4 replicas of a MirroredStrategy (4 logical CPU devices,
so it runs on a 2-core machine without accelerators), across two worker
processes of a MultiWorkerMirroredStrategy, and in `max_batch` chunks.
Errors must name examples by their place in the caller's batch, not in a
shard, and profiles must count every shard's work.

Tests marked `on_four_devices` run in tests/device_worker.py, a process
that configures the 4 devices before TensorFlow starts (this process
started it long ago with one); the others run here.
"""

import json
import os
import pathlib
import select
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from autobatch_runtime import distribute
from examples import collatz, fib, vectors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLICAS = 4


def on_four_devices(body):
    """Runs the test's body in the 4-device worker (see the module docstring)."""

    def test(devices):
        devices.run(body.__name__)

    test.__name__, test.__doc__, test.body = body.__name__, body.__doc__, body
    return test


class DeviceWorker:
    """tests/device_worker.py, started once for this module."""

    STARTUP_S, TEST_S = 120, 300

    def __init__(self):
        self.log = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.device_worker", __name__],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self.reply(self.STARTUP_S)

    def reply(self, timeout):
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.close()
            self.log.seek(0)
            pytest.fail(
                f"the 4-device worker gave no answer within {timeout} s; its stderr ends:\n"
                + self.log.read()[-3000:],
                pytrace=False,
            )
        return json.loads(line)

    def run(self, name):
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        answer = self.reply(self.TEST_S)
        if not answer["ok"]:
            pytest.fail(f"in the 4-device worker:\n{answer['error']}", pytrace=False)

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def devices():
    worker = DeviceWorker()
    yield worker
    worker.close()


def mirrored():
    """A MirroredStrategy over the worker's 4 logical CPU devices."""
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy([f"/cpu:{k}" for k in range(REPLICAS)])
    assert strategy.num_replicas_in_sync == REPLICAS
    return strategy


def per_example(batched, *args):
    """The plain Python function on each example: the oracle."""
    plain = batched.context.plain(batched.name)
    return [plain(*(a[k] for a in args)) for k in range(len(args[0]))]


def assert_oracle(batched, args, out):
    expected = per_example(batched, *args)
    if isinstance(out, tuple):
        for part, column in zip(out, zip(*expected)):
            np.testing.assert_allclose(np.asarray(part), np.stack(column), rtol=1e-12)
    else:
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


# ---- one process, 4 replicas --------------------------------------------------


@on_four_devices
def test_fib_and_collatz_on_four_replicas_equal_plain_python_graph_and_xla():
    """Recursion (fib: stacks per replica) and a loop (Collatz), on 103
    examples (not divisible by 4), in TF graph mode and under XLA
    (jit_compile inside strategy.run)."""
    strategy = mirrored()
    rng = np.random.default_rng(1)
    n = rng.integers(0, 16, 103)
    x = rng.integers(1, 300, 103)
    for xla in (False, True):
        assert_oracle(fib.fib, (n,), fib.fib(n, strategy=strategy, xla=xla))
        assert_oracle(collatz.collatz_steps, (x,), collatz.collatz_steps(x, strategy=strategy, xla=xla))


@on_four_devices
def test_vectors_and_tuple_results_on_four_replicas():
    """Per-example vectors through recursion, returned as a tuple (spiral)."""
    strategy = mirrored()
    rng = np.random.default_rng(2)
    v, w, n = rng.normal(size=(37, 3)), rng.integers(-9, 10, (37, 2)), rng.integers(0, 9, 37)
    out = vectors.spiral(v, w, n, strategy=strategy, xla=True)
    assert isinstance(out, tuple) and out[0].shape == (37, 3)
    assert_oracle(vectors.spiral, (v, w, n), out)


@on_four_devices
def test_uneven_and_tiny_batches():
    """Shards of unequal size, and batches smaller than the replica count
    (some replicas get no example), down to no example at all."""
    strategy = mirrored()
    n = np.array([9, 3, 12, 0, 7, 14, 1], np.int64)
    for size in (7, 5, 3, 2, 1, 0):
        for xla in (False, True):
            out = fib.fib(n[:size], strategy=strategy, xla=xla)
            assert np.asarray(out).shape == (size,)
            assert_oracle(fib.fib, (n[:size],), out)


@on_four_devices
def test_errors_name_examples_by_their_index_in_the_callers_batch():
    """Overflows in several shards, and an iteration limit, name caller indices."""
    from transpiler.errors import IterationLimitError, StackOverflowError

    strategy = mirrored()
    n = np.full(22, 5, np.int64)
    n[[1, 13, 20]] = 40  # shards of 22 over 4: [0, 5), [5, 11), [11, 16), [16, 22)
    for xla in (False, True):
        with pytest.raises(StackOverflowError, match=r"example\(s\) \[1, 13, 20\] recursed"):
            fib.fib(n, strategy=strategy, xla=xla, max_stack_depth=10)
    x = np.full(22, 1, np.int64)
    x[17] = 27  # 111 steps; the others finish at once
    with pytest.raises(IterationLimitError, match=r"example\(s\) \[17\] still running"):
        collatz.collatz_steps(x, strategy=strategy, xla=True, max_iterations=20)


@on_four_devices
def test_profile_sums_the_replicas_counters():
    """Each replica's counters are those of its shard run alone; the block
    runs and active examples of the call are their sums, and active
    example-steps do not depend on how the batch is cut."""
    strategy = mirrored()
    n = np.random.default_rng(3).integers(0, 16, 50)
    out, profile = fib.fib(n, strategy=strategy, xla=True, profile=True)
    _, whole = fib.fib(n, xla=True, profile=True)
    assert profile.batch == 50 and len(profile.pieces) == REPLICAS
    assert [p.batch for p in profile.pieces] == [12, 13, 12, 13]
    for piece in profile.pieces:
        _, alone = fib.fib(n[piece.start : piece.stop], xla=True, profile=True)
        assert piece.block_runs == alone.block_runs
        assert piece.block_active == alone.block_active
    assert profile.block_runs == tuple(np.sum([p.block_runs for p in profile.pieces], 0))
    assert profile.block_active == whole.block_active
    assert profile.deepest_call == whole.deepest_call
    assert 0 < min(profile.replica_utilization()) <= max(profile.replica_utilization()) <= 1
    assert "replica 3:" in profile.report()


@on_four_devices
def test_rounds_of_max_batch_per_replica():
    """With a strategy, `max_batch` caps each replica's program call: 61
    examples at 7 per replica are 3 rounds of 4 shards."""
    strategy = mirrored()
    n = np.random.default_rng(4).integers(0, 14, 61)
    out, profile = fib.fib(n, strategy=strategy, max_batch=7, xla=True, profile=True)
    assert_oracle(fib.fib, (n,), out)
    assert len(profile.pieces) == 12 and max(p.batch for p in profile.pieces) <= 7
    assert [p.start for p in profile.pieces[:5]] == [0, 7, 14, 21, 28]


@on_four_devices
def test_context_default_strategy_and_a_call_that_drops_it():
    """`Context(strategy=...)` shards every call; `strategy=None` on a call
    runs it on one device.  A generated module called without the compiler
    (`shard_call` on its entry) gives the same."""
    from generated.examples.fib_tf import fib as generated_fib
    from transpiler import Context

    strategy = mirrored()
    ctx = Context(strategy=strategy, generated_dir=tempfile.mkdtemp(), frozen=False)

    @ctx.batch
    def countdown(n):
        total = 0
        while n > 0:
            total = total + n
            n = n - 2
        return total

    n = np.arange(11, dtype=np.int64)
    _, sharded = countdown(n, profile=True)
    _, alone = countdown(n, profile=True, strategy=None)
    assert len(sharded.pieces) == REPLICAS and not hasattr(alone, "pieces")
    assert_oracle(countdown, (n,), countdown(n))
    direct = distribute.shard_call(generated_fib, (n,), strategy=strategy, xla=True)
    np.testing.assert_array_equal(np.asarray(direct), np.asarray(fib.fib(n)))


@on_four_devices
def test_nuts_on_four_replicas_gives_the_same_draws_as_one_device():
    """Random numbers are per chain (a hash of its seed and counter), so a
    chain's draws do not depend on the replica it runs on."""
    from examples import nuts_sampler
    from transpiler import Context

    target = nuts_sampler.Gaussian([1.0, -1.0, 0.5], np.diag([1.0, 2.0, 0.5]))
    x0 = np.random.default_rng(5).normal(size=(10, 3))
    seeds = np.arange(10) * 3 + 1
    one = nuts_sampler.Sampler(target, 0.4, backend="tensorflow", xla=True)
    four = nuts_sampler.Sampler(
        target, 0.4, backend="tensorflow", xla=True, context=Context(strategy=mirrored())
    )
    expected, got = one.sample(x0, seeds, 3), four.sample(x0, seeds, 3)
    np.testing.assert_array_equal(got.leapfrogs, expected.leapfrogs)
    # Up to the rounding of the model's batched matmul over other row counts.
    np.testing.assert_allclose(got.x, expected.x, rtol=1e-13, atol=1e-15)


# ---- chunks on one device (this process) --------------------------------------


@pytest.mark.parametrize("backend, xla", [("tensorflow", True), ("tensorflow", False), ("numpy", False)])
def test_max_batch_runs_chunks_with_the_same_results_counters_and_errors(backend, xla):
    from transpiler.errors import StackOverflowError

    n = np.random.default_rng(6).integers(0, 14, 45)
    out, profile = fib.fib(n, max_batch=10, backend=backend, xla=xla, profile=True)
    _, whole = fib.fib(n, backend=backend, xla=xla, profile=True)
    assert_oracle(fib.fib, (n,), out)
    assert [(p.start, p.stop) for p in profile.pieces] == [(0, 10), (10, 20), (20, 30), (30, 40), (40, 45)]
    assert profile.block_active == whole.block_active
    assert profile.block_runs == tuple(np.sum([p.block_runs for p in profile.pieces], 0))
    n[[3, 27, 44]] = 50
    with pytest.raises(StackOverflowError, match=r"example\(s\) \[3, 27, 44\]"):
        fib.fib(n, max_batch=10, backend=backend, xla=xla)


def test_max_batch_checks_the_stacks_of_one_chunk():
    """max_stack_bytes bounds what one program call allocates: a batch too
    big for it runs in chunks that fit."""
    from transpiler.errors import StackMemoryError

    n = np.arange(40) % 10
    with pytest.raises(StackMemoryError, match="batch 40"):
        fib.fib(n, max_stack_bytes=4000)
    np.testing.assert_array_equal(np.asarray(fib.fib(n, max_stack_bytes=4000, max_batch=8)), np.asarray(fib.fib(n)))


def test_bad_requests_are_refused_before_running():
    import tensorflow as tf

    one = tf.distribute.OneDeviceStrategy("/cpu:0")
    n = np.arange(5)
    with pytest.raises(ValueError, match="TensorFlow backend"):
        fib.fib(n, strategy=one, backend="numpy")
    with pytest.raises(ValueError, match="stack-based"):
        fib.fib(n, strategy=one, stackless=True)
    with pytest.raises(ValueError, match="max_batch must be a positive integer"):
        fib.fib(n, max_batch=0)


def test_generated_modules_know_no_devices_and_rt_call_takes_the_runner():
    """The runner reaches rt.call among an entry's **options: no generated
    module names it or a strategy, and a stackless entry called directly
    (without the Context's check) refuses one."""
    generated = pathlib.Path(__file__).resolve().parent.parent / "generated"
    for path in sorted(generated.rglob("*.py")):
        text = path.read_text()
        for word in ("runner", "strategy", "distribute", "max_batch"):
            assert word not in text, f"{path.name} names {word}"
    from generated.examples.fib_np import fib_stackless

    with pytest.raises(ValueError, match="stack-based"):
        distribute.shard_call(fib_stackless, (np.arange(5),), max_batch=2)


def test_pieces_are_contiguous_and_even():
    assert distribute.piece_bounds(0, 22, 4) == [0, 5, 11, 16, 22]
    assert distribute.piece_bounds(0, 2, 4) == [0, 0, 1, 1, 2]
    assert distribute.plan(10, 2, max_batch=3) == [[0, 3, 6], [6, 8, 10]]
    assert distribute.plan(0, 4) == [[0, 0, 0, 0, 0]]


# ---- two processes -------------------------------------------------------------


def free_ports(count):
    """Ports nothing listens on now (the OS picks them; closed again at once)."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_multi_worker_strategy_over_two_processes_gathers_every_example():
    """Two workers on 127.0.0.1 (MultiWorkerMirroredStrategy, TF_CONFIG), each
    calling a checked-in generated module with the whole batch: both get
    every example's result in the caller's order, and an overflow in each
    worker's shard names caller indices on both."""
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    workers = []
    for index in range(2):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", AUTOBATCH_FROZEN="1")
        env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        log = tempfile.TemporaryFile("w+")
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.multiworker_fib"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
        )
        workers.append((process, log))
    deadline = time.monotonic() + 240
    replies = []
    try:
        for process, log in workers:
            try:
                stdout, _ = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                stdout = ""
            log.seek(0)
            assert process.returncode == 0 and stdout.strip(), (
                f"worker exited {process.returncode}; stderr ends:\n{log.read()[-3000:]}"
            )
            replies.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for process, _ in workers:
            if process.poll() is None:
                process.kill()
                process.wait()
    plain = fib.fib.context.plain("fib")
    for reply in replies:
        assert reply["replicas"] == 2
        assert reply["fib"] == [plain(k) for k in reply["n"]]
        assert [p[:3] for p in reply["pieces"]] == [[0, 0, 11], [1, 11, 23]]
        assert "example(s) [2, 5] recursed deeper" in reply["overflow"]
        assert not reply["compiler_imported"]
