"""What a `for` loop iterates, and what a loop body assigns.

The fence (frontend/fence.py) and the builder (ir/builder_loops.py) must
agree on which loops are supported and on what each one reads: the fence
refuses an iterable this module cannot describe, the builder turns the
description into a counted loop.  Keeping the one description here means
a construct the fence lets through is one the builder can build.

`iterable` describes `for x in ...` as an `Iterable` tree (or raises a
`Refusal`, which the fence reports with the user's line); `stores` says
which names a body rebinds, whose items it assigns and which it augments.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Tuple

import gast
import numpy as np

from transpiler.frontend.source import node_text


class Refusal(Exception):
    """An unsupported iterable: the node to point at, the message and a hint."""

    def __init__(self, node, message, hint):
        super().__init__(message)
        self.node, self.message, self.hint = node, message, hint


@dataclasses.dataclass
class Iterable:
    """What a `for` loop iterates, element by element.

    kind: "value" (a per-example array, or an expression giving one: `v`,
    `m[0]`, `f(v)`), "table" (a module-level or closure constant: a NumPy
    array or a tuple of numbers), "constant" (a literal tuple or list of
    numbers), "range" (`range(...)` inside the builtins below),
    "enumerate" / "zip" / "reversed" (of `parts`).
    """

    kind: str
    node: Any = None  # the expression ("value", "table", "constant", "range")
    parts: Tuple["Iterable", ...] = ()
    start: Any = None  # enumerate's start (None: 0)


def builtin_call(node, name, source, locals_) -> bool:
    """Whether `node` calls Python's builtin `name` (not a shadowing one)."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Name)
        and node.func.id == name
        and name not in locals_
        and name not in source.globals
        and name not in source.closure
    )


def is_range_call(node, source, locals_) -> bool:
    return (
        builtin_call(node, "range", source, locals_)
        and not node.keywords
        and 1 <= len(node.args) <= 3
        and not any(isinstance(a, gast.Starred) for a in node.args)
    )


_MISSING = object()


def constant_value(name, source):
    """The module-level or closure value `name` reads, or _MISSING."""
    if name in source.closure:
        return source.closure[name]
    return source.globals.get(name, _MISSING)


def _is_number(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) in (int, float, bool)


def _numeric_table(value) -> bool:
    """A NumPy array (or tuple/list) of numbers with at least one axis."""
    if isinstance(value, (str, bytes, dict, set, frozenset)):
        return False
    if not isinstance(value, (np.ndarray, tuple, list)):
        return False
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - ragged: not a table
        return False
    return array.ndim >= 1 and array.dtype.kind in "biuf"


def iterable(node, source, locals_) -> Iterable:
    """The `Iterable` a `for` loop over `node` iterates, or a `Refusal`.

    `range(...)` at the top of a loop is not asked about here: it is the
    counted loop itself (the builder's `for_statement`).
    """
    hint = "loop over `range(len(...))`, or over a per-example array, `enumerate`, `zip` or `reversed` of one"
    for name in ("enumerate", "zip", "reversed", "range"):
        if builtin_call(node, name, source, locals_):
            break
    else:
        name = None
    if name is not None and any(isinstance(a, gast.Starred) for a in node.args):
        raise Refusal(node, f"`*` arguments to {name}() in a `for` loop are not supported", "pass them one by one")
    if name == "range":
        if node.keywords or not 1 <= len(node.args) <= 3:
            raise Refusal(node, "range() takes one to three arguments", hint)
        if len(node.args) == 3 and not _is_nonzero_int(node.args[2]):
            raise Refusal(
                node.args[2],
                "a range inside enumerate, zip or reversed needs a literal step",
                "write the step as a number, or loop over `range(...)` itself",
            )
        return Iterable("range", node)
    if name == "enumerate":
        args = list(node.args)
        start = None
        for keyword in node.keywords:
            if keyword.arg != "start":
                raise Refusal(node, f"enumerate() has no argument {keyword.arg!r}", "write enumerate(v, start)")
            start = keyword.value
        if len(args) == 2 and start is None:
            start = args.pop()
        if len(args) != 1:
            raise Refusal(node, "enumerate() takes one iterable and a start", "write enumerate(v) or enumerate(v, 1)")
        return Iterable("enumerate", parts=(iterable(args[0], source, locals_),), start=start)
    if name == "zip":
        if node.keywords:
            raise Refusal(
                node,
                "zip() with keywords is not supported",
                "zip(v, w) stops at the shorter, as in Python; compare the lengths yourself",
            )
        if not node.args:
            raise Refusal(node, "zip() of nothing iterates nothing", "remove the loop")
        return Iterable("zip", parts=tuple(iterable(a, source, locals_) for a in node.args))
    if name == "reversed":
        if node.keywords or len(node.args) != 1:
            raise Refusal(node, "reversed() takes one sequence", "write reversed(v)")
        inner = iterable(node.args[0], source, locals_)
        if inner.kind in ("enumerate", "zip"):
            raise Refusal(
                node,
                f"reversed() of {inner.kind}() is not a sequence (Python refuses it too)",
                f"write {inner.kind}(reversed(...)) instead",
            )
        return Iterable("reversed", parts=(inner,))
    if isinstance(node, gast.Constant):
        if isinstance(node.value, (str, bytes)):
            raise Refusal(
                node,
                "a `for` loop over a string is not supported: text has no per-example value",
                "pass the characters as an int array of codes (`np.frombuffer(s.encode(), np.uint8)`) "
                "and loop over that",
            )
        raise Refusal(node, f"`{node_text(node)}` is not iterable", hint)
    if isinstance(node, (gast.Dict, gast.Set, gast.DictComp, gast.SetComp)):
        raise Refusal(
            node,
            "a `for` loop over a dict or a set is not supported",
            "use an array or a tuple of numbers",
        )
    if isinstance(node, (gast.Tuple, gast.List)):
        if all(_is_number(e) for e in node.elts):
            return Iterable("constant", node)
        raise Refusal(
            node,
            "a `for` loop over a tuple of values other than numbers is not supported",
            "stack them into an array first: `for x in np.stack([a, b, c], axis=-1)`",
        )
    if isinstance(node, gast.Name) and node.id not in locals_:
        value = constant_value(node.id, source)
        if value is _MISSING:
            return Iterable("value", node)  # undefined: the builder names it
        if _numeric_table(value):
            return Iterable("table", node)
        if isinstance(value, (str, bytes)):
            raise Refusal(
                node,
                f"a `for` loop over {node.id!r}, a string, is not supported: text has no per-example value",
                "make it a NumPy array or a tuple of numbers at module level",
            )
        if isinstance(value, (dict, set, frozenset)):
            raise Refusal(
                node,
                f"a `for` loop over {node.id!r}, a {type(value).__name__}, is not supported",
                "make it a NumPy array or a tuple of numbers at module level",
            )
        raise Refusal(
            node,
            f"a `for` loop over {node.id!r} (a {type(value).__name__}), which is not an array "
            "of numbers, is not supported",
            "loop over a module-level NumPy array, a tuple of numbers, or a per-example array",
        )
    return Iterable("value", node)


def live_names(spec: Iterable):
    """The local names a loop iterates as they are (`for x in v`)."""
    if spec.kind == "value" and isinstance(spec.node, gast.Name):
        return [spec.node.id]
    return [name for part in spec.parts for name in live_names(part)]


def _is_nonzero_int(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int and node.value != 0


def target_names(target):
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, gast.Starred):
        return target_names(target.value)
    if isinstance(target, (gast.Tuple, gast.List)):
        return [n for e in target.elts for n in target_names(e)]
    return []


def item_roots(target):
    """Names whose items an assignment target changes (`v[i]`, `(v[i], w[j])`)."""
    if isinstance(target, gast.Subscript):
        while isinstance(target, gast.Subscript):
            target = target.value
        return [target.id] if isinstance(target, gast.Name) else []
    if isinstance(target, gast.Starred):
        return item_roots(target.value)
    if isinstance(target, (gast.Tuple, gast.List)):
        return [n for e in target.elts for n in item_roots(e)]
    return []


def stores(body):
    """(rebound, items, augmented) of a list of statements: the names they
    assign (`v = ...`, a `for` target), the names whose items they assign
    (`v[i] = ...`, `v[i] += 1`), and the names they augment (`v += w`, in
    place on a NumPy array)."""
    rebound, items, augmented = set(), set(), set()
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                rebound.update(target_names(target))
                items.update(item_roots(target))
        elif isinstance(stmt, gast.AnnAssign) and stmt.value is not None:
            rebound.update(target_names(stmt.target))
            items.update(item_roots(stmt.target))
        elif isinstance(stmt, gast.AugAssign):
            augmented.update(target_names(stmt.target))
            items.update(item_roots(stmt.target))
        elif isinstance(stmt, gast.For):
            rebound.update(target_names(stmt.target))
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            for part in (stmt.body, stmt.orelse):
                more = stores(part)
                rebound |= more[0]
                items |= more[1]
                augmented |= more[2]
    return rebound, items, augmented
