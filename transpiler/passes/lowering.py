"""Call lowering: calls and returns become explicit stack traffic.

The calling convention is *caller saves*: at a call of `g` from `f`, `f`
pushes exactly the variables that are live after the call and that the call
could overwrite, which can only happen when `g` can reach `f` again in the
call graph (recursion).  Everything else stays in a plain register.  So
`fib(n - 1) + fib(n - 2)` saves `n` around the first call and the first
result around the second, and a non-recursive helper call saves nothing.

Arguments are passed by writing the callee's parameter registers (one
simultaneous `Move`, so `gcd(b, a)` swaps correctly); the return address goes
on the return-address stack (`PushGoto`); a return writes the function's
return slot and pops the address (`IndirectGoto`, which halts the example
when the stack is empty).  The caller's continuation block restores the saved
variables (`Pop`) and copies the result out of the callee's return slot.

Tail calls (`return g(...)` with nothing to save) become a `Move` and a
`Goto`: no stack grows, so a tail-recursive loop runs at any depth.  A caller
and its tail callee must return through the same slot, so their slots are
unified (when their return types agree; otherwise the call stays a full call).

After this pass, variable names are qualified by function (`fib.n`) and all
functions' blocks form one list: main's first, then callees in call order.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List

from transpiler.ir import instructions as ir
from transpiler.passes import liveness


def lower(program: ir.Program) -> ir.LoweredProgram:
    return _Lowering(program).run()


class _Lowering:
    def __init__(self, program: ir.Program):
        self.program = program
        self.types = dict(program.types or ())  # untyped: the predecessor's inspection
        self.returns = dict(program.returns or ())
        self.functions = _reachable_functions(program)
        self.calls = {
            f.name: _callees(program.function(f.name)) for f in self.functions
        }
        self.reach = {f.name: self.reachable_from(f.name) for f in self.functions}
        self.slot_parent = {f.name: f.name for f in self.functions}
        self.live = {f.name: liveness.live_after(f) for f in self.functions}
        self.unify_tail_call_slots()

    # ---- call graph ------------------------------------------------------

    def reachable_from(self, name):
        seen, stack = set(), [name]
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(self.calls[n])
        return seen

    # ---- return slots ----------------------------------------------------

    def slot_root(self, name):
        while self.slot_parent[name] != name:
            name = self.slot_parent[name]
        return name

    def return_slot(self, name):
        return ir.return_slot(self.slot_root(name))

    def is_tail_call(self, fn, block, index):
        call = block.instructions[index]
        return (
            index == len(block.instructions) - 1
            and isinstance(block.terminator, ir.Return)
            and isinstance(call.vars_out, str)
            and block.terminator.value == call.vars_out
        )

    def unify_tail_call_slots(self):
        for fn in self.functions:
            for block in fn.blocks:
                for index, ins in enumerate(block.instructions):
                    if isinstance(ins, ir.Call) and self.is_tail_call(fn, block, index):
                        if self.returns.get(fn.name) == self.returns.get(ins.function):
                            a, b = self.slot_root(fn.name), self.slot_root(ins.function)
                            if a != b:
                                self.slot_parent[max(a, b)] = min(a, b)

    def tail_call_allowed(self, fn, callee):
        return self.slot_root(fn) == self.slot_root(callee)

    # ---- the rewrite -----------------------------------------------------

    def run(self) -> ir.LoweredProgram:
        blocks: List[ir.Block] = []
        for fn in self.functions:
            blocks.extend(self.lower_function(fn))
        reached = {f.name for f in self.functions}
        types = {k: t for k, t in self.types.items() if k.split(".", 1)[0] in reached}
        for fn in self.functions:
            if fn.name in self.returns:
                types[self.return_slot(fn.name)] = self.returns[fn.name]
        main = self.program.function(self.program.main)
        stacks = sorted(
            {v for b in blocks for i in b.instructions if isinstance(i, ir.Push) for v in i.variables},
            key=_first_use_order(blocks),
        )
        return ir.LoweredProgram(
            blocks=tuple(blocks),
            main=main.name,
            params=tuple(ir.qualify(main.name, p) for p in main.params),
            result=self.return_slot(main.name),
            types=tuple(sorted(types.items())),
            registers=(),  # filled in by allocation
            stacks=tuple(stacks),
            functions=tuple(f.name for f in self.functions),
        )

    def lower_function(self, fn: ir.Function) -> List[ir.Block]:
        q = lambda name: ir.qualify(fn.name, name)  # noqa: E731
        out: List[ir.Block] = []
        for block in fn.blocks:
            name, origin, instructions = block.name, block.origin, []
            continuation = 0
            for index, ins in enumerate(block.instructions):
                if isinstance(ins, (ir.PrimOp, ir.Select)):
                    instructions.append(
                        dataclasses.replace(
                            ins,
                            vars_in=tuple(q(v) for v in ins.vars_in),
                            vars_out=ir.map_pattern(q, ins.vars_out),
                        )
                    )
                    continue
                callee = self.program.function(ins.function)
                args = tuple(q(v) for v in ins.vars_in)
                params = tuple(ir.qualify(callee.name, p) for p in callee.params)
                if self.is_tail_call(fn, block, index) and self.tail_call_allowed(
                    fn.name, callee.name
                ):
                    instructions.append(ir.Move(params, args, ins.origin))
                    out.append(
                        ir.Block(
                            name,
                            tuple(instructions),
                            ir.Goto(callee.entry, ins.origin),
                            origin,
                            fn.name,
                        )
                    )
                    instructions = None
                    break
                saves = self.saves(fn, block, index, ins)
                if saves:
                    instructions.append(ir.Push(saves, ins.origin))
                instructions.append(ir.Move(params, args, ins.origin))
                continuation += 1
                resume = f"{block.name}_ret{continuation}"
                out.append(
                    ir.Block(
                        name,
                        tuple(instructions),
                        ir.PushGoto(resume, callee.entry, fn.name, ins.origin),
                        origin,
                        fn.name,
                    )
                )
                name, origin, instructions = resume, ins.origin, []
                if saves:
                    instructions.append(ir.Pop(saves, ins.origin))
                if ins.vars_out is not None:
                    instructions.append(
                        ir.Move(
                            (ir.map_pattern(q, ins.vars_out),),
                            (self.return_slot(callee.name),),
                            ins.origin,
                        )
                    )
            if instructions is None:
                continue  # ended in a tail call
            out.append(
                ir.Block(
                    name,
                    tuple(instructions) + self.return_moves(fn, block.terminator),
                    self.lower_terminator(fn, block.terminator),
                    origin,
                    fn.name,
                )
            )
        return out

    def saves(self, fn, block, index, call):
        if fn.name not in self.reach[call.function]:
            return ()  # the callee cannot come back to fn: nothing is overwritten
        live = self.live[fn.name][(block.name, index)] - set(
            ir.pattern_names(call.vars_out)
        )
        order = _variable_order(fn)
        return tuple(ir.qualify(fn.name, v) for v in sorted(live, key=order.index))

    def return_moves(self, fn, terminator):
        if isinstance(terminator, ir.Return) and terminator.value is not None:
            value = ir.map_pattern(lambda v: ir.qualify(fn.name, v), terminator.value)
            if isinstance(value, str):
                return (ir.Move((self.return_slot(fn.name),), (value,), terminator.origin),)
            raise AssertionError("the builder returns through one variable")
        return ()

    def lower_terminator(self, fn, terminator):
        if isinstance(terminator, ir.Return):
            return ir.IndirectGoto(terminator.origin)
        if isinstance(terminator, ir.Branch):
            return dataclasses.replace(
                terminator, condition=ir.qualify(fn.name, terminator.condition)
            )
        return terminator


def _reachable_functions(program):
    """Typed functions reachable from main: main first, then in call order."""
    order, seen = [], set()
    types = dict(program.types) if program.types is not None else None

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        fn = program.function(name)
        if types is not None and not all(ir.qualify(name, p) in types for p in fn.params):
            return
        order.append(fn)
        for callee in _callees(fn):
            visit(callee)

    visit(program.main)
    return order


def _callees(fn):
    names = []
    for block in fn.blocks:
        for ins in block.instructions:
            if isinstance(ins, ir.Call) and ins.function not in names:
                names.append(ins.function)
    return names


def _variable_order(fn):
    order = list(fn.params)
    for block in fn.blocks:
        for ins in block.instructions:
            for v in liveness.defs(ins) + liveness.uses(ins):
                if v not in order:
                    order.append(v)
    return order


def _first_use_order(blocks):
    order: Dict[str, int] = {}
    for b in blocks:
        for ins in b.instructions:
            for v in liveness.uses(ins) + liveness.defs(ins):
                order.setdefault(v, len(order))
    return lambda v: order.get(v, len(order))
