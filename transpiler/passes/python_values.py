"""What the rewrite of Python's builtins knows of a value, and AST helpers.

passes/python_builtins.py gives builtins, `math`, identity and membership
their per-example meaning; every rule asks the same questions of a
subexpression (is it per example? one number or an array? an optional?),
answered here once, from the per-example values type inference computed
(`Values`, passes/subscripts.py).  `ValueQueries` is the base of the
rewriter: the rules in passes/python_calls.py and
passes/python_comparisons.py are methods of the same object.
"""

from __future__ import annotations

import ast
import copy
from typing import Optional

import numpy as np

from transpiler.passes.subscripts import SubscriptError, Values, _UNKNOWN


class Value:
    """What the rewrite knows of one subexpression's value."""

    def __init__(self, value, shape, dtype):
        self.value = value
        self.shape = shape  # per-example shape if batched, else None
        self.dtype = dtype  # numpy dtype of a batched value, else None

    @property
    def batched(self) -> bool:
        return self.shape is not None

    @property
    def scalar(self) -> bool:
        return self.shape == ()

    def python_class(self):
        """The class this value has on one example: a per-example number is
        a Python int, float, bool or complex; a per-example array an
        ndarray (strings are arrays of codes)."""
        if self.shape:
            return np.ndarray
        return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[self.dtype.kind]


def name_node(text):
    return ast.Name(text, ast.Load())


def call_node(function, *args):
    return ast.Call(name_node(function), list(args), [])


def text_of(node) -> str:
    """`node` as the user wrote it, for messages (an optional's checked read
    `py_not_none(r.present, r.value, 'r')` shows as `r`)."""
    return ast.unparse(_AsWritten().visit(copy.deepcopy(node)))


class _AsWritten(ast.NodeTransformer):
    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "py_not_none" and len(node.args) == 3:
            return node.args[1].value  # the optional's name
        if isinstance(node.func, ast.Name) and node.func.id == "repeat" and len(node.args) == 2:
            # `[x] * n`, as passes/python_builtins.py rewrote it
            element = self.visit(node.args[0])
            return ast.BinOp(ast.List([element], ast.Load()), ast.Mult(), self.visit(node.args[1]))
        return self.generic_visit(node)


class ValueQueries(ast.NodeTransformer):
    """The questions every rule asks of a subexpression; `done` marks that
    the expression changed."""

    def __init__(self, values: Values):
        self.values = values
        self.changed = False

    def info(self, node) -> Optional[Value]:
        value = self.values.of(node)
        if value is _UNKNOWN:
            return None
        shape = self.values.event_shape(value)
        if shape is None:
            return Value(value, None, None)
        dtype = value.dtype
        return Value(value, tuple(shape), np.dtype(getattr(dtype, "as_numpy_dtype", dtype)))

    def per_example(self, node) -> bool:
        """Whether `node`'s value differs per example (a batched array, or a
        tuple holding one)."""
        info = self.info(node)
        return info is not None and (info.batched or self.batched_tuple(info.value))

    def batched_tuple(self, value) -> bool:
        if isinstance(value, (tuple, list)):
            return any(self.batched_tuple(v) or self.values.event_shape(v) is not None for v in value)
        return False

    def function(self, node):
        """The object a call's function names (None if unknown)."""
        value = self.values.of(node.func)
        return None if value is _UNKNOWN else value

    def done(self, node):
        self.changed = True
        return node

    def elements(self, node, value):
        """A per-example tuple's elements as subscripts by literals."""
        return [ast.Subscript(node, ast.Constant(k), ast.Load()) for k in range(len(value))]

    def scalars(self, node, args):
        """Checks that every argument is one number per example."""
        for argument in args:
            info = self.info(argument)
            if info is not None and info.batched and not info.scalar:
                raise SubscriptError(
                    f"`{text_of(node)}`: `{text_of(argument)}` is an array per example, where "
                    "Python takes a number here"
                )
            if info is not None and not info.batched and isinstance(info.value, str):
                raise SubscriptError(f"`{text_of(node)}` mixes text with numbers")

    def optional(self, node) -> bool:
        from autobatch_runtime.optional import Optional

        info = self.info(node)
        return info is not None and isinstance(info.value, Optional)


def after(operand, answer):
    """The constant `answer`, once `operand` is evaluated if that can fail:
    `isinstance(v[n], float)` still reads v[n] (an index out of range raises
    IndexError, as in Python): `(v[n], False)[1]`."""
    if all(isinstance(n, (ast.Name, ast.Constant, ast.Load, ast.Attribute)) for n in ast.walk(operand)):
        return ast.Constant(answer)
    return ast.Subscript(ast.Tuple([operand, ast.Constant(answer)], ast.Load()), ast.Constant(1), ast.Load())
