"""Reductions of comprehensions: `sum(x * y for x, y in zip(a, b))`.

Public code reduces generator expressions and list comprehensions in one
line: `sum(1 for x in v if x > t)`, `any(v[i] > v[i + 1] for i in range(n -
1))`, `max(abs(a - b) for a, b in zip(u, w))`, `all(x % p for p in PRIMES)`.
The comprehension's length may differ per example (its `if`), but its
reduction is one number, so it is written as the loop Python runs:

    total = 0                        # sum(E for T in I if C, start)
    for T' in I:                     # T' fresh names: the comprehension's
        if C':                       # variables are its own, as in Python 3
            total = total + E'

`any` stops at the first true element and `all` at the first false one, as
Python's do (a later element is never evaluated: it may index out of range);
`max` and `min` keep the first of equal elements and, where the
comprehension is empty and no `default=` is given, stop the example with
Python's ValueError (`py_nonempty`, autobatch_runtime/python_errors.py).
Several `for`s nest in order, each `if` inside the `for` before it.

The fence (frontend/fence.py) checks the loop this module writes with the
rules of any `for` statement, and the builder (ir/builder_reductions.py)
builds that same loop, so the two agree on what is supported.
"""

from __future__ import annotations

import copy
from typing import Callable, List, Optional

import gast

from transpiler.frontend.iterables import builtin_call, target_names

REDUCTIONS = ("sum", "any", "all", "max", "min")
NONEMPTY = "py_nonempty"  # the runtime's check of a max() or min() of nothing


def reduction(node, source, locals_) -> Optional[str]:
    """ "sum", "any", "all", "max" or "min" where `node` calls that builtin
    on one comprehension (`sum(f(x) for x in v)`, `max([...])`), "len" for
    `len([x for x in v if c])`, else None."""
    if not isinstance(node, gast.Call) or not node.args:
        return None
    if not isinstance(node.args[0], (gast.GeneratorExp, gast.ListComp)):
        return None
    if isinstance(node.args[0], gast.ListComp) and builtin_call(node, "len", source, locals_):
        return "len"  # `len([x for x in v if x > t])`: a count
    for name in REDUCTIONS:
        if builtin_call(node, name, source, locals_):
            return name
    return None


def problem(node, name) -> Optional[str]:
    """Why the call's other arguments cannot be written as a loop, or None."""
    keywords = {k.arg for k in node.keywords}
    if name == "sum":
        if len(node.args) + len(keywords) > 2 or keywords - {"start"}:
            return "sum() takes a comprehension and a start"
    elif name in ("max", "min"):
        if "key" in keywords:
            return f"{name}() with key= is not supported on per-example values"
        if len(node.args) > 1 or keywords - {"default"}:
            return f"{name}() of a comprehension takes default= alone"
    elif len(node.args) > 1 or keywords:
        return f"{name}() takes one argument"
    return None


class Loop:
    """The statements a reduction becomes: `first` (assignments before the
    loop, in order), `loop` (a `for` statement) and `result`, the name that
    holds the reduction after it; `found` names a flag set once an element
    is seen (max and min without a default), which `py_nonempty` checks."""

    def __init__(self, first, loop, result, found):
        self.first, self.loop, self.result, self.found = first, loop, result, found


def as_loop(node, name, fresh: Callable[[str], str]) -> Loop:
    """The loop Python runs for `name(comprehension, ...)` (see the module
    docstring); `fresh(base)` gives a new variable name."""
    comprehension = copy.deepcopy(node.args[0])
    keywords = {k.arg: k.value for k in node.keywords}
    generators = _renamed(comprehension, fresh)
    result = fresh(name)
    element = comprehension.elt
    first = []
    found = None
    if name == "len":
        first.append(_assign(result, gast.Constant(0, None)))
        item = fresh("item")  # Python builds the element even where only the count is read
        innermost = [
            _assign(item, element),
            _assign(result, gast.BinOp(_load(result), gast.Add(), gast.Constant(1, None))),
        ]
        stop_outer = None
    elif name == "sum":
        start = (
            node.args[1] if len(node.args) > 1 else keywords.get("start", gast.Constant(0, None))
        )
        first.append(_assign(result, copy.deepcopy(start)))
        innermost = [_assign(result, gast.BinOp(_load(result), gast.Add(), element))]
        stop_outer = None
    elif name in ("any", "all"):
        decided = name == "any"  # the value once an element decides it
        first.append(_assign(result, gast.Constant(not decided, None)))
        test = element if decided else gast.UnaryOp(gast.Not(), element)
        innermost = [
            gast.If(test, [_assign(result, gast.Constant(decided, None)), gast.Break()], [])
        ]
        stop_outer = _load(result) if decided else gast.UnaryOp(gast.Not(), _load(result))
    else:
        found = None if "default" in keywords else fresh("found")
        seen = fresh("seen") if found is None else found
        item = fresh("item")
        first.append(
            _assign(result, copy.deepcopy(keywords.get("default", gast.Constant(0, None))))
        )
        first.append(_assign(seen, gast.Constant(False, None)))
        better = gast.Gt() if name == "max" else gast.Lt()
        take = [_assign(result, _load(item)), _assign(seen, gast.Constant(True, None))]
        # the comparison only once an element is held: `default=None` is never compared
        beats = gast.If(
            gast.Compare(_load(item), [better], [_load(result)]), copy.deepcopy(take), []
        )
        innermost = [_assign(item, element), gast.If(_load(seen), [beats], take)]
        stop_outer = None
    loop = _nest(generators, innermost, stop_outer)
    for statement in first + [loop]:
        for part in gast.walk(statement):
            if isinstance(part, gast.stmt):
                part.origin = getattr(node, "origin", None)  # errors name the user's line
    return Loop(first, loop, result, found)


def _nest(generators, innermost: List, stop_outer) -> gast.For:
    """`for g1: if ...: for g2: if ...: innermost`, with `if stop_outer:
    break` after each inner loop (any/all: decided, stop every loop)."""
    body = innermost
    for depth, generator in reversed(list(enumerate(generators))):
        for condition in reversed(generator.ifs):
            body = [gast.If(condition, body, [])]
        loop = gast.For(generator.target, generator.iter, body, [], None)
        if depth == 0:
            return loop
        body = [loop]
        if stop_outer is not None:
            body.append(gast.If(copy.deepcopy(stop_outer), [gast.Break()], []))
    raise AssertionError("a comprehension has a `for`")


def _renamed(comprehension, fresh):
    """The comprehension's generators, with each of its variables renamed to
    a fresh name in its targets, conditions, later iterables and element: a
    comprehension's variables never leak into the function (Python 3)."""
    generators = comprehension.generators
    for index, generator in enumerate(generators):
        for variable in sorted(set(target_names(generator.target))):
            new = fresh(variable if variable != "_" else "index")
            generator.target = _rename_target(generator.target, variable, new)
            for later in generators[index:]:
                later.ifs = [_substitute(c, variable, new) for c in later.ifs]
            for later in generators[index + 1 :]:
                later.iter = _substitute(later.iter, variable, new)
            comprehension.elt = _substitute(comprehension.elt, variable, new)
    return generators


def _rename_target(target, variable, new):
    if isinstance(target, gast.Name):
        return gast.Name(new, gast.Store(), None, None) if target.id == variable else target
    target.elts = [_rename_target(t, variable, new) for t in target.elts]
    return target


def _binds(node, variable) -> bool:
    return isinstance(node, (gast.ListComp, gast.GeneratorExp)) and any(
        variable in target_names(g.target) for g in node.generators
    )


def _substitute(node, variable, new):
    """`node` with its reads of `variable` reading `new` (a nested
    comprehension's own variable of that name is left alone)."""
    if isinstance(node, gast.Name) and node.id == variable and isinstance(node.ctx, gast.Load):
        return _load(new)
    if _binds(node, variable):
        node.generators[0].iter = _substitute(node.generators[0].iter, variable, new)
        return node
    for field, value in gast.iter_fields(node):
        if isinstance(value, gast.AST):
            setattr(node, field, _substitute(value, variable, new))
        elif isinstance(value, list):
            setattr(
                node,
                field,
                [_substitute(v, variable, new) if isinstance(v, gast.AST) else v for v in value],
            )
    return node


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _assign(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)
