"""NumPy's array methods of per-example arrays: `v.sum()`, `np.max(m,
axis=0)`, `np.sort(m, axis=0)`, `m.astype(float)`, ...

`array_reduction` makes a method (or the library function of the same name)
the method of the example's array, `py_array_method(method, v, axis, shift)`
(autobatch_runtime/array_methods.py; which call is which method:
passes/array_calls.py); of a vector whose length differs per example, NumPy's
sum and mean read its own elements (`ragged_sum`, `ragged_mean`).
`astype_call` writes NumPy's conversion for every backend.  A base of the
rules in passes/python_calls.py.
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from autobatch_runtime.array_methods import METHODS
from transpiler.passes.array_calls import library_method, literal_arguments
from transpiler.passes.python_values import ValueQueries, call_node, text_of
from transpiler.passes.subscripts import SubscriptError, is_ragged_value


class ArrayMethodCalls(ValueQueries):
    """The rules for array methods (a base of passes/python_calls.py's rules)."""

    def astype_call(self, node):
        """`m.astype(float)` of a per-example array: NumPy's conversion,
        `cast(m, "float64")`, written for every backend (TensorFlow's tensors
        have no astype)."""
        if not (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "astype"
            and len(node.args) == 1
            and not node.keywords
            and self.per_example(node.func.value)
        ):
            return None
        kind = self.info(node.args[0])
        if kind is None or kind.batched:
            return None
        dtype = np.dtype(kind.value)
        return self.done(call_node("cast", node.func.value, ast.Constant(dtype.name)))

    def array_reduction(self, node):
        """`v.sum()`, `v.max(axis=0)`, `m.argmax()`, `v.cumsum()`, `m.flatten()`,
        `m.transpose()` of a per-example array, and the library's functions
        of the same names (`np.sum(v)`, `np.max(v, axis=0)`, `np.cumsum(v)`,
        `np.sort(m, axis=0)`, `np.roll(v, 2)`, `np.flip(m)`): NumPy's method
        on the example's array, `py_array_method(method, v, axis, shift)`
        (autobatch_runtime/array_methods.py; TensorFlow's tensors have no such
        methods, and JAX's and NumPy's would reach across the batch).  A
        Python list has none of them: refused.  Other arguments (`keepdims`,
        `kind`, an axis that is not a literal: transpiler/passes/array_calls.py)
        are left to the refusal of a call that moves the batch axis."""
        func, args = node.func, list(node.args)
        method = library_method(self.function(node)) if args else None
        if method is not None:  # `np.sum(v)`, `np.max(v, axis=0)`: the method of v
            values, args = args[0], args[1:]
            if method == "tf_mean":
                info = self.info(values)
                if info is None or info.dtype is None or info.dtype.kind != "f":
                    return None
                method = "mean"
        elif isinstance(func, ast.Attribute) and func.attr in METHODS:
            method, values = func.attr, func.value
        else:
            return None
        if (
            method in ("sum", "mean")
            and not args
            and not node.keywords
            and is_ragged_value(self.values.of(values))
        ):
            # a vector of per-example length (`np.mean(v[lo:i + 1])`): its own elements
            return self.done(call_node(f"ragged_{method}", self.visit(values)))
        info = self.info(values)
        if info is None or not info.batched:  # as written, the batch may be joined into it
            info = self.info(self.rewritten(values))
        if info is None or not info.batched or not info.shape:
            return None
        lists = getattr(self.values, "list_names", frozenset())
        listed = self.makes_list(values) or (isinstance(values, ast.Name) and values.id in lists)
        if listed and values is func.value:
            raise SubscriptError(
                f"`{text_of(node)}`: a Python list has no `{method}()` method (Python raises "
                f"AttributeError); call the builtin (`sum(v)`, `max(v)`) or make it an array "
                "(`np.array(v)`)"
            )
        given = literal_arguments(method, args, node.keywords)
        if given is None:
            return None
        extra = [given.get("axis"), given["shift"]] if "shift" in given else list(given.values())
        arguments = [ast.Constant(method), self.visit(values)] + [ast.Constant(a) for a in extra]
        return self.done(call_node("py_array_method", *arguments))

    def rewritten(self, node):
        """A rewritten copy of `node`, to learn its value where the node as
        written cannot be evaluated on the backend's placeholders
        (`np.sort(m[0])` of a TensorFlow tensor); `node` is left as it is."""
        changed = self.changed
        try:
            return self.visit(copy.deepcopy(node))
        finally:
            self.changed = changed
