"""The profiler's counters against counts done by hand."""

import numpy as np
import pytest

from tests import programs
from transpiler import cli


@pytest.mark.parametrize(
    "kwargs", [dict(backend="numpy"), dict(backend="tensorflow", xla=True)], ids=["numpy", "xla"]
)
def test_counts_of_a_countdown_loop_match_a_hand_count(kwargs):
    # countdown_loop(n): entry block, then one rotated loop block per trip
    # (if-converted body + test), then the return.  By hand, for n = [3, 0, 5]:
    # trips per example: 3 -> 2 (3-1=2, 2//2=1, 1-1=0: 3 trips)... computed below.
    plain = programs.ctx.plain("countdown_loop")
    n = np.array([3, 0, 5])
    result, profile = programs.countdown_loop(n, profile=True, **kwargs)
    assert np.asarray(result).tolist() == [plain(int(k)) for k in n]
    trips = [plain(int(k)) for k in n]  # the function returns its number of trips
    # Every example runs the entry block once: one iteration, all 3 examples.
    assert profile.block_runs[0] == 1 and profile.block_active[0] == 3
    # The loop block runs once per trip of the longest example, and sums the
    # examples still looping at each run.
    loop = [k for k, line in enumerate(profile.block_lines) if "if n % 2 == 0" in line]
    assert len(loop) == 1
    assert profile.block_runs[loop[0]] == max(trips)
    assert profile.block_active[loop[0]] == sum(trips)
    assert profile.iterations == sum(profile.block_runs)
    assert profile.utilization == pytest.approx(
        sum(profile.block_active) / (profile.iterations * 3)
    )


def test_fib_scheduling_needs_no_more_iterations_than_its_longest_example():
    from examples.fib import fib

    _, alone = fib(np.array([12]), backend="numpy", profile=True)
    _, batch = fib(np.arange(0, 13), backend="numpy", profile=True)
    assert batch.iterations <= 1.25 * alone.iterations
    calls = 2 * 233 - 1  # fib(12) = 233 with fib(0) = fib(1) = 1: 465 calls
    assert alone.iterations <= 3 * calls
    # By hand: the top call tests `n <= 1` in an iteration of its own; every
    # other call is tested at its call site (thread_entry_tests), and a leaf
    # (233 of them) returns 1 right there (return_at_call_sites): no
    # iteration.  An inner call (232) takes three: before the first call,
    # between the calls, after the second; but one whose second call is a
    # leaf (n = 2 or 3: 89 + 55 = 144 of them) adds and returns in the
    # iteration between the calls: two.
    assert alone.iterations == 1 + 3 * 232 - 144


def test_profile_command(capsys):
    assert cli.main(["profile", "examples.fib:fib", "--args", "[3, 7, 4, 5]"]) == 0
    out = capsys.readouterr().out
    assert "result: [3, 21, 5, 8]" in out
    assert "iterations over 4 examples" in out and "examples/fib.py:12" in out


@pytest.mark.parametrize(
    "kwargs", [dict(backend="numpy"), dict(backend="tensorflow", xla=True)], ids=["numpy", "xla"]
)
def test_mutual_recursion_takes_one_iteration_per_activation(kwargs):
    # is_even(n) -> is_odd(n - 1) -> ... -> a call with n == 0: n + 1
    # activations.  Each tests n == 0 and either returns or jumps to the
    # other function's test in the same block (merge_early_returns), so by
    # hand is_even(n) alone takes n + 1 iterations (it took 2 per activation
    # before).
    from examples.even_odd import is_even

    for n in (0, 1, 4, 7):
        result, profile = is_even(np.array([n]), profile=True, **kwargs)
        assert bool(np.asarray(result)[0]) == (n % 2 == 0)
        assert profile.iterations == n + 1


def test_the_xla_sweep_runs_the_same_blocks_as_numpy():
    # With per-example vectors, XLA runs a sweep (one while loop per block)
    # instead of a switch: the sequence of blocks must not change, so every
    # counter matches the NumPy driver's, which runs one block per iteration.
    from examples.vectors import relax, spiral

    v = np.random.default_rng(3).normal(size=(6, 3))
    w = np.arange(12).reshape(6, 2)
    n = np.array([0, 1, 4, 2, 6, 3])
    for function, args in ((spiral, (v, w, n)), (relax, (v, n))):
        (_, by_numpy), (_, by_xla) = (
            function(*args, profile=True, **kwargs)
            for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True))
        )
        assert by_xla.block_runs == by_numpy.block_runs
        assert by_xla.block_active == by_numpy.block_active
        assert by_xla.deepest_call == by_numpy.deepest_call


def test_the_xla_sweep_stops_at_max_iterations_like_numpy():
    import transpiler
    from examples.vectors import relax

    v = np.ones((3, 3))
    n = np.array([2, 40, 5])
    messages = []
    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        with pytest.raises(transpiler.IterationLimitError) as error:
            relax(v, n, max_iterations=10, **kwargs)
        messages.append(str(error.value))
        assert np.allclose(relax(v, n, max_iterations=60, **kwargs), relax(v, n, backend="numpy"))
    assert messages[0] == messages[1] and "example(s) [1]" in messages[0]


@pytest.mark.parametrize(
    "kwargs", [dict(backend="numpy"), dict(backend="tensorflow", xla=True)], ids=["numpy", "xla"]
)
def test_a_loop_test_that_calls_a_primitive_rotates_like_one_of_operators(kwargs):
    """`while magnitude(x * x - a) > tol:` (a primitive) becomes one self-testing loop block,
    as the same test written with operators does: one iteration per trip,
    not two (test block, body block)."""
    a = np.array([2.0, 9.0, 1e6, 1.0])
    tol = np.array([1e-9])
    runs = {}
    for name in ("root_by_operators", "root_by_primitive"):
        plain = programs.ctx.plain(name)
        steps, profile = getattr(programs, name)(a, tol, profile=True, **kwargs)
        assert np.asarray(steps).tolist() == [plain(x, 1e-9) for x in a]
        runs[name] = profile
    trips = max(np.asarray(programs.root_by_primitive(a, tol, backend="numpy")).tolist())
    assert trips > 5
    assert runs["root_by_primitive"].iterations == runs["root_by_operators"].iterations
    # Entry, the loop block once per trip of the longest example, the return.
    assert runs["root_by_primitive"].iterations <= trips + 2
