"""The predecessor's whole `Context` surface, with its documented examples."""

import numpy as np
import pytest

import transpiler
from transpiler import Context, TensorType, instructions, truthy
from tests import programs


def test_exported_names():
    for name in ("Context", "truthy", "TensorType", "Type", "NumpyBackend", "TensorFlowBackend"):
        assert hasattr(transpiler, name)
    assert transpiler.instructions is instructions


def test_primop_contract():
    op = instructions.PrimOp(("x", "y"), "z", "x * y + 1")
    assert op.vars_in == ("x", "y") and op.vars_out == "z"
    assert op.function(np.array([2, 3]), np.array([4, 5])).tolist() == [9, 16]
    assert op.skip_push_mask == frozenset()
    replaced = op.replace(vars_out="w")
    assert replaced.vars_out == "w" and replaced.expr == op.expr and op.vars_out == "z"


def test_fibonacci_documented_example():
    from examples.fib import fib

    result = fib(np.array([6, 7, 8, 9]), backend="numpy", max_stack_depth=15)
    assert result.tolist() == [13, 21, 34, 55]


def test_even_odd_with_type_inference_annotations():
    ctx = Context(generated_dir=programs.ctx.generated_dir)
    int32 = lambda arg_types: [TensorType(np.int32, ())]  # noqa: E731
    from examples import even_odd

    ctx.batch_uncurried(even_odd.is_even.function, int32)
    ctx.batch_uncurried(even_odd.is_odd.function, int32)
    typed = ctx.program_compiled("is_even", [TensorType(np.int64, ())], "numpy")
    assert dict(typed.returns)["is_even"] == TensorType(np.int32, ())
    result = ctx._functions["is_even"](np.array([5, 6, 8, 9], np.int32), backend="numpy")
    assert result.dtype == np.int32
    assert result.astype(bool).tolist() == [False, True, True, False]


def test_iota_sum_gcd_and_namedtuples():
    from examples.gcd import gcd
    from examples.iota_sum import iota_sum
    from examples.rotate import Point, rotate

    assert iota_sum(np.array([12, -13, 100]), np.array([0, 0, 0]),
                    backend="numpy", max_stack_depth=3).tolist() == [78, 0, 5050]
    assert gcd(np.array([7, 12, 49]), np.array([9, 9, 56]), backend="numpy").tolist() == [1, 3, 7]
    turned = rotate(Point(np.array([1.0]), np.array([0.0])), np.array([1]), backend="numpy")
    assert isinstance(turned, Point) and turned.y.tolist() == [1.0]


def test_function_names_module_and_program():
    from examples.even_odd import ctx

    assert ctx.function_names() == ["is_even", "is_odd"]
    module = ctx.module()
    assert isinstance(module, instructions.Module)
    assert [f.name for f in module.functions] == ["is_even", "is_odd"]
    program = ctx.program("is_odd")
    assert isinstance(program, instructions.Program)
    assert [f.name for f in program.functions] == ["is_odd", "is_even"]
    assert str(program) == str(ctx.program("is_odd"))  # deterministic text
    assert "is_odd_0:" in str(program)  # block names from the source, not hashes
    with pytest.raises(ValueError, match="not a batched function"):
        ctx.program("is_prime")


def test_compiled_and_lowered_programs_are_cached_on_the_signature():
    from examples.fib import ctx

    int64 = [TensorType(np.int64, ())]
    assert ctx.program_compiled("fib", int64, "numpy") is ctx.program_compiled("fib", int64, "numpy")
    assert ctx.program_lowered("fib", int64, "numpy") is ctx.program_lowered("fib", int64, "numpy")
    int32 = [TensorType(np.int32, ())]
    assert ctx.program_lowered("fib", int32, "numpy") is not ctx.program_lowered("fib", int64, "numpy")
    assert ctx.lowered_for_args("fib", [np.array([1, 2])], "numpy") is ctx.program_lowered(
        "fib", int64, "numpy"
    )
    untyped = ctx.program_compiled("fib")
    assert untyped.types is None
    lowered = ctx.program_lowered("fib")  # untyped: not executable, but readable
    assert "push-branch" in str(lowered) and "fib.n" in str(lowered)


def test_a_new_signature_makes_a_new_program_batch_size_does_not(tmp_path):
    result_a = programs.helper_sum(np.array([1, 2, 3]), backend="numpy")
    result_b = programs.helper_sum(np.arange(10), backend="numpy")
    assert result_a.tolist() == [2, 3, 4] and result_b.tolist() == list(range(1, 11))
    entries = [k for k in programs.ctx._entries if k[0] == "helper_sum"]
    assert len(entries) == 1  # one program for every batch size
    programs.helper_sum(np.array([1.5]), backend="numpy")
    entries = [k for k in programs.ctx._entries if k[0] == "helper_sum"]
    assert len(entries) == 2  # a new dtype: a new specialization


def test_block_code_cache_is_reused_across_calls():
    cache = {}
    programs.calls_helper(np.array([1, 2]), backend="numpy", block_code_cache=cache)
    assert len(cache) == 1
    entry = next(iter(cache.values()))
    programs.calls_helper(np.array([3]), backend="numpy", block_code_cache=cache)
    assert next(iter(cache.values())) is entry and len(cache) == 1


def test_prepare_generates_and_imports_without_running(tmp_path):
    """`prepare` does what a call does before it runs: afterwards the module
    exists and a frozen Context over the same folder runs the call."""
    from examples import fib as fib_module

    source = fib_module.fib.function
    ctx = Context(generated_dir=str(tmp_path))
    fib = ctx.batch(source)
    fib.prepare(np.array([3, 4]), backend="numpy")
    [written] = list(tmp_path.rglob("fib_np.py"))
    assert "fib(int64[])" in written.read_text()
    assert not list(tmp_path.rglob("fib_tf.py"))  # only the backend asked for
    frozen = Context(generated_dir=str(tmp_path), frozen=True).batch(source)
    assert frozen(np.array([6, 1]), backend="numpy", max_stack_depth=15).tolist() == [13, 1]
    with pytest.raises(transpiler.StaleGeneratedCodeError):
        frozen.prepare(np.array([2.5]), backend="numpy")  # float64: not generated


def test_execution_counts_fib_does_at_most_twenty_batched_additions():
    from examples.fib import fib

    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        result, profile = fib(np.array([3, 7, 4, 5]), profile=True, **kwargs)
        assert np.asarray(result).tolist() == [3, 21, 5, 8]
        adds = [runs for line, runs in zip(profile.block_lines, profile.block_runs)
                if "fib(n - 1) + fib(n - 2)" in line]
        assert adds[-1] <= 20  # the block that adds runs once per batch step needing it
        assert profile.iterations == sum(profile.block_runs)
        assert 0 < profile.utilization <= 1


def test_dry_run_runs_the_original_on_each_example_and_stacks():
    seen = []
    ctx = Context(generated_dir=programs.ctx.generated_dir)

    def countdown(n):
        seen.append(type(n).__name__)
        if n <= 0:
            return n
        return countdown(n - 1)

    batched = ctx.batch(countdown)
    result = batched(np.array([3, 0, 1]), dry_run=True)
    assert isinstance(result, np.ndarray) and result.tolist() == [0, 0, 0]
    # Each example is a Python int; nested batched calls run as Python too.
    assert seen == ["int"] * (4 + 1 + 2)


def test_dry_run_gives_each_example_its_own_vector():
    ctx = Context(generated_dir=programs.ctx.generated_dir)

    def head_and_length(v, k):
        # per-example meaning: len(v) is the vector's length, not the batch's
        v[0] = k
        return len(v), v[0] + v[-1]

    batched = ctx.batch(head_and_length)
    v = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    lengths, sums = batched(v, np.array([10.0, 20.0]), dry_run=True)
    assert lengths.tolist() == [3, 3]
    assert sums.tolist() == [13.0, 26.0]
    assert v[:, 0].tolist() == [1.0, 4.0]  # the caller's batch is left as it was


def test_dry_run_as_given_calls_the_original_once_with_truthy():
    seen = []
    ctx = Context(generated_dir=programs.ctx.generated_dir)

    def countdown(n):
        seen.append(type(n).__name__)
        if truthy(n <= 0):
            return n
        return countdown(n - 1)

    batched = ctx.batch(countdown)
    assert batched(np.array([3]), dry_run="as_given").tolist() == [0]
    assert seen == ["ndarray"] * 4  # the predecessor's meaning: arrays as given
    assert truthy(np.array([True])) is True
    both = np.array([True, False])
    assert truthy(both) is both  # more than one value: a no-op
    with pytest.raises(ValueError, match="dry_run='each'.*True.*'as_given'"):
        batched(np.array([3]), dry_run="each")


def test_truthy_is_dropped_from_batched_code():
    result = programs.uses_truthy(np.array([-2, 0, 5]), backend="numpy")
    assert result.tolist() == [2, 0, 5]


@pytest.mark.parametrize("backend", ["numpy", "tensorflow"])
def test_stackless_documented_example_and_mixing_modes(backend):
    from examples.fib import fib

    assert np.asarray(fib(np.array([3, 7, 4, 5]), backend=backend, stackless=True)).tolist() == [3, 21, 5, 8]
    # full and stackless calls mix in one Context
    assert np.asarray(fib(np.array([6, 9]), backend=backend)).tolist() == [13, 55]
    assert np.asarray(fib(np.array([6, 9]), backend=backend, stackless=True)).tolist() == [13, 55]


def test_stackless_under_tf_function():
    from examples.branches import quadrant
    from examples.fib import fib

    # not recursive: compiles under XLA
    result = quadrant(np.array([1, -1, -1, 1, 0]), np.array([1, 1, -1, -1, 5]),
                      stackless=True, xla=True, backend="numpy" if False else "tensorflow")
    assert np.asarray(result).tolist() == [1, 2, 3, 4, 0]
    # recursive: a clear error rather than an endless trace
    with pytest.raises(RuntimeError, match="stackless mode runs recursive programs eagerly"):
        fib(np.array([3, 7]), stackless=True, xla=True)


def test_stackless_calls_between_functions():
    result = programs.loop_calls(np.arange(0, 6), backend="numpy", stackless=True)
    plain = programs.ctx.plain("loop_calls")
    assert result.tolist() == [plain(k) for k in range(0, 6)]


def test_a_primitive_runs_once_per_typing_and_once_per_block_run():
    programs.EXECUTIONS.clear()
    programs.ctx.__dict__.pop("_built_cache", None)
    programs.ctx._entries.clear()
    result = programs.counted(np.array([4, -5, 6, 7, 8]), backend="numpy")
    assert result.tolist() == [4, -5, 6, 7, 8]
    # Type inference evaluates each distinct expression once per typing of its
    # inputs, on placeholders (NumPy: a batch of 13): the two identical
    # `count_executions(x)` share one evaluation; none when the module is
    # already generated.  Running calls it once per block run: the two
    # returns are two blocks, each run once for this batch.
    assert [n for n in programs.EXECUTIONS if n == 5] == [5, 5]
    assert [n for n in programs.EXECUTIONS if n != 5] in ([], [13])


def test_the_readme_lists_every_call_keyword():
    """The README's calling contract names each keyword a call accepts (and
    no keyword it would refuse)."""
    import os
    import re

    from tests.conftest import ROOT
    from transpiler.context import _CALL_KEYWORDS

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("- Keywords: ")
    paragraph = readme[start : readme.index("Anything else is a `TypeError`", start)]
    listed = set(re.findall(r"`([a-z_]+)`", paragraph)) - {"tensorflow", "numpy"}
    assert listed == set(_CALL_KEYWORDS)
