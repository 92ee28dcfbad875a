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
    if isinstance(instruction, (ir.Branch, ir.PushBranch)):
        return (instruction.condition,)
    if isinstance(instruction, ir.Return):
        return ir.pattern_names(instruction.value)
    if isinstance(instruction, ir.Push):
        return tuple(instruction.variables)
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
    if isinstance(terminator, ir.Goto):
        return (terminator.target,)
    if isinstance(terminator, ir.Branch):
        return (terminator.true_target, terminator.false_target)
    return ()


def live_after(fn: ir.Function) -> Dict[Tuple[str, int], FrozenSet[str]]:
    """Maps (block name, instruction index) to the variables live after it."""
    live_in: Dict[str, FrozenSet[str]] = {b.name: frozenset() for b in fn.blocks}
    changed = True
    while changed:
        changed = False
        for block in reversed(fn.blocks):
            live = _live_in_of(block, live_in, record=None)
            if live != live_in[block.name]:
                live_in[block.name] = live
                changed = True
    result: Dict[Tuple[str, int], FrozenSet[str]] = {}
    for block in fn.blocks:
        _live_in_of(block, live_in, record=result)
    return result


def _live_in_of(block, live_in, record):
    live = set()
    for successor in successors(block.terminator):
        live |= live_in[successor]
    live |= set(uses(block.terminator))
    for index in range(len(block.instructions) - 1, -1, -1):
        instruction = block.instructions[index]
        if record is not None:
            record[(block.name, index)] = frozenset(live)
        live -= set(defs(instruction))
        live |= set(uses(instruction))
    return frozenset(live)
