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
`if r is None:`, in the body of `while r is not None:`, and in the
operands Python evaluates only past such a test in an expression (`r is
not None and r > 2`, `r * 2 if r is not None else 0`), each read of `r`
becomes `__present__(r)`.  Tests combine with `and`, `or` and `not`.  Type
inference's Python pass (passes/python_builtins.py) reads the marker as
`r.value` when `r` is optional and as `r` otherwise, so the marker never
reaches the generated code.  An unmarked read of an optional used as a
number stops the examples where it is None with Python's TypeError
(`py_not_none`), so a guard this pass misses costs an error, never a
wrong value.

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
    _GuardedOperands().visit(fn)
    _walk_statements(fn.body)
    return fn


def _walk_statements(stmts: List[gast.stmt]) -> None:
    for k, stmt in enumerate(stmts):
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                _walk_statements(inner)
        if isinstance(stmt, gast.While):
            for name in _present_when(stmt.test, True):
                _mark(stmt.body, name)  # each trip starts where the test held
            continue
        if not isinstance(stmt, gast.If):
            continue
        present_in_body = _present_when(stmt.test, True)
        present_in_orelse = _present_when(stmt.test, False)
        for name in present_in_body:
            _mark(stmt.body, name)
        for name in present_in_orelse:
            _mark(stmt.orelse, name)
        after = set()
        if _terminates(stmt.body):
            after |= present_in_orelse
        if _terminates(stmt.orelse):
            after |= present_in_body
        for name in sorted(after):
            _mark(stmts[k + 1 :], name)


def _present_when(test, truth: bool) -> set:
    """The names that are not None wherever `test` is `truth`: `r is not
    None` (True), `r is None` (False), `not ...`, and the operands of `and`
    (all True) or `or` (all False)."""
    tested = _none_test(test)
    if tested is not None:
        name, is_none = tested
        return {name} if is_none != truth else set()
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        return _present_when(test.operand, not truth)
    if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And) == truth:
        # `a and b` is True only where both are; `a or b` False only where both are
        return set().union(*(_present_when(value, truth) for value in test.values))
    return set()


class _GuardedOperands(gast.NodeTransformer):
    """Marks the reads Python evaluates only past a None test in the same
    expression: `r is not None and r > 2`, `r is None or r < 0`,
    `r * 2 if r is not None else 0`."""

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        truth = not isinstance(node.op, gast.And)  # `and` goes on where its operands are True
        present = set()
        for k, value in enumerate(node.values):
            for name in sorted(present):
                node.values[k] = _Marker(name).visit(value)
                value = node.values[k]
            present |= _present_when(value, not truth)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        for name in sorted(_present_when(node.test, True)):
            node.body = _Marker(name).visit(node.body)
        for name in sorted(_present_when(node.test, False)):
            node.orelse = _Marker(name).visit(node.orelse)
        return node


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


def maybe_none_names(fn: gast.FunctionDef, calls_batched) -> frozenset:
    """The locals that may hold None, read from the text alone: assigned
    `None` (or `x if c else None`), the result of a batched function
    (`calls_batched(node)`: it may return None), or another such local, and
    parameters whose default is None.  The builder evaluates an operand of
    `and`, `or` or `... if ... else ...` that reads one only where Python
    does: used as a number, a None stops the example (TypeError)."""
    arguments = fn.args
    defaults = arguments.defaults
    positional = arguments.args[len(arguments.args) - len(defaults) :] if defaults else []
    names = {a.id for a, d in zip(positional, defaults) if _is_none(d)}
    names |= {a.id for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None and _is_none(d)}
    assignments = [
        (target.id, node.value)
        for node in gast.walk(fn)
        if isinstance(node, gast.Assign)
        for target in node.targets
        if isinstance(target, gast.Name)
    ]

    def may_be_none(value) -> bool:
        if _is_none(value) or calls_batched(value):
            return True
        if isinstance(value, gast.IfExp):
            return may_be_none(value.body) or may_be_none(value.orelse)
        return isinstance(value, gast.Name) and value.id in names

    grew = True
    while grew:
        found = {name for name, value in assignments if may_be_none(value)}
        grew = not found <= names
        names |= found
    return frozenset(names)


def unmarked_reads(expr) -> set:
    """The names `expr` reads as values outside a `__present__` marker (not
    `tree` of `tree.ok` or `v` of `v[i]`: a None is never a record, and an
    array's reads are checked by index)."""
    out = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == PRESENT:
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            out.add(node.id)
        children = list(gast.iter_child_nodes(node))
        if isinstance(node, (gast.Attribute, gast.Subscript)) and isinstance(node.value, gast.Name):
            children.remove(node.value)
        stack.extend(children)
    return out

