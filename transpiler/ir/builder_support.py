"""What every part of the IR builder shares: pending blocks, names, text.

The builder (ir/builder.py) is split by construct into statements
(ir/builder_statements.py), loops (ir/builder_loops.py) and expressions
(ir/builder_expressions.py); this module holds what they all use: the
block under construction, the names the builder gives meaning to
(`__setitem__`, `repeat`, `NO_DEFAULT`), and the conversions between gast
nodes and the source text the IR's primitives hold.
"""

from __future__ import annotations

from typing import List

import gast


class PendingBlock:
    """A block being built: instructions appended, a terminator set once."""

    def __init__(self, name, origin):
        self.name = name
        self.origin = origin
        self.instructions: List = []
        self.terminator = None


SET_ITEM = "__setitem__"  # see passes/subscripts.py
REPEAT = "repeat"  # `[x for _ in range(n)]`: the runtime's repeat(x, n)
RANGE_STEP = "py_range_step"  # range()'s per-example step: 0 raises ValueError (python_errors.py)


class _NoDefault:
    def __repr__(self):
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()  # a parameter without a default value


def load(name):
    """A gast read of the variable `name`."""
    return gast.Name(name, gast.Load(), None, None)


def unparse(node) -> str:
    """The Python source text of a gast expression (what a PrimOp holds)."""
    import ast

    tree = gast.gast_to_ast(gast.Expression(body=node))
    return ast.unparse(ast.fix_missing_locations(tree))


def is_literal_int(node) -> bool:
    """Whether `node` is an int literal (`3`, `-1`): a static index or bound."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int
