"""Jump threading: a branch into a block that only tests takes that test at once.

`rotate_loops` (control.py) copies a loop's test onto the blocks that
*jump* to it.  A block that *branches* to a test is left one trip short: a
nested loop's inner body ends `while ok and leaf < leaves:` by branching
back to itself or out to the outer loop's test `while running:`, a block
of its own that every example leaving the inner loop passes through, one
trip of the batched loop (and under XLA's sweep, one more `while_loop` per
trip) for a single compare.  NUTS's leapfrog block is that inner body.

`thread_branch_tests` puts the test's instructions at the end of the
branching block and nests its branch in the side that led to it:
`Branch(ok, body, Branch(running, outer_body, exit))`, emitted as
`pc = choose(ok, body, choose(running, outer_body, exit))`.  The examples
that took that side see the same instructions on the same values one trip
sooner; the others compute them too (every block runs for the whole
batch), so the test must be *safe* (control._safe: nothing that can raise).
What it writes that the other side reads (an outer loop's `i += 1`, read
by the inner body) goes through fresh variables and a `Select` each, as an
if-converted arm's writes do.  A test left with no jump into it (and not
entered otherwise: fusion's `pinned`) is removed.
"""

from __future__ import annotations

import dataclasses

from transpiler.ir import instructions as ir
from transpiler.passes import control, fusion, liveness


def thread_branch_tests(program: ir.LoweredProgram) -> ir.LoweredProgram:
    """Each branch into a short safe test branches on by that test (see the module)."""
    fresh = control._Fresh(program)
    blocks = list(program.blocks)
    threaded_into = set()
    changed = True
    while changed:
        changed = False
        live_in, _ = liveness.block_liveness(dataclasses.replace(program, blocks=tuple(blocks)))
        by_name = {b.name: b for b in blocks}
        for i, block in enumerate(blocks):
            threaded = _threaded(block, by_name, live_in, fresh)
            if threaded is not None:
                blocks[i], test = threaded
                threaded_into.add(test)
                changed = True
                break  # liveness has changed: look again
    preds, pinned = fusion.predecessors(blocks), fusion.pinned(blocks)
    blocks = [b for b in blocks if b.name not in threaded_into or preds[b.name] or b.name in pinned]
    return dataclasses.replace(
        program, blocks=tuple(blocks), types=tuple(sorted(fresh.types.items()))
    )


def _threaded(block, by_name, live_in, fresh):
    """(`block` with one side of its branch threaded through a test, the
    test's name), or None when neither side qualifies."""
    t = block.terminator
    if not _plain_branch(t) or t.true_target == t.false_target:
        return None
    for side, other in (("false_target", t.true_target), ("true_target", t.false_target)):
        name = getattr(t, side)
        if name == block.name:
            continue  # a loop on itself: its test is this block
        test = by_name[name]
        if not _threadable_test(test):
            continue
        written = control._defs(test.instructions)
        instructions = test.instructions
        if written & live_in[other] or t.condition in written:
            # The test now runs for the examples going to `other` too: what
            # it writes that they read (an outer loop's `i += 1` beside an
            # inner body reading i) is kept per example, as an if-converted
            # arm's writes are: into fresh variables, then a Select each.
            if not all(control._selectable(fresh.types.get(v)) for v in written):
                continue
            arm = dataclasses.replace(test, terminator=ir.Goto(other))
            then_arm, else_arm = (arm, None) if side == "true_target" else (None, arm)
            instructions = tuple(control._merge(block, t, then_arm, else_arm, fresh))
            # _merge's first move keeps the branch's own condition apart
            (condition,) = instructions[0].vars_out
            t = dataclasses.replace(t, condition=condition)
        terminator = dataclasses.replace(t, **{side: test.terminator})
        threaded = dataclasses.replace(
            block, instructions=block.instructions + instructions, terminator=terminator
        )
        return threaded, name
    return None


def _plain_branch(t) -> bool:
    """A `Branch` whose targets are blocks (not branches threaded into it)."""
    return (
        isinstance(t, ir.Branch)
        and isinstance(t.true_target, str)
        and isinstance(t.false_target, str)
    )


def _threadable_test(block) -> bool:
    """A few safe instructions and a plain branch that does not loop on itself."""
    t = block.terminator
    return (
        _plain_branch(t)
        and block.name not in (t.true_target, t.false_target)
        and len(block.instructions) <= control.MAX_TEST
        and all(control._safe(i) for i in block.instructions)
    )
