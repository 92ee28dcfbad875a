"""Liveness of a function's variables, loops (back edges) included.

The classic backward dataflow fixpoint over the CFG: a variable is live at a
point if some path from there reads it before writing it.  Lowering asks which
variables are live right after each call, to decide what the call must save.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

from transpiler.ir import instructions as ir


def uses(instruction) -> Tuple[str, ...]:
    if isinstance(instruction, (ir.PrimOp, ir.Select, ir.Call, ir.Move)):
        return tuple(instruction.vars_in)
    if isinstance(instruction, ir.Branch):
        # a side may be a branch threaded into it (passes/branch_threading.py)
        nested = (s for s in (instruction.true_target, instruction.false_target) if not isinstance(s, str))
        return (instruction.condition,) + tuple(v for s in nested for v in uses(s))
    if isinstance(instruction, ir.PushBranch):
        return (instruction.condition,)
    if isinstance(instruction, ir.Return):
        return ir.pattern_names(instruction.value)
    if isinstance(instruction, ir.Push):
        return tuple(instruction.variables)
    if isinstance(instruction, ir.ReturnIf):
        return (instruction.condition,) + uses(instruction.otherwise)
    return ()


def defs(instruction) -> Tuple[str, ...]:
    if isinstance(instruction, (ir.PrimOp, ir.Select, ir.Call)):
        return ir.pattern_names(instruction.vars_out)
    if isinstance(instruction, ir.Move):
        return tuple(n for p in instruction.vars_out for n in ir.pattern_names(p))
    if isinstance(instruction, (ir.Pop, ir.Peek)):
        return tuple(instruction.variables)
    return ()


def successors(terminator) -> Tuple[str, ...]:
    if isinstance(terminator, ir.ReturnIf):
        return successors(terminator.otherwise)
    if isinstance(terminator, ir.Goto):
        return (terminator.target,)
    if isinstance(terminator, ir.Branch):
        sides = (terminator.true_target, terminator.false_target)
        return tuple(n for s in sides for n in ((s,) if isinstance(s, str) else successors(s)))
    return ()


def live_after(fn: ir.Function) -> Dict[Tuple[str, int], FrozenSet[str]]:
    """Maps (block name, instruction index) to the variables live after it."""
    _, live_out = _fixpoint(fn.blocks, lambda block: successors(block.terminator), {})
    result: Dict[Tuple[str, int], FrozenSet[str]] = {}
    for block in fn.blocks:
        _live_in_of(block, live_out[block.name], record=result)
    return result


def block_liveness(program: ir.LoweredProgram):
    """(live in, live out): the registers live at the start and the end of each
    block of a lowered program.

    Calls and returns are edges too: a push-jump continues at the callee's
    entry, and a return (`IndirectGoto`) may continue at any call's return
    block, or halt, where the driver reads the program's result (from main,
    or from a function main reached by tail calls).
    Treating every return block as a successor of every return over-approximates,
    which is safe: a register is only called dead when no path at all reads
    it before writing it.  (A register live across a call is live through
    the callee this way, back to the call.)
    """
    continuations = set()
    for block in program.blocks:
        t = block.terminator
        t = t.otherwise if isinstance(t, ir.ReturnIf) else t
        if isinstance(t, (ir.PushGoto, ir.PushBranch)):
            continuations.add(t.return_block)
    halt = "<halt>"
    continuations = tuple(sorted(continuations))
    halting = _halting_functions(program)

    def after(t, function):
        if isinstance(t, ir.ReturnIf):
            return after(ir.IndirectGoto(), function) + after(t.otherwise, function)
        if isinstance(t, ir.PushGoto):
            return (t.target,)
        if isinstance(t, ir.PushBranch):
            return (t.true_target, t.false_target)
        if isinstance(t, (ir.IndirectGoto, ir.Return)):
            # main's returns may empty the return stack, and so may those of
            # a function main reached by tail calls (it writes main's result)
            return continuations + ((halt,) if function in halting else ())
        return successors(t)

    return _fixpoint(
        program.blocks,
        lambda block: after(block.terminator, block.function),
        {halt: frozenset([program.result])},
    )


def _halting_functions(program) -> frozenset:
    """main, and the functions it reaches by tail calls (a jump into another
    function's blocks, no return address pushed): their returns may halt."""
    function_of = {b.name: b.function for b in program.blocks}
    halting = {program.main, ""}
    changed = True
    while changed:
        changed = False
        for block in program.blocks:
            if block.function not in halting:
                continue
            for target in successors(block.terminator):
                callee = function_of.get(target)
                if callee is not None and callee not in halting:
                    halting.add(callee)
                    changed = True
    return frozenset(halting)


def _fixpoint(blocks, successors_of, fixed):
    """(live in, live out) per block: the backward fixpoint over `successors_of`.

    `fixed` gives the live-in of pseudo-blocks (halt) that are successors only.
    """
    live_in: Dict[str, FrozenSet[str]] = {b.name: frozenset() for b in blocks}
    live_in.update(fixed)
    live_out: Dict[str, FrozenSet[str]] = {}
    changed = True
    while changed:
        changed = False
        for block in reversed(blocks):
            live_out[block.name] = frozenset().union(*(live_in[s] for s in successors_of(block)))
            live = _live_in_of(block, live_out[block.name], record=None)
            if live != live_in[block.name]:
                live_in[block.name] = live
                changed = True
    for name in fixed:
        del live_in[name]
    return live_in, live_out


def _live_in_of(block, live_out, record):
    """Live at the block's start, from what is live at its end."""
    live = set(live_out) | set(uses(block.terminator))
    for index in range(len(block.instructions) - 1, -1, -1):
        instruction = block.instructions[index]
        if record is not None:
            record[(block.name, index)] = frozenset(live)
        live -= set(defs(instruction))
        live |= set(uses(instruction))
    return frozenset(live)
