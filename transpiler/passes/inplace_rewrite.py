"""The in-place rewrite: callees hand their changed parameters back.

Once the analysis (passes/inplace_analysis.py) knows which parameters each
function assigns items of, this rewrite gives the IR Python's effect: such
a function returns `(result, *changed parameters)`, and every call of it
becomes `(p, arr) = call f(arr, ...)`, rebinding the caller's variables to
the changed arrays.  A `return g(...)` whose callee hands back the same
parameters stays a tail call.  The entry keeps its public result; when the
program calls it too, those calls go to a copy, `<entry>__inplace`.
"""

from __future__ import annotations

import dataclasses

from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir import instructions as ir
from transpiler.passes.inplace_sharing import names_of

VARIANT_SUFFIX = "__inplace"


class Rewrite:
    """Makes the in-place functions return their changed parameters, and
    their calls rebind the caller's variables to them."""

    def __init__(self, program, inplace, called):
        self.program = program
        self.inplace = dict(inplace)
        self.main = program.main
        self.variant = None
        if self.inplace.get(self.main) and self.main in called:
            # The entry returns its own result; its calls inside the program
            # go to a copy that hands its changes back.
            names = {f.name for f in program.functions}
            self.variant = self.main + VARIANT_SUFFIX
            if self.variant in names:
                raise UnsupportedSyntaxError(
                    f"a batched function may not be called {self.variant!r}: the compiler "
                    f"uses that name for a copy of {self.main!r}",
                    program.function(self.variant).origin,
                    "rename it",
                )
            self.inplace[self.variant] = self.inplace[self.main]

    def original(self, name):
        return self.main if name == self.variant else name

    def run(self) -> ir.Program:
        functions = []
        for fn in self.program.functions:
            if fn.name == self.main:
                functions.append(self.function(fn, extras=()))
                if self.variant is not None:
                    variant = _renamed(fn, self.variant)
                    functions.append(self.function(variant, self.inplace[self.variant]))
            else:
                functions.append(self.function(fn, self.inplace[fn.name]))
        return ir.Module(tuple(functions)).program(self.main)

    def function(self, fn, extras):
        self.names = names_of(fn)
        blocks = []
        for block in fn.blocks:
            instructions = [
                self.call(dataclasses.replace(ins, function=self.callee(ins.function)))
                if isinstance(ins, ir.Call)
                else ins
                for ins in block.instructions
            ]
            terminator = block.terminator
            if extras and isinstance(terminator, ir.Return):
                last = block.instructions[-1] if block.instructions else None
                if isinstance(last, ir.Call):
                    last = dataclasses.replace(last, function=self.callee(last.function))
                if isinstance(last, ir.Call) and self.hands_back_the_same(extras, last, terminator):
                    # `return g(...)` with g handing back what fn hands back:
                    # g's result is fn's, and the call stays a tail call.
                    result = self.fresh(f"{last.function}_result")
                    instructions[-1] = dataclasses.replace(last, vars_out=result)
                    terminator = ir.Return(result, terminator.origin)
                else:
                    value = terminator.value
                    parts = ["None" if value is None else _pattern_source(value)] + list(extras)
                    vars_in = []
                    for n in ir.pattern_names(value) + tuple(extras):
                        if n not in vars_in:
                            vars_in.append(n)
                    result = self.fresh("returned")
                    instructions.append(
                        ir.PrimOp(
                            tuple(vars_in),
                            result,
                            "(" + ", ".join(parts) + ")",
                            origin=terminator.origin,
                            namespace={},
                        )
                    )
                    terminator = ir.Return(result, terminator.origin)
            blocks.append(
                dataclasses.replace(block, instructions=tuple(instructions), terminator=terminator)
            )
        return dataclasses.replace(fn, blocks=tuple(blocks))

    def callee(self, name):
        return self.variant if (self.variant and name == self.main) else name

    def hands_back_the_same(self, extras, call, ret) -> bool:
        """Whether `return g(...)` may stay a tail call: g hands back, in
        order, exactly the parameters the caller hands back, and its result
        is the caller's."""
        theirs = self.inplace.get(call.function, ())
        callee = self.program.function(self.original(call.function))
        if len(extras) != len(theirs):
            return False
        if any(call.vars_in[callee.params.index(q)] != p for q, p in zip(theirs, extras)):
            return False
        if ret.value is not None:
            return isinstance(call.vars_out, str) and ret.value == call.vars_out
        # `g(...)` then `return`: g must return None on every path
        return call.vars_out is None and all(
            b.terminator.value is None for b in callee.blocks if isinstance(b.terminator, ir.Return)
        )

    def call(self, ins):
        changed = self.inplace.get(ins.function, ())
        if not changed:
            return ins
        callee = self.program.function(self.original(ins.function))
        bound = set(ir.pattern_names(ins.vars_out))
        extras = []
        for p in changed:
            arg = ins.vars_in[callee.params.index(p)]
            # Python binds the call's result after the callee ran: a name the
            # result rebinds keeps the result, not the changed argument.
            extras.append(self.fresh("unused") if arg in bound or arg in extras else arg)
        first = ins.vars_out if ins.vars_out is not None else self.fresh("unused")
        return dataclasses.replace(ins, vars_out=(first,) + tuple(extras))

    def fresh(self, base):
        k, name = 0, base
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name


def _renamed(fn: ir.Function, name: str) -> ir.Function:
    """A copy of `fn` called `name` (its blocks renamed to match)."""

    def block_name(old):
        prefix = fn.name + "_"
        return name + "_" + old[len(prefix):] if old.startswith(prefix) else f"{name}_{old}"

    def terminator(t):
        if isinstance(t, ir.Goto):
            return dataclasses.replace(t, target=block_name(t.target))
        if isinstance(t, ir.Branch):
            return dataclasses.replace(
                t, true_target=block_name(t.true_target), false_target=block_name(t.false_target)
            )
        return t

    blocks = tuple(
        dataclasses.replace(
            b, name=block_name(b.name), terminator=terminator(b.terminator), function=name
        )
        for b in fn.blocks
    )
    return dataclasses.replace(fn, name=name, blocks=blocks)


def _pattern_source(pattern) -> str:
    if isinstance(pattern, str):
        return pattern.lstrip("*")
    return "(" + ", ".join(_pattern_source(p) for p in pattern) + ("," if len(pattern) == 1 else "") + ")"
