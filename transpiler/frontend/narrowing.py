"""Where Python code has ruled out None, the value is read as present.

Code written for one example tests a value that may be None and goes on
only where it is not:

    r = find(v, x)          # None in some examples
    if r is None:
        return -1
    return r                # an int, in every example that gets here

Batched, `r` is an `Optional` (autobatch_runtime/optional.py) for the whole
function, so `return r` would make the function return an Optional although
Python's function never returns None.  This pass marks the uses that a
guard has made safe: after `if r is None: <ends with return, raise, break or
continue>` (to the end of the statement list, or the first statement that
assigns `r` again), inside `if r is not None:`, and in the `else` of
`if r is None:`, each read of `r` becomes `__present__(r)`.  Type
inference's Python pass (passes/python_builtins.py) reads the marker as
`r.value` when `r` is optional and as `r` otherwise, so the marker never
reaches the generated code.

Only guards that test one name against None directly are understood;
anything else keeps the value optional (as before: correct, only less
precise).
"""

from __future__ import annotations

import copy
from typing import List, Optional

import gast

PRESENT = "__present__"


def narrow(fn: gast.FunctionDef) -> gast.FunctionDef:
    """A copy of `fn` with the reads a None-guard makes safe marked."""
    fn = copy.deepcopy(fn)
    _walk_statements(fn.body)
    return fn


def _walk_statements(stmts: List[gast.stmt]) -> None:
    for k, stmt in enumerate(stmts):
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                _walk_statements(inner)
        if not isinstance(stmt, gast.If):
            continue
        tested = _none_test(stmt.test)
        if tested is None:
            continue
        name, is_none = tested
        safe, other = (stmt.orelse, stmt.body) if is_none else (stmt.body, stmt.orelse)
        _mark(safe, name)
        if _terminates(other):
            _mark(stmts[k + 1 :], name)


def _none_test(test) -> Optional[tuple]:
    """(name, True for `is None` / False for `is not None`), or None."""
    if not (isinstance(test, gast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if _is_none(left):
        left, right = right, left
    if not (isinstance(left, gast.Name) and _is_none(right)):
        return None
    op = test.ops[0]
    if isinstance(op, (gast.Is, gast.Eq)):
        return left.id, True
    if isinstance(op, (gast.IsNot, gast.NotEq)):
        return left.id, False
    return None


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _terminates(stmts: List[gast.stmt]) -> bool:
    """Whether running `stmts` never falls through to what follows."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise, gast.Break, gast.Continue)):
        return True
    if isinstance(last, gast.If):
        return _terminates(last.body) and _terminates(last.orelse)
    return False


def _stores(node, name: str) -> bool:
    return any(
        isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
        for n in gast.walk(node)
    )


def _mark(stmts: List[gast.stmt], name: str) -> None:
    """Marks the reads of `name` in `stmts`, up to the first statement that
    assigns it (that statement and the rest keep their reads as they are)."""
    for stmt in stmts:
        if _stores(stmt, name):
            return
        _Marker(name).visit(stmt)


class _Marker(gast.NodeTransformer):
    def __init__(self, name: str):
        self.name = name

    def visit_Name(self, node):
        if node.id != self.name or not isinstance(node.ctx, gast.Load):
            return node
        call = gast.Call(gast.Name(PRESENT, gast.Load(), None, None), [node], [])
        return gast.copy_location(call, node)

    def visit_Call(self, node):
        if isinstance(node.func, gast.Name) and node.func.id == PRESENT:
            return node  # marked already (a guard inside a guard)
        return self.generic_visit(node)
