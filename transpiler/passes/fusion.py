"""Fusions on the lowered program: fewer blocks, fewer stack operations.

- `fuse_blocks`: a block that is the only way into the block it jumps to
  absorbs it.  One loop iteration runs one block for the whole batch, so
  fewer, larger blocks mean fewer iterations.  Blocks stay split only at
  calls, branches and joins.
- `fuse_pop_push`: a `Pop` of a variable followed in the same block by a
  `Push` of it, with no write in between, becomes a `Peek` (read the top,
  leave it there) and the push disappears: the stack already holds that value.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from transpiler.ir import instructions as ir
from transpiler.passes import liveness


def predecessors(blocks) -> Counter:
    """How many jumps and branches lead into each block."""
    preds = Counter()
    for b in blocks:
        for s in liveness.successors(b.terminator):
            preds[s] += 1
    return preds


def pinned(blocks) -> set:
    """Blocks entered other than by a jump, which must stay blocks of their own."""
    names = {blocks[0].name}  # main's entry is where the driver starts
    for b in blocks:
        t = b.terminator
        if isinstance(t, ir.ReturnIf):
            t = t.otherwise
        if isinstance(t, ir.PushGoto):
            names.add(t.target)  # a function entry
        if isinstance(t, ir.PushBranch):
            names.update((t.true_target, t.false_target))  # after an entry test
        if isinstance(t, (ir.PushGoto, ir.PushBranch)):
            names.add(t.return_block)  # reached by a return
    return names


def fuse_blocks(program: ir.LoweredProgram) -> ir.LoweredProgram:
    blocks = list(program.blocks)
    while True:
        preds, fixed = predecessors(blocks), pinned(blocks)
        by_name = {b.name: b for b in blocks}
        for i, block in enumerate(blocks):
            t = block.terminator
            if (
                isinstance(t, ir.Goto)
                and preds[t.target] == 1
                and t.target not in fixed
                and t.target != block.name
            ):
                absorbed = by_name[t.target]
                blocks[i] = dataclasses.replace(
                    block,
                    instructions=block.instructions + absorbed.instructions,
                    terminator=absorbed.terminator,
                )
                blocks.remove(absorbed)
                break
        else:
            return dataclasses.replace(program, blocks=tuple(blocks))


def fuse_pop_push(program: ir.LoweredProgram) -> ir.LoweredProgram:
    return dataclasses.replace(
        program, blocks=tuple(_fuse_block(b) for b in program.blocks)
    )


def _fuse_block(block: ir.Block) -> ir.Block:
    instructions = list(block.instructions)
    for i, ins in enumerate(instructions):
        if not isinstance(ins, ir.Pop):
            continue
        fusible = []
        for v in ins.variables:
            for j in range(i + 1, len(instructions)):
                later = instructions[j]
                if isinstance(later, ir.Push) and v in later.variables:
                    if not later.going_only:  # a masked push keeps its pop
                        fusible.append((v, j))
                    break
                if v in liveness.defs(later):
                    break
        if not fusible:
            continue
        names = {v for v, _ in fusible}
        for v, j in fusible:
            push = instructions[j]
            instructions[j] = dataclasses.replace(
                push, variables=tuple(x for x in push.variables if x != v)
            )
        kept = tuple(v for v in ins.variables if v not in names)
        peeked = tuple(v for v in ins.variables if v in names)
        instructions[i] = [ir.Pop(kept, ins.origin)] if kept else []
        instructions[i].append(ir.Peek(peeked, ins.origin))
    flat = []
    for ins in instructions:
        items = ins if isinstance(ins, list) else [ins]
        flat.extend(x for x in items if not (isinstance(x, ir.Push) and not x.variables))
    return dataclasses.replace(block, instructions=tuple(flat))
