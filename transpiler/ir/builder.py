"""Stages 3-4: canonicalize the fenced AST and build a control-flow graph.

One walk over the statements does both jobs:

- *A-normal form*: every call of a batched function is hoisted out of its
  expression into a `Call` whose arguments are variables and whose result is
  a fresh variable; what is left of the expression becomes one `PrimOp`.
  `return fib(n - 1) + fib(n - 2)` becomes

      fib_1_n = n - 1          PrimOp
      fib_1 = fib(fib_1_n)     Call
      fib_2_n = n - 2          PrimOp
      fib_2 = fib(fib_2_n)     Call
      result_1 = fib_1 + fib_2 PrimOp
      return result_1          Return

- *Structured control flow to a CFG*: `if`, `while`, `break`, `continue` and
  early `return` become blocks joined by `Goto`/`Branch`/`Return`, so no
  rewrite of early exits into flags is needed.

Variables are mutable registers of the function, so rebinding (`x = x + 1`)
and swaps (`a, b = b, a`, evaluated as one tuple assignment) need no renaming.
Fresh names come from source names plus a counter and never collide with the
user's names.
"""

from __future__ import annotations

import builtins
from typing import Dict, List, Optional, Sequence

import gast

from transpiler.errors import UnsupportedSyntaxError
from transpiler.frontend.fence import local_names
from transpiler.frontend.source import FunctionSource, origin_of
from transpiler.ir import instructions as ir


def build(
    source: FunctionSource, batched_params: Dict[str, Sequence[str]]
) -> ir.Function:
    """Builds the IR function of one fenced source.

    `batched_params` maps every batched function of the context to its
    parameter names (used to name argument temporaries after them).
    """
    return _FunctionBuilder(source, batched_params).build()


class _PendingBlock:
    def __init__(self, name, origin):
        self.name = name
        self.origin = origin
        self.instructions: List = []
        self.terminator = None


class _FunctionBuilder:
    def __init__(self, source: FunctionSource, batched_params):
        self.source = source
        self.fn = source.node
        self.batched_params = batched_params
        self.locals = local_names(self.fn)
        self.used_names = set(self.locals)
        self.counters: Dict[str, int] = {}
        self.blocks: List[_PendingBlock] = []
        self.loops: List[tuple] = []  # (continue_target, break_target)
        self.free_names: List[str] = []
        self.current = self.new_block(None)  # takes its first statement's origin

    # ---- blocks ----------------------------------------------------------

    def new_block(self, origin) -> _PendingBlock:
        block = _PendingBlock(f"{self.source.name}_{len(self.blocks)}", origin)
        self.blocks.append(block)
        return block

    def emit(self, instruction):
        if self.current.origin is None:
            self.current.origin = instruction.origin
        self.current.instructions.append(instruction)

    def terminate(self, terminator):
        if self.current.terminator is None:
            self.current.terminator = terminator

    def start(self, block):
        self.current = block

    # ---- names -----------------------------------------------------------

    def fresh(self, base: str, exact_first: bool = False) -> str:
        if exact_first and base not in self.used_names:
            self.used_names.add(base)
            return base
        while True:
            k = self.counters.get(base, 0) + 1
            self.counters[base] = k
            name = f"{base}_{k}"
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def is_batched_call(self, node) -> bool:
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id in self.batched_params
            and node.func.id not in self.locals
        )

    # ---- the walk --------------------------------------------------------

    def build(self) -> ir.Function:
        for stmt in self.fn.body:
            self.statement(stmt)
        self.terminate(ir.Return(None, origin_of(self.fn)))
        blocks = self.reachable_blocks()
        return ir.Function(
            name=self.source.name,
            params=tuple(a.id for a in self.fn.args.args),
            blocks=blocks,
            origin=origin_of(self.fn),
            free_names=tuple(self.free_names),
        )

    def reachable_blocks(self):
        by_name = {b.name: b for b in self.blocks}
        seen, order = set(), []
        stack = [self.blocks[0].name]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            order.append(name)
            t = by_name[name].terminator
            if isinstance(t, ir.Goto):
                stack.append(t.target)
            elif isinstance(t, ir.Branch):
                stack.extend([t.false_target, t.true_target])
        kept = [b for b in self.blocks if b.name in seen]  # source order
        return tuple(
            ir.Block(
                b.name,
                tuple(b.instructions),
                b.terminator,
                b.origin or b.terminator.origin,
                self.source.name,
            )
            for b in kept
        )

    def statements(self, body):
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt):
        origin = origin_of(stmt)
        if self.current.terminator is not None:
            # Code after return/break/continue: unreachable, built and dropped.
            self.start(self.new_block(origin))
        if isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value, origin)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value, origin)
        elif isinstance(stmt, gast.AugAssign):
            value = gast.BinOp(
                left=gast.Name(stmt.target.id, gast.Load(), None, None),
                op=stmt.op,
                right=stmt.value,
            )
            self.assign([stmt.target], value, origin)
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return  # a docstring or a bare literal
            if self.is_batched_call(stmt.value):
                self.call(stmt.value, None, origin)
            else:
                self.primop(None, self.flatten(stmt.value, origin), origin)
        elif isinstance(stmt, gast.If):
            self.if_statement(stmt, origin)
        elif isinstance(stmt, gast.While):
            self.while_statement(stmt, origin)
        elif isinstance(stmt, gast.Break):
            self.terminate(ir.Goto(self.loops[-1][1], origin))
        elif isinstance(stmt, gast.Continue):
            self.terminate(ir.Goto(self.loops[-1][0], origin))
        elif isinstance(stmt, gast.Return):
            self.return_statement(stmt, origin)
        elif isinstance(stmt, gast.Pass):
            pass
        else:  # the fence lets nothing else through
            raise AssertionError(f"unfenced statement {type(stmt).__name__}")

    def assign(self, targets, value, origin):
        patterns = [self.pattern(t) for t in targets]
        first = patterns[0]
        if self.is_batched_call(value):
            self.call(value, first, origin)
        else:
            self.primop(first, self.flatten(value, origin), origin)
        for other in patterns[1:]:  # a = b = value
            self.primop(other, gast.Name(_single(first), gast.Load(), None, None), origin)

    def pattern(self, target) -> ir.Pattern:
        if isinstance(target, gast.Name):
            return target.id
        return tuple(self.pattern(e) for e in target.elts)

    def if_statement(self, stmt, origin):
        condition = self.condition(stmt.test, origin)
        then_block = self.new_block(origin_of(stmt.body[0], origin))
        else_block = (
            self.new_block(origin_of(stmt.orelse[0], origin)) if stmt.orelse else None
        )
        join_block = _PendingBlock(None, None)
        self.terminate(
            ir.Branch(
                condition,
                then_block.name,
                (else_block or join_block).name or "",
                origin,
            )
        )
        branch_block = self.current
        exits = []
        self.start(then_block)
        self.statements(stmt.body)
        exits.append(self.current)
        if else_block is not None:
            self.start(else_block)
            self.statements(stmt.orelse)
            exits.append(self.current)
        falls_through = [b for b in exits if b.terminator is None]
        if else_block is None or falls_through:
            join = self.new_block(None)
            for b in falls_through:
                b.terminator = ir.Goto(join.name, origin)
            if else_block is None:
                t = branch_block.terminator
                branch_block.terminator = ir.Branch(
                    t.condition, t.true_target, join.name, t.origin
                )
            self.start(join)
        else:
            # Both arms left (return/break/continue): what follows is unreachable.
            self.start(self.new_block(origin))
            self.current.terminator = ir.Return(None, origin)

    def while_statement(self, stmt, origin):
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        condition = self.condition(stmt.test, origin)
        body = self.new_block(origin_of(stmt.body[0], origin))
        exit_block = self.new_block(None)
        self.terminate(ir.Branch(condition, body.name, exit_block.name, origin))
        self.loops.append((header.name, exit_block.name))
        self.start(body)
        self.statements(stmt.body)
        self.terminate(ir.Goto(header.name, origin))
        self.loops.pop()
        # Move the exit after the body so blocks stay in source order.
        self.blocks.remove(exit_block)
        self.blocks.append(exit_block)
        self.start(exit_block)

    def return_statement(self, stmt, origin):
        if stmt.value is None:
            self.terminate(ir.Return(None, origin))
            return
        if self.is_batched_call(stmt.value):
            result = self.fresh(stmt.value.func.id)
            self.call(stmt.value, result, origin)
            self.terminate(ir.Return(result, origin))
            return
        residual = self.flatten(stmt.value, origin)
        if isinstance(residual, gast.Name) and residual.id in self.locals:
            self.terminate(ir.Return(residual.id, origin))
            return
        result = self.fresh("result")
        self.primop(result, residual, origin)
        self.terminate(ir.Return(result, origin))

    def condition(self, test, origin) -> str:
        residual = self.flatten(test, origin)
        if isinstance(residual, gast.Name) and residual.id in self.used_names:
            return residual.id
        name = self.fresh("cond")
        self.primop(name, residual, origin)
        return name

    # ---- expressions -----------------------------------------------------

    def call(self, node, vars_out, origin):
        callee = node.func.id
        params = list(self.batched_params[callee])
        if len(node.args) != len(params):
            raise UnsupportedSyntaxError(
                f"{callee!r} takes {len(params)} argument(s), "
                f"this call passes {len(node.args)}",
                origin_of(node, origin),
                "pass exactly one value per parameter",
            )
        prefix = vars_out if isinstance(vars_out, str) else callee
        args = []
        for param, arg in zip(params, node.args):
            residual = self.flatten(arg, origin)
            if isinstance(residual, gast.Name) and residual.id in self.used_names:
                args.append(residual.id)
            else:
                name = self.fresh(f"{prefix}_{param}", exact_first=True)
                self.primop(name, residual, origin)
                args.append(name)
        self.emit(ir.Call(callee, tuple(args), vars_out, origin))

    def flatten(self, expr, origin):
        """Hoists batched calls out of `expr`; returns the residual expression."""
        if self.is_batched_call(expr):
            result = self.fresh(expr.func.id)
            self.call(expr, result, origin_of(expr, origin))
            return gast.Name(result, gast.Load(), None, None)
        for field, value in gast.iter_fields(expr):
            if isinstance(value, gast.AST):
                setattr(expr, field, self.flatten(value, origin))
            elif isinstance(value, list):
                setattr(
                    expr,
                    field,
                    [self.flatten(v, origin) if isinstance(v, gast.AST) else v for v in value],
                )
        return expr

    def primop(self, vars_out, residual, origin):
        vars_in = []
        for node in gast.walk(residual):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                if node.id in self.used_names:
                    if node.id not in vars_in:
                        vars_in.append(node.id)
                else:
                    self.note_free_name(node, origin)
        expr = _unparse(residual)
        self.emit(ir.PrimOp(tuple(vars_in), vars_out, expr, origin))

    def note_free_name(self, node, origin):
        name = node.id
        if name in self.free_names:
            return
        known = (
            name in self.source.closure
            or name in self.source.globals
            or hasattr(builtins, name)
        )
        if not known:
            raise UnsupportedSyntaxError(
                f"name {name!r} is not defined (in batched function {self.source.name!r})",
                origin_of(node, origin),
                "define it at module level before the first call, "
                "or assign it in the function",
            )
        self.free_names.append(name)


def _single(pattern):
    if isinstance(pattern, str):
        return pattern
    raise UnsupportedSyntaxError("chained assignment to a tuple pattern")


def _unparse(node) -> str:
    import ast

    tree = gast.gast_to_ast(gast.Expression(body=node))
    return ast.unparse(ast.fix_missing_locations(tree))
