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

- *Python's statements in canonical form*: item assignments inside tuple
  targets and chained assignments run in Python's order
  (`assign_in_order`); `for` over arrays, `enumerate`, `zip` and `reversed`
  becomes a counted loop reading elements by subscript (`for_each`); a list
  comprehension of a length known when the program is built becomes
  `repeat(x, n)` or a loop that fills an array (`list_comprehension`).

Variables are mutable registers of the function, so rebinding (`x = x + 1`)
and swaps (`a, b = b, a`, evaluated as one tuple assignment) need no renaming.
Fresh names come from source names plus a counter and never collide with the
user's names.

The walk is one object, `_FunctionBuilder`, written in four modules by
construct: this one (blocks, names, the walk's start and end),
ir/builder_statements.py, ir/builder_loops.py and
ir/builder_expressions.py; what they share is ir/builder_support.py.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import gast

from transpiler.frontend import narrowing
from transpiler.frontend.fence import local_names
from transpiler.frontend.source import FunctionSource, origin_of
from transpiler.ir import instructions as ir
from transpiler.ir.builder_expressions import Expressions
from transpiler.ir.builder_loops import Loops
from transpiler.ir.builder_statements import Statements
from transpiler.ir.builder_support import NO_DEFAULT, PendingBlock

__all__ = ["NO_DEFAULT", "build"]


def build(
    source: FunctionSource, batched_params: Dict[str, Sequence[str]]
) -> ir.Function:
    """Builds the IR function of one fenced source.

    `batched_params` maps every batched function of the context to its
    parameters, [(name, default value or NO_DEFAULT)]: calls may use keywords
    and leave out parameters that have (literal) defaults.
    """
    return _FunctionBuilder(source, batched_params).build()


class _FunctionBuilder(Statements, Loops, Expressions):
    """One function's walk: the blocks built so far, the names in use, and
    the loops open around the current statement."""

    def __init__(self, source: FunctionSource, batched_params):
        self.source = source
        # Reads that a None-guard has made safe are marked (frontend/narrowing.py)
        self.fn = narrowing.narrow(source.node)
        self.batched_params = batched_params
        self.locals = local_names(self.fn)
        # locals that may hold None: an operand reading one runs only where Python evaluates it
        self.maybe_none = narrowing.maybe_none_names(self.fn, self.is_batched_call)
        self.namespace = {**source.globals, **source.closure}
        self.used_names = set(self.locals)
        self.counters: Dict[str, int] = {}
        self.blocks: List[PendingBlock] = []
        self.loops: List[tuple] = []  # (continue_target, break_target)
        self.free_names: List[str] = []
        self.last_origin = None  # of the latest statement built (implicit returns)
        self.current = self.new_block(None)  # takes its first statement's origin

    # ---- blocks ----------------------------------------------------------

    def new_block(self, origin) -> PendingBlock:
        block = PendingBlock(f"{self.source.name}_{len(self.blocks)}", origin)
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
        # Falling off the end returns None; an error about it names the last
        # statement the example ran, not the `def`.
        self.terminate(ir.Return(None, self.last_origin or origin_of(self.fn)))
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
