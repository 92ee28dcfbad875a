"""Identity, membership and optionals, per example.

`x is None`, `flag is False`, `x in (1, 2, 3)`, `x in v`, `x in range(a, b)`
on per-example values get the meaning they have on one example (a number
is never None; membership is a comparison with each element), and an
optional (a value that is None in some examples, after a None-guard:
frontend/narrowing.py) is read through its `present` flag and `value`.
"""

from __future__ import annotations

import ast
import builtins
import copy

import numpy as np

from transpiler.passes.python_values import ValueQueries, after, call_node, text_of
from transpiler.passes.subscripts import SubscriptError, is_ragged_value


class Comparisons(ValueQueries):
    """The rewriter's rules for `is`, `in` and optionals (a base of
    passes/python_builtins.py's rewriter)."""

    # ---- optionals: a value that is None in some examples ------------------

    def visit_Name(self, node):
        """An optional used as a number (`r * 2`, `r < 3`, `abs(r)`) reads
        its `value` through `py_not_none`, which stops the examples where it
        is None with Python's TypeError (a read a None-guard made safe is
        `__present__(r)`: python_calls.py reads it plainly); the whole
        expression `y = r` or `return r` keeps it optional."""
        if node is self.root or not isinstance(node.ctx, ast.Load) or not self.optional(node):
            return node
        present = ast.Attribute(node, "present", ast.Load())
        value = ast.Attribute(ast.Name(node.id, ast.Load()), "value", ast.Load())
        name = node.id.rsplit(".", 1)[-1]
        return self.done(call_node("py_not_none", present, value, ast.Constant(name)))

    def visit_Attribute(self, node):
        if node.attr in ("present", "value") and isinstance(node.value, ast.Name) and self.optional(node.value):
            return node  # already read apart (type inference's `r.present & py_bool(r.value)`)
        return self.generic_visit(node)

    def visit_Tuple(self, node):
        for element in node.elts:
            if isinstance(element, ast.Name) and self.optional(element):
                raise SubscriptError(
                    f"`{text_of(node)}` puts `{element.id}`, which is None in some examples, in a "
                    "tuple; an optional inside a tuple is not supported: return a flag beside the value"
                )
        return self.generic_visit(node)

    visit_List = visit_Tuple

    def none_test(self, node):
        """`r is None`, `r is not None`, `r == None`, `r != None` of an
        optional: its `present` flag, per example."""
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            return None
        left, right = node.left, node.comparators[0]
        if _is_none(left):
            left, right = right, left
        if not _is_none(right) or not self.optional(left):
            return None
        present = ast.Attribute(left, "present", ast.Load())
        absent = isinstance(node.ops[0], (ast.Is, ast.Eq))
        return self.done(call_node("py_not", present) if absent else present)

    def optional_comparison(self, node):
        """`r == 0`, `r != x`, `r in (0, 5)` of an optional: None equals no
        number and is in no container, whatever its `value` holds there.
        (`r < 3` of a None raises TypeError in Python; it reads the value.)"""
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            return None
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq)) and not self.optional(left) and self.optional(right):
            left, right = right, left
        if not (isinstance(left, ast.Name) and self.optional(left)):
            return None
        present = ast.Attribute(left, "present", ast.Load())
        value = ast.Attribute(ast.Name(left.id, ast.Load()), "value", ast.Load())
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Name) and self.optional(right):
            # two optionals: equal where both are None, or both hold equal values
            other = ast.Attribute(ast.Name(right.id, ast.Load()), "present", ast.Load())
            values = ast.Compare(value, [ast.Eq()], [ast.Attribute(right, "value", ast.Load())])
            both = ast.BinOp(ast.BinOp(present, ast.BitAnd(), other), ast.BitAnd(), values)
            neither = ast.BinOp(
                call_node("py_not", copy.deepcopy(present)), ast.BitAnd(), call_node("py_not", copy.deepcopy(other))
            )
            equal = ast.BinOp(both, ast.BitOr(), neither)
            return self.done(call_node("py_not", equal) if isinstance(op, ast.NotEq) else equal)
        compared = self.visit(ast.Compare(value, [type(op)()], [right]))
        if isinstance(op, (ast.NotEq, ast.NotIn)):  # None differs from everything
            return self.done(ast.BinOp(call_node("py_not", present), ast.BitOr(), compared))
        return self.done(ast.BinOp(present, ast.BitAnd(), compared))

    def list_comparison(self, node):
        """`sorted(a) == sorted(b)`, `list(v) != list(w)`: two Python lists
        compare whole (one bool), where NumPy compares arrays element by
        element; so a comparison of two lists made by `sorted()`, `list()` or
        a list display is one bool per example (`py_list_equal`).  Ordering
        lists (`list(a) < list(b)`) is refused.  A list beside an array
        compares as NumPy does, as on one example."""
        if len(node.ops) != 1:
            return None
        left, right = node.left, node.comparators[0]
        if not (self.makes_list(left) and self.makes_list(right)):
            return None  # an array on either side: NumPy's `==`, element by element
        sides = [self.visit(side) for side in (left, right)]
        if not any(self.per_example(side) for side in sides):
            return None
        op = node.ops[0]
        if isinstance(op, (ast.Eq, ast.NotEq)):
            equal = call_node("py_list_equal", *sides)
            return self.done(call_node("py_not", equal) if isinstance(op, ast.NotEq) else equal)
        if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            raise SubscriptError(
                f"`{text_of(node)}` orders two lists (Python compares them item by item, "
                "lexicographically), which is not supported per example; compare their items "
                "in a loop"
            )
        return None

    def makes_list(self, node) -> bool:
        """Whether `node` is written to make a Python list: a list display or
        comprehension, or a call of the builtin `sorted` or `list`."""
        if isinstance(node, (ast.List, ast.ListComp)):
            return True
        return isinstance(node, ast.Call) and self.function(node) in (builtins.sorted, builtins.list)

    # ---- identity and membership -------------------------------------------

    def visit_Compare(self, node):
        tested = self.none_test(node)
        if tested is not None:
            return tested
        compared = self.optional_comparison(node)
        if compared is not None:
            return compared
        compared = self.list_comparison(node)
        if compared is not None:
            return compared
        container = node.comparators[0] if len(node.comparators) == 1 else None
        if (
            isinstance(node.ops[0], (ast.In, ast.NotIn))
            and isinstance(container, ast.Call)
            and self.function(container) is builtins.range
        ):
            # `x in range(a, b)`: the range is the membership's to read, not a call
            node.left = self.visit(node.left)
            container.args = [self.visit(a) for a in container.args]
            return self.membership(node, isinstance(node.ops[0], ast.NotIn))
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node  # the builder splits chains: constants only here
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            return self.identity(node, isinstance(op, ast.IsNot))
        if isinstance(op, (ast.In, ast.NotIn)):
            return self.membership(node, isinstance(op, ast.NotIn))
        return node

    def identity(self, node, negated):
        left, right = node.left, node.comparators[0]
        if not (self.per_example(left) or self.per_example(right)):
            return node
        if isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
            left, right = right, left
        info = self.info(left)
        if isinstance(right, ast.Constant) and right.value is None:
            answer = False  # a per-example number, array or tuple is never None
        elif isinstance(right, ast.Constant) and isinstance(right.value, bool):
            if info is not None and info.batched and info.scalar and info.dtype == np.bool_:
                op = ast.NotEq() if negated else ast.Eq()
                return self.done(ast.Compare(left, [op], [right]))
            answer = False  # an int, float or array is never the bool object
        else:
            raise SubscriptError(
                f"`{text_of(node)}` compares the identity of per-example values, which has no "
                "batched meaning; compare values with == (or test `is None` on an optional)"
            )
        return self.done(after(left, answer != negated))

    def membership(self, node, negated):
        item, container = node.left, node.comparators[0]
        result = self.contains(node, item, container)
        if result is None:
            return node
        self.changed = True
        return call_node("py_not", result) if negated else result

    def contains(self, node, item, container):
        """`item in container` per example, or None if nothing differs per example."""
        if isinstance(container, (ast.Tuple, ast.List, ast.Set)):
            if not (self.per_example(item) or any(self.per_example(e) for e in container.elts)):
                return None
            self.scalars(node, [item, *container.elts])
            return _any_equal(item, container.elts)
        if isinstance(container, ast.Call) and self.function(container) is builtins.range:
            if not (self.per_example(item) or any(self.per_example(a) for a in container.args)):
                return None
            return self.in_range(node, item, container)
        holder = self.info(container)
        if holder is None:
            return None
        if is_ragged_value(holder.value):  # a vector whose length differs per example
            self.scalars(node, [item])
            return call_node("ragged_contains", container, item)
        if holder.batched:
            self.scalars(node, [item])
            if not holder.shape:
                raise SubscriptError(f"`{text_of(node)}`: `in` a number; Python needs a container")
            return call_node("py_contains", container, item)
        if isinstance(holder.value, (tuple, list)) and self.batched_tuple(holder.value):
            self.scalars(node, [item])
            return _any_equal(item, self.elements(container, holder.value))
        if not self.per_example(item):
            return None
        self.scalars(node, [item])
        if isinstance(holder.value, str):
            raise SubscriptError(
                f"`{text_of(node)}`: a number `in` a string raises TypeError in Python; with text "
                "held as character codes, test the codes: `c in CODES` with a module-level "
                "`CODES = np.array([ord(ch) for ch in 'aeiou'])`"
            )
        if isinstance(holder.value, (dict, set, frozenset)):
            raise SubscriptError(f"`{text_of(node)}`: `in` a dict or set is not supported per example; use a tuple or an array")
        table = np.asarray(holder.value)
        if table.dtype.kind not in "biuf":
            raise SubscriptError(f"`{text_of(node)}`: `in` needs a container of numbers")
        return call_node("py_contains_constant", container, item)

    def in_range(self, node, item, call):
        args = list(call.args)
        start, stop, step = (ast.Constant(0), args[0], None) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else None)
        sign = 1
        if step is not None:
            info = self.info(step)
            if info is None or info.batched or not isinstance(info.value, int) or info.value == 0:
                raise SubscriptError(f"`{text_of(node)}`: `in range(...)` needs a step that is the same nonzero int for every example")
            sign = 1 if info.value > 0 else -1
        self.scalars(node, [item, *args])
        if sign > 0:
            test = ast.BinOp(ast.Compare(start, [ast.LtE()], [item]), ast.BitAnd(), ast.Compare(item, [ast.Lt()], [stop]))
            offset = ast.BinOp(item, ast.Sub(), start)
        else:
            test = ast.BinOp(ast.Compare(stop, [ast.Lt()], [item]), ast.BitAnd(), ast.Compare(item, [ast.LtE()], [start]))
            offset = ast.BinOp(start, ast.Sub(), item)
        modulus = abs(self.info(step).value) if step is not None else 1
        item_info = self.info(item)
        is_float = item_info is not None and (
            item_info.dtype.kind == "f" if item_info.batched else isinstance(item_info.value, float)
        )
        if modulus != 1 or is_float:  # a float is in a range only if it equals one of its ints
            test = ast.BinOp(
                test,
                ast.BitAnd(),
                ast.Compare(ast.BinOp(offset, ast.Mod(), ast.Constant(modulus)), [ast.Eq()], [ast.Constant(0)]),
            )
        return test


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _any_equal(item, elements):
    """`(item == e1) | (item == e2) | ...`: Python's `in` on numbers."""
    if not elements:
        return ast.Constant(False)
    result = None
    for element in elements:
        test = ast.Compare(item, [ast.Eq()], [element])
        result = test if result is None else ast.BinOp(result, ast.BitOr(), test)
    return result
