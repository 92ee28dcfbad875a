"""Stackless lowering: one function as its own masked loop, calls made directly.

The predecessor's "stackless" mode: instead of one program counter walking
every function's blocks with explicit stacks, each function runs its own
masked loop, and a call runs the callee's loop right away (for the examples
at the call) through the host's own recursion.  It batches less (the
examples inside one call wait for each other) but has no stack traffic.

The result is a `LoweredProgram` of a single function whose `Call`
instructions stay as they are; a return writes the return slot and halts the
example (`IndirectGoto` with an empty return stack).
"""

from __future__ import annotations

import dataclasses

from transpiler.ir import instructions as ir
from transpiler.passes import allocation, fusion


def lower_function(typed: ir.Program, name: str) -> ir.LoweredProgram:
    fn = typed.function(name)
    q = lambda v: ir.qualify(name, v)  # noqa: E731
    slot = ir.return_slot(name)
    blocks = []
    for block in fn.blocks:
        instructions = []
        for ins in block.instructions:
            if isinstance(ins, (ir.PrimOp, ir.Select, ir.Call)):
                ins = dataclasses.replace(
                    ins,
                    vars_in=tuple(q(v) for v in ins.vars_in),
                    vars_out=ir.map_pattern(q, ins.vars_out),
                )
            instructions.append(ins)
        t = block.terminator
        if isinstance(t, ir.Return):
            if t.value is not None:
                instructions.append(ir.Move((slot,), (q(t.value),), t.origin))
            t = ir.IndirectGoto(t.origin)
        elif isinstance(t, ir.Branch):
            t = dataclasses.replace(t, condition=q(t.condition))
        blocks.append(dataclasses.replace(block, instructions=tuple(instructions), terminator=t))
    types = {k: v for k, v in typed.types if k.split(".", 1)[0] == name}
    types[slot] = dict(typed.returns)[name]
    lowered = ir.LoweredProgram(
        blocks=tuple(blocks),
        main=name,
        params=tuple(q(p) for p in fn.params),
        result=slot,
        types=tuple(sorted(types.items())),
        registers=(),
        stacks=(),
        functions=(name,),
    )
    return allocation.allocate(fusion.fuse_blocks(lowered))


def is_recursive(typed: ir.Program) -> bool:
    """Whether some function of the program can reach itself through calls."""
    calls = {
        f.name: {i.function for b in f.blocks for i in b.instructions if isinstance(i, ir.Call)}
        for f in typed.functions
    }
    for start in calls:
        seen, stack = set(), list(calls[start])
        while stack:
            name = stack.pop()
            if name == start:
                return True
            if name not in seen and name in calls:
                seen.add(name)
                stack.extend(calls[name])
    return False
