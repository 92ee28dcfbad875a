"""A local read where some path has not assigned it raises UnboundLocalError.

    if x > 3:
        y = v[0]
    return y + 1            # Python: UnboundLocalError where x <= 3

On the batch, `y` is a register that always holds something (zeros, or
another example's junk), so the read would give a wrong answer without an
error.  For each local that some path reaches a read of without assigning
it (a must-assign analysis over the function's blocks), this pass adds a
per-example flag `y_assigned`: False on entry, True after each assignment of
`y`, and checked before each such read:

    py_bound(y_assigned, "y")     # emit/block.py: the examples with False stop

so an example that reaches the read unassigned stops with Python's error,
naming the line, and the others run on.  Locals that every path assigns
before reading them (nearly all) get nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Set, Tuple

from transpiler.ir import instructions as ir

SUFFIX = "_assigned"


def check_bound(function: ir.Function) -> ir.Function:
    """`function` with a flag and checks for each local it may read unassigned."""
    assigned = _all_assigned(function)
    reads = _unassigned_reads(function, assigned)
    if not reads:
        return function
    names = _flag_names(function, sorted({name for _, _, name in reads}))
    checks: Dict[Tuple[str, int], List[str]] = {}
    for block, position, name in reads:
        checks.setdefault((block, position), [])
        if name not in checks[(block, position)]:
            checks[(block, position)].append(name)
    blocks = []
    for k, block in enumerate(function.blocks):
        out = []
        if k == 0:
            for name in names:
                out.append(ir.PrimOp((), names[name], "False", origin=function.origin))
        for position, ins in enumerate(block.instructions):
            out += _checks(checks.get((block.name, position), ()), names, ins.origin)
            out.append(ins)
            for name in _writes(ins):
                if name in names:
                    out.append(ir.PrimOp((), names[name], "True", origin=ins.origin))
        end = len(block.instructions)
        out += _checks(checks.get((block.name, end), ()), names, block.terminator.origin)
        blocks.append(dataclasses.replace(block, instructions=tuple(out)))
    return dataclasses.replace(function, blocks=tuple(blocks))


def _checks(locals_read, names, origin):
    return [
        ir.PrimOp((names[name],), None, f"py_bound({names[name]}, {name!r})", origin=origin)
        for name in locals_read
    ]


def _writes(ins) -> Tuple[str, ...]:
    if isinstance(ins, (ir.PrimOp, ir.Call)):
        return ir.pattern_names(ins.vars_out)
    if isinstance(ins, ir.Select):
        return (ins.vars_out,)
    if isinstance(ins, ir.Move):
        return tuple(n for p in ins.vars_out for n in ir.pattern_names(p))
    return ()


def _reads(ins) -> Tuple[str, ...]:
    return tuple(getattr(ins, "vars_in", ()))


def _terminator_reads(terminator) -> Tuple[str, ...]:
    if isinstance(terminator, ir.Branch):
        return (terminator.condition,)
    if isinstance(terminator, ir.Return) and terminator.value is not None:
        return ir.pattern_names(terminator.value)
    return ()


def _all_assigned(function) -> Set[str]:
    out = set(function.params)
    for block in function.blocks:
        for ins in block.instructions:
            out.update(_writes(ins))
    return out


def _successors(terminator) -> Tuple[str, ...]:
    if isinstance(terminator, ir.Goto):
        return (terminator.target,)
    if isinstance(terminator, ir.Branch):
        return (terminator.true_target, terminator.false_target)
    return ()


def _unassigned_reads(function, assigned) -> List[Tuple[str, int, str]]:
    """(block, position, local) for each read of a local that some path
    reaches unassigned (position len(instructions): the terminator)."""
    by_name = {b.name: b for b in function.blocks}
    preds: Dict[str, List[str]] = {b.name: [] for b in function.blocks}
    for b in function.blocks:
        for s in _successors(b.terminator):
            if s in preds:
                preds[s].append(b.name)
    entry = function.blocks[0].name
    # must-assign: what every path from the entry has assigned at each block's start
    start: Dict[str, Set[str]] = {b.name: set(assigned) for b in function.blocks}
    start[entry] = set(function.params)
    changed = True
    while changed:
        changed = False
        for b in function.blocks:
            if b.name != entry:
                ins = [_after(by_name[p], start[p]) for p in preds[b.name]]
                new = set.intersection(*ins) if ins else set(assigned)
                if new != start[b.name]:
                    start[b.name], changed = new, True
    reads = []
    for b in function.blocks:
        have = set(start[b.name])
        for position, ins in enumerate(b.instructions):
            reads += [(b.name, position, n) for n in _reads(ins) if n in assigned and n not in have]
            have.update(_writes(ins))
        end = len(b.instructions)
        reads += [
            (b.name, end, n)
            for n in _terminator_reads(b.terminator)
            if n in assigned and n not in have
        ]
    return reads


def _after(block, at_start) -> Set[str]:
    out = set(at_start)
    for ins in block.instructions:
        out.update(_writes(ins))
    return out


def _flag_names(function, locals_read) -> Dict[str, str]:
    taken = _all_assigned(function)
    names = {}
    for name in locals_read:
        flag = name + SUFFIX
        while flag in taken:
            flag += "_"
        taken.add(flag)
        names[name] = flag
    return names
