"""A deterministic, readable text form of programs (for tests, review, debugging)."""

from __future__ import annotations

from transpiler.ir import instructions as ir


def _pattern(p) -> str:
    if p is None:
        return "_"
    if isinstance(p, str):
        return p
    return "(" + ", ".join(_pattern(x) for x in p) + ("," if len(p) == 1 else "") + ")"


def instruction(ins) -> str:
    if isinstance(ins, ir.PrimOp):
        cast = f"  # cast to {ins.cast_to}" if ins.cast_to else ""
        return f"{_pattern(ins.vars_out)} = {ins.expr}{cast}"
    if isinstance(ins, ir.Select):
        cast = f"  # cast to {ins.cast_to}" if ins.cast_to else ""
        return (
            f"{ins.vars_out} = select {ins.condition} ? {ins.if_true} : {ins.if_false}{cast}"
        )
    if isinstance(ins, ir.Call):
        return f"{_pattern(ins.vars_out)} = call {ins.function}({', '.join(ins.vars_in)})"
    if isinstance(ins, ir.Move):
        outs = ", ".join(_pattern(p) for p in ins.vars_out)
        return f"{outs} = move {', '.join(ins.vars_in)}"
    if isinstance(ins, ir.Push):
        only = " (examples going on)" if ins.going_only else ""
        return f"push {', '.join(ins.variables)}{only}"
    if isinstance(ins, ir.Pop):
        return f"pop {', '.join(ins.variables)}"
    if isinstance(ins, ir.Peek):
        return f"peek {', '.join(ins.variables)}"
    if isinstance(ins, ir.Goto):
        return f"goto {ins.target}"
    if isinstance(ins, ir.Branch):
        return f"branch {ins.condition} ? {ins.true_target} : {ins.false_target}"
    if isinstance(ins, ir.Return):
        return f"return {_pattern(ins.value)}"
    if isinstance(ins, ir.PushGoto):
        return f"push-goto {ins.target} returning to {ins.return_block}"
    if isinstance(ins, ir.PushBranch):
        only = ""
        if ins.returned_when is not None:
            test = f"not {ins.condition}" if ins.returned_when else ins.condition
            only = f" (pushed where {test}; the others returned here)"
        return (
            f"push-branch {ins.condition} ? {ins.true_target} : {ins.false_target}"
            f" returning to {ins.return_block}{only}"
        )
    if isinstance(ins, ir.ReturnIf):
        test = ins.condition if ins.returns_when else f"not {ins.condition}"
        return f"return (indirect goto) if {test}, else {instruction(ins.otherwise)}"
    if isinstance(ins, ir.IndirectGoto):
        return "return (indirect goto)"
    raise TypeError(ins)


def block(b: ir.Block) -> str:
    where = f"  # {b.origin}  {b.origin.text}" if b.origin else ""
    lines = [f"  {b.name}:{where}"]
    lines += [f"    {instruction(i)}" for i in b.instructions]
    lines.append(f"    {instruction(b.terminator)}")
    return "\n".join(lines)


def program(p) -> str:
    if isinstance(p, ir.LoweredProgram):
        types = dict(p.types)
        head = [f"lowered program {p.main}({', '.join(p.params)}) -> {p.result}"]
        for name in p.registers:
            kind = "stack" if name in p.stacks else "register"
            head.append(f"  {kind} {name}: {types.get(name, '?')}")
        return "\n".join(head + [block(b) for b in p.blocks]) + "\n"
    types = dict(p.types or ())
    out = [f"program main={p.main}"]
    for fn in p.functions:
        params = ", ".join(
            f"{x}: {types[ir.qualify(fn.name, x)]}" if types else x for x in fn.params
        )
        ret = dict(p.returns or ()).get(fn.name)
        out.append(f"def {fn.name}({params})" + (f" -> {ret}" if ret else "") + ":")
        out += [block(b) for b in fn.blocks]
    return "\n".join(out) + "\n"
