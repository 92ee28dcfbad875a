"""Joins of per-example arrays: `np.concatenate([a, b])`, `np.stack([x, y],
axis=1)`, `np.append(v, x)`, `np.hstack((a, b))`, `np.vstack([a, b])` (and
jax.numpy's).

Run on the batch as written, each joins along the batch axis (NumPy's
default axis 0 is the batch's).  They become `py_join(kind, items, ranks,
axis)`, the join of each example's arrays (autobatch_runtime/array_joins.py),
when the items are a list or tuple display (each item's per-example rank is
known when the program is built) and the axis a literal int.  Otherwise the
call is left to the refusal of one that moves the batch axis.
"""

from __future__ import annotations

import ast
import sys

import numpy as np

from autobatch_runtime.array_joins import KINDS
from transpiler.passes.python_values import ValueQueries, call_node
from transpiler.passes.subscript_syntax import _static_int

# each function's parameters after the items: `np.append(arr, values, axis=None)`
_AXIS = {"concatenate": "axis", "stack": "axis", "append": "axis"}


class JoiningCalls(ValueQueries):
    """The rule for joining calls (a base of passes/python_calls.py's rules)."""

    def joining_call(self, node):
        kind = joining_function(self.function(node))
        if kind is None or not node.args:
            return None
        if kind == "append":
            if len(node.args) < 2:
                return None
            items, rest = list(node.args[:2]), node.args[2:]
        else:
            display = node.args[0]
            if not isinstance(display, (ast.List, ast.Tuple)) or not display.elts:
                return None
            if any(isinstance(item, ast.Starred) for item in display.elts):
                return None
            items, rest = list(display.elts), node.args[1:]
        axis = self._literal_axis(kind, rest, node.keywords)
        if axis is False or not any(self.per_example(item) for item in items):
            return None
        ranks = []
        for item in items:
            info = self.info(item)
            if info is None:
                return None
            ranks.append(len(info.shape) if info.batched else np.ndim(info.value))
        arguments = [
            ast.Constant(kind),
            ast.Tuple([self.visit(item) for item in items], ast.Load()),
            ast.Tuple([ast.Constant(r) for r in ranks], ast.Load()),
        ]
        if axis is not None:
            arguments.append(ast.Constant(axis))
        return self.done(call_node("py_join", *arguments))

    def _literal_axis(self, kind, rest, keywords):
        """The literal axis (None: the function's default), or False where
        another argument is given or the axis is not a literal int."""
        given = list(rest)
        for keyword in keywords:
            if keyword.arg != _AXIS.get(kind):
                return False
            given.append(keyword.value)
        if len(given) > 1 or (given and kind not in _AXIS):
            return False
        if not given:
            return None
        value = _static_int(given[0])
        return False if value is None else value


def joining_function(function):
    """The join `function` is, if NumPy's or jax.numpy's (see KINDS)."""
    if function is None:
        return None
    jnp = sys.modules.get("jax.numpy")
    for name in KINDS:
        if function is getattr(np, name) or (jnp is not None and function is getattr(jnp, name)):
            return name
    return None
