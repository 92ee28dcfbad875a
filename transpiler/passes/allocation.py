"""Allocation: where each variable of the lowered program lives.

The classes, cheapest first:

- *null*: never read; its primitive still runs but nothing is stored;
- *temporary*: read only in the block that writes it, after the write: a
  local of the block's function in the generated code, never in the state;
- *register*: one `[batch, ...]` array in the loop state;
- *stack*: a register plus a `[depth, batch, ...]` stack and a per-example
  stack pointer; only variables that some call must save (see lowering).

A variable is a register when some block reads it before (or without)
writing it, or when it is a parameter of main, main's result, or saved on
a stack.
"""

from __future__ import annotations

import dataclasses

from transpiler.ir import instructions as ir
from transpiler.passes import liveness


def allocate(program: ir.LoweredProgram) -> ir.LoweredProgram:
    registers = set(program.params) | {program.result} | set(program.stacks)
    for block in program.blocks:
        written = set()
        reads = []
        for ins in block.instructions:
            reads.extend(v for v in liveness.uses(ins) if v not in written)
            written.update(liveness.defs(ins))
        reads.extend(v for v in liveness.uses(block.terminator) if v not in written)
        registers.update(reads)
    order = {name: k for k, (name, _) in enumerate(program.types)}
    ranked = sorted(registers, key=lambda v: (order.get(v, len(order)), v))
    return dataclasses.replace(program, registers=tuple(ranked))


def storage_class(program: ir.LoweredProgram, variable: str) -> str:
    if variable in program.stacks:
        return "stack"
    if variable in program.registers:
        return "register"
    used = any(
        variable in liveness.uses(i)
        for b in program.blocks
        for i in b.instructions + (b.terminator,)
    )
    return "temporary" if used else "null"
