"""Per-stage tests: IR building, type inference, allocation, lowering, fusion."""

import numpy as np
import pytest

from transpiler import BatchTypeError, Context, TensorType, Type
from transpiler.ir import instructions as ir
from transpiler.ir import instructions, interpreter
from transpiler.passes import liveness
from tests import programs
from tests.programs import ctx

INT = [TensorType(np.int64, ())]


def lowered(name, sig=INT, backend="numpy"):
    return ctx.program_lowered(name, sig, backend)


def instructions_of(program, kind):
    out = [i for b in program.blocks for i in b.instructions if isinstance(i, kind)]
    terminators = [b.terminator for b in program.blocks]
    # a ReturnIf block returns for some examples and goes on with another terminator
    terminators += [t.otherwise for t in terminators if isinstance(t, ir.ReturnIf)]
    out += [t for t in terminators if isinstance(t, kind)]
    return out


def test_builder_hoists_calls_into_temporaries():
    from examples.fib import ctx as fib_ctx

    text = instructions.program_text(fib_ctx.program("fib"))
    assert "fib_1 = call fib(fib_1_n)" in text
    assert "fib_2 = call fib(fib_2_n)" in text
    assert "= fib_1 + fib_2" in text


def test_fib_saves_exactly_what_survives_a_recursive_call():
    from examples.fib import ctx as fib_ctx

    program = fib_ctx.program_lowered("fib", INT, "numpy")
    assert set(program.stacks) == {"fib.n", "fib.fib_1"}


def test_calls_test_the_callees_entry_condition_themselves():
    from examples.fib import ctx as fib_ctx

    program = fib_ctx.program_lowered("fib", INT, "numpy")
    # Both recursive calls branch on `n <= 1` themselves: the examples for
    # which it holds run `return 1` right there.  After the first call they
    # go straight on to its return block; the others push it and enter the
    # recursive arm.
    entry = program.blocks[0]
    assert isinstance(entry.terminator, ir.Branch)  # kept: the driver starts there
    leaf = [b for b in program.blocks if b.name == entry.terminator.true_target][0]
    (first,) = [b for b in program.blocks if isinstance(b.terminator, ir.PushBranch)]
    call = first.terminator
    assert call.returned_when is True
    assert (call.true_target, call.false_target) == (
        call.return_block,
        entry.terminator.false_target,
    )
    assert first.instructions[-len(leaf.instructions) :] == leaf.instructions
    assert "push-branch" in instructions.program_text(program)
    # After the second call there is only `fib_1 + fib_2` left to do, and
    # return: those examples do it in the same block (and push nothing),
    # the others push fib_1 and the return address and enter.
    (second,) = [b for b in program.blocks if isinstance(b.terminator, ir.ReturnIf)]
    assert isinstance(second.terminator.otherwise, ir.PushGoto)
    assert second.terminator.otherwise.target == entry.terminator.false_target
    pushes = [i for i in second.instructions if isinstance(i, ir.Push)]
    assert [p.variables for p in pushes] == [("fib.fib_1",)] and pushes[0].going_only
    assert not instructions_of(program, ir.Peek)


@pytest.mark.parametrize("name, returned", [("base_returns", True), ("base_clobbers", False)])
def test_a_call_site_returns_the_base_case_itself_only_if_that_clobbers_nothing(name, returned):
    program = lowered(name, INT * 2)
    calls = instructions_of(program, ir.PushBranch)
    if returned:
        # base_returns then only adds 1 and returns: that happens at the
        # call site too, in a block that returns or calls (ReturnIf)
        assert all(call.returned_when is not None for call in calls)
        assert any(isinstance(b.terminator, ir.ReturnIf) for b in program.blocks)
    else:
        assert calls and all(call.returned_when is None for call in calls)
        assert not any(isinstance(b.terminator, ir.ReturnIf) for b in program.blocks)
    plain = ctx.plain(name)
    n, acc = np.arange(0, 9), np.arange(9)[::-1] * 10
    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        result = getattr(programs, name)(n, acc, **kwargs)
        assert np.asarray(result).tolist() == [plain(int(a), int(b)) for a, b in zip(n, acc)]


def test_a_callee_that_only_returns_runs_at_the_call_site():
    program = lowered("calls_helper")  # helper_sum: `return n + 1`
    assert not instructions_of(program, ir.PushGoto)
    assert not instructions_of(program, ir.PushBranch)
    assert len(program.blocks) == 1
    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        result = programs.calls_helper(np.array([1, 5]), **kwargs)
        assert np.asarray(result).tolist() == [3, 11]


def test_a_callee_whose_entry_does_more_than_test_is_called_as_before():
    program = lowered("calls_divider")  # divides: arithmetic that may raise, no branch
    assert instructions_of(program, ir.PushGoto)
    assert not instructions_of(program, ir.PushBranch)


def test_non_recursive_call_saves_nothing():
    program = lowered("calls_divider")
    assert program.stacks == ()
    assert instructions_of(program, ir.PushGoto)  # still a real call
    assert np.asarray(programs.calls_divider(np.array([1, 5]), backend="numpy")).tolist() == [31, 15]


def test_tail_calls_become_jumps():
    from examples.even_odd import ctx as parity_ctx
    from examples.iota_sum import ctx as iota_ctx

    for context, name, sig in (
        (iota_ctx, "iota_sum", INT * 2),
        (parity_ctx, "is_even", INT),
    ):
        program = context.program_lowered(name, sig, "numpy")
        assert not instructions_of(program, ir.PushGoto), name
        assert program.stacks == ()


def test_a_tail_call_back_to_its_entry_test_loops_in_one_block():
    # gcd's `return gcd(a - b, b)` jumps to the entry test `if a == b:`. The
    # test is copied onto the jumping block, which then branches to itself
    # (one iteration per subtraction, not two); the entry block stays, since
    # the driver starts there.
    from examples.gcd import ctx as gcd_ctx
    from examples.gcd import gcd

    program = gcd_ctx.program_lowered("gcd", INT * 2, "numpy")
    entry = program.blocks[0]
    assert isinstance(entry.terminator, ir.Branch)
    loops = [
        b for b in program.blocks
        if isinstance(b.terminator, ir.Branch)
        and b.name in (b.terminator.true_target, b.terminator.false_target)
    ]
    assert len(loops) == 1 and loops[0] is not entry
    assert not any(isinstance(b.terminator, ir.Goto) for b in program.blocks)

    # Runs counted by hand for gcd(12, 5) beside gcd(4, 4): both test once at
    # the entry; (4, 4) returns at once; (12, 5) subtracts 12-5, 7-5, swaps
    # to (5, 2), subtracts 5-2, 3-2, swaps to (2, 1), subtracts 2-1 (7 runs
    # of the loop block, which tests `a == b` itself) and returns.
    a, b = np.array([12, 4]), np.array([5, 4])
    plain = gcd_ctx.plain("gcd")
    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        result, profile = gcd(a, b, profile=True, **kwargs)
        assert np.asarray(result).tolist() == [plain(12, 5), plain(4, 4)] == [1, 4]
        runs = {line.split(": ", 1)[1]: n for line, n in zip(profile.block_lines, profile.block_runs)}
        assert runs == {"if a == b:": 1, "return a": 2, "if a < b:": 7}, profile.report()


def test_tail_call_with_another_return_type_stays_a_call():
    int32 = [TensorType(np.int32, ())]
    for backend in ("numpy", "tensorflow"):
        returns = dict(ctx.program_compiled("returns_int", int32, backend).returns)
        assert returns["returns_int"] != returns["returns_literal"]
        # Not a tail jump: the call's result is moved (and cast) into
        # returns_int's own return register.  (The callee, `return 7`, runs
        # at the call site: return_at_call_sites.)
        moves = instructions_of(lowered("returns_int", int32, backend), ir.Move)
        assert any(m.vars_in == ("returns_literal.return",) for m in moves)
        result = programs.returns_int(np.array([0, 3, -2], np.int32), backend=backend)
        assert np.asarray(result).tolist() == [0, 7, -2]
        assert np.asarray(result).dtype == np.int32


def test_literal_tail_call_on_int64_is_a_jump_on_both_backends():
    for backend in ("numpy", "tensorflow"):
        assert not instructions_of(lowered("returns_int", backend=backend), ir.PushGoto)


def test_pop_then_push_fuses_into_peek():
    program = lowered("reuse_across_calls")
    peeks = instructions_of(program, ir.Peek)
    assert any("reuse_across_calls.n" in p.variables for p in peeks)
    plain = ctx.plain("reuse_across_calls")
    n = np.arange(0, 12)
    for backend in ("numpy", "tensorflow"):
        result = programs.reuse_across_calls(n, backend=backend)
        assert np.asarray(result).tolist() == [plain(int(k)) for k in n]


def test_a_vector_dead_after_its_block_is_not_written_back():
    # spiral restores v and w from the stacks after its second call, uses them
    # and returns: nothing reads them after that block, so it writes only its
    # result, while the call sites still write v and w.
    from examples.vectors import ctx as vectors_ctx
    from generated.examples import vectors_tf
    from transpiler.passes import liveness

    sig = [TensorType(np.float64, (3,)), TensorType(np.int64, (2,)), TensorType(np.int64, ())]
    program = vectors_ctx.program_lowered("spiral", sig, "numpy")
    _, live_out = liveness.block_liveness(program)
    restores = [
        b for b in program.blocks
        if any(isinstance(i, ir.Pop) and "spiral.v" in i.variables for i in b.instructions)
    ]
    assert restores and all(isinstance(b.terminator, ir.IndirectGoto) for b in restores)
    for block in restores:
        assert "spiral.v" not in live_out[block.name] and "spiral.w" not in live_out[block.name]
        assert program.result in live_out[block.name]

    # The generated block: its `rt.select_fields(active, state, ...)` keeps
    # v and w as they were (no [batch, *event] select), while the call
    # sites write them.
    import ast
    import inspect

    def written(k):
        tree = ast.parse(inspect.getsource(vectors_tf.SPIRAL_BLOCKS[k]))
        masked = {
            keyword.arg
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "rt.select_fields"
            for keyword in node.keywords
        }
        return masked & {"spiral_v", "spiral_w", "spiral_return_0"}

    lines = vectors_tf.SPIRAL_BLOCK_LINES
    returning = [k for k, line in enumerate(lines) if "c, d = spiral(" in line]
    assert [written(k) for k in returning] == [{"spiral_return_0"}]
    assert any({"spiral_v", "spiral_w"} <= written(k) for k in range(len(lines)))


def test_a_written_variable_read_again_in_its_block_is_masked_where_computed():
    # Collatz's loop body computes x, then tests x != 1: the test reads x
    # masked (the value the state will hold), so XLA computes x once per
    # trip, and the state update takes it as it is.
    import inspect

    from generated.examples import collatz_tf

    body = inspect.getsource(collatz_tf.COLLATZ_STEPS_BLOCKS[1])
    masked = "x = rt.select(active, x, state.collatz_steps_x)"
    assert body.count(masked) == 1
    assert body.index("x = rt.where(") < body.index(masked) < body.index("cond_1 = x != 1")
    assert "_replace(pc=pc, collatz_steps_x=x)" in body
    # steps is not read again after `steps + 1`: masked in the update only.
    assert "rt.select_fields(active, state, collatz_steps_steps=steps)" in body

    # (A block that divides by a variable masks early too: its other
    # examples' junk divisors are guarded where they divide,
    # `rt.py_divisor(d)`, passes/broadcast.py.)


def test_an_early_return_and_the_next_call_share_one_block():
    # build_tree's `if not tree.ok: return tree` then its second call: one
    # block that returns for some examples and calls for the others; only
    # the calling examples push.
    from examples.nuts import make_nuts_programs, standard_normal

    nuts_ctx = Context()
    make_nuts_programs(standard_normal, 0.25, context=nuts_ctx)
    program = nuts_ctx.program_lowered("nuts_step")
    merged = [b for b in program.blocks if isinstance(b.terminator, ir.ReturnIf)]
    assert len(merged) == 1
    block = merged[0]
    assert block.function == "build_tree"
    assert isinstance(block.terminator.otherwise, (ir.PushGoto, ir.PushBranch))
    pushes = [i for i in block.instructions if isinstance(i, ir.Push)]
    pops = [i for i in block.instructions if isinstance(i, ir.Pop)]
    assert pushes and all(p.going_only for p in pushes)
    assert pops and not any(getattr(p, "going_only", False) for p in pops)
    assert "build_tree.tree" in {v for p in pushes for v in p.variables}


@pytest.mark.parametrize("name, merged", [("early_return", True), ("early_return_clobbers", False)])
def test_an_early_return_merges_only_if_neither_path_reads_what_the_other_writes(name, merged):
    # Both arms run for every example of the merged block, so a returning arm
    # that rewrites x (which the calling arm passes on) must stay a block of
    # its own; merged or not, every backend must agree with Python.
    program = lowered(name)
    assert any(isinstance(b.terminator, ir.ReturnIf) for b in program.blocks) == merged
    plain = ctx.plain(name)
    n = np.arange(0, 12)
    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        result = getattr(programs, name)(n, **kwargs)
        assert np.asarray(result).tolist() == [plain(int(k)) for k in n]


def _threaded_branches(program):
    """Blocks whose branch takes another block's test at once (a nested Branch)."""
    return [
        b
        for b in program.blocks
        if isinstance(b.terminator, ir.Branch)
        and not (isinstance(b.terminator.true_target, str) and isinstance(b.terminator.false_target, str))
    ]


@pytest.mark.parametrize("name", ["triangle_sums", "first_square_above"])
def test_a_branch_into_a_loop_test_takes_the_test_at_once(name):
    # triangle_sums: the inner loop's exit branch runs the outer `i += 1`
    # and `while i < n:` itself, i kept per example (the inner body reads
    # it); first_square_above: `if k * k > n:` runs `k += 1` and the loop
    # test on its else side.  Each ends up a block that loops on itself
    # through the nested test; every backend agrees with Python, each
    # example on its own trip counts.
    from tests.oracle import MODES

    program = lowered(name)
    threaded = _threaded_branches(program)
    assert threaded
    assert any(b.name in liveness.successors(b.terminator) for b in threaded)
    plain = ctx.plain(name)
    n = np.array([0, 1, 2, 5, 9, 30, 120])
    for kwargs in MODES.values():
        result = getattr(programs, name)(n, **kwargs)
        assert np.asarray(result).tolist() == [plain(int(k)) for k in n], kwargs


def test_a_threaded_loop_test_saves_a_trip_per_outer_iteration():
    # NUTS's leapfrog block ends `while ok and leaf < leaves:`; its exit goes
    # to the outer `while running:`, which now is tested in the leapfrog
    # block itself: the sampler's program has no block that only tests.
    from autobatch.mcmc import nuts
    from autobatch.mcmc.sampler import GradientTapeTarget

    nuts_ctx = Context(check_when_decorated=False)
    nuts.make_programs(GradientTapeTarget(lambda x: -0.5 * x * x), context=nuts_ctx)
    program = nuts_ctx.program_lowered("nuts_chunk")
    lines = [b.origin.text for b in program.blocks if b.origin is not None]
    assert "while running:" not in lines, lines
    assert len(_threaded_branches(program)) == 2


def test_block_fusion_leaves_no_goto_into_a_single_predecessor_block():
    program = lowered("countdown_loop")
    preds = {}
    for b in program.blocks:
        t = b.terminator
        for s in getattr(t, "target", None), getattr(t, "true_target", None), getattr(t, "false_target", None):
            if s:
                preds[s] = preds.get(s, 0) + 1
    for b in program.blocks:
        if isinstance(b.terminator, ir.Goto):
            assert preds[b.terminator.target] > 1 or b.terminator.target == program.blocks[0].name


def test_while_loop_with_per_example_trip_counts():
    plain = ctx.plain("countdown_loop")
    n = np.arange(0, 40)
    for kwargs in (dict(backend="numpy"), dict(backend="tensorflow", xla=True)):
        result = programs.countdown_loop(n, **kwargs)
        assert np.asarray(result).tolist() == [plain(int(k)) for k in n]


def test_swap_and_tuple_return():
    a, b = programs.swap_until_sorted(np.array([3, 1, 2]), np.array([1, 3, 2]), backend="numpy")
    assert a.tolist() == [1, 1, 2] and b.tolist() == [3, 3, 2]


def test_weak_literal_takes_the_strong_type():
    typed = ctx.program_compiled("weak_literal", [TensorType(np.float32, ())], "numpy")
    assert dict(typed.returns)["weak_literal"] == TensorType(np.float32, ())
    result = programs.weak_literal(np.array([0.25, 0.75], np.float32), backend="numpy")
    assert result.dtype == np.float32 and result.tolist() == [0.5, 0.0]


def test_incompatible_strong_types_name_the_line():
    sig = [TensorType(np.float64, ()), TensorType(np.bool_, ())]
    with pytest.raises(BatchTypeError, match=r"programs.py:\d+.*'y'.*float64.*bool"):
        ctx.program_compiled("float_or_int", sig, "numpy")


def test_a_float_on_one_path_and_an_int_on_another_is_a_float():
    """As where one of them is a literal: `y` holds x (a float) or n (an
    int) in Python, and float64 here (ints beyond 2**53 round)."""
    x, n = np.array([0.5, -1.0, 2.0]), np.array([3, 4, -5])
    result = programs.float_or_int(x, n, backend="numpy")
    assert result.dtype == np.float64 and result.tolist() == [0.5, 4.0, 2.0]


def test_type_inference_callable_in_the_predecessors_form():
    from transpiler import Context

    seen = []

    def infer(arg_types):
        seen.append(arg_types)
        return [Type(TensorType(np.float64, ()))]

    local = Context(generated_dir=ctx.generated_dir)
    local.batch_uncurried(programs.returns_float.function, type_inference=infer)
    typed = local.program_compiled("returns_float", INT, "numpy")
    assert dict(typed.returns)["returns_float"] == TensorType(np.float64, ())
    assert seen and seen[0][0] == TensorType(np.int64, ())  # argument types, with .dtype


def test_globals_and_helpers_are_imported_not_frozen():
    result = programs.uses_globals(np.array([-3.0, 4.0]), backend="numpy")
    assert result.tolist() == [13.0, 14.0]


@pytest.mark.parametrize("name", ["countdown_loop", "reuse_across_calls", "calls_helper"])
def test_reference_interpreter_agrees_with_python(name):
    program = ctx.program(name)
    namespaces = ctx._namespaces(name)
    plain = ctx.plain(name)
    for n in range(0, 10):
        assert interpreter.run(program, namespaces, name, [n]) == plain(n)


def test_printer_is_deterministic():
    a = instructions.program_text(lowered("reuse_across_calls"))
    ctx.__dict__.pop("_program_cache", None)
    ctx.__dict__.pop("_built_cache", None)
    b = instructions.program_text(lowered("reuse_across_calls"))
    assert a == b
    assert "peek" in a
