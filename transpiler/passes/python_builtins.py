"""Python's builtins, `math`, identity and membership, per example.

A Python builtin is never a primitive.  On the batch, `min(a, b)` would
compare two whole arrays (an error, or a wrong answer), `isinstance(n, int)`
would ask about the batch object (False: every example takes the "bad
input" path), `str(n)` would print the whole batch and `x is None` would
test the batch's identity.  This pass gives every such form the meaning it
has on one example, from the per-example types that type inference knows,
or refuses it at build time (a `SubscriptError`, which type inference
reports with the user's line):

    min(a, b), max(a, b, 3)   ->  py_min(a, b), py_max(a, b, 3)
    min(v), sum(v), any(v)    ->  py_min_of(v), py_sum(v), py_any(v)    (v a per-example vector)
    int(x), round(x)          ->  py_int(x), py_round(x)                (x a float)
    divmod(a, b), pow(a, b)   ->  (a // b, a % b), a ** b
    math.sqrt(n)              ->  py_math('sqrt', n)
    isinstance(n, int)        ->  True                                  (n is an int per example)
    x is None, flag is False  ->  False, flag == False                  (x a number, flag a bool)
    x in (1, 2, 3), x in v    ->  (x == 1) | (x == 2) | (x == 3), py_contains(v, x)
    len(str(n))               ->  py_decimal_length(n)
    str(n), print(n), f'{n}'  ->  refused: text has no per-example value

Builtins and `math` functions whose arguments are all constants keep their
Python meaning and are left alone.  The `py_*` helpers live in the runtime
(autobatch_runtime/builtins_numpy.py and builtins_tensorflow.py).

This module is the entry point (`mentions`, `rewrite`) and the rules for
text and repeated lists; the rules for calls are passes/python_calls.py,
for `is`, `in` and optionals passes/python_comparisons.py, and what they
know of a value passes/python_values.py.
"""

from __future__ import annotations

import ast
import builtins
import re

import numpy as np

from autobatch_runtime.common import PYTHON_HELPERS
from transpiler.frontend.narrowing import PRESENT
from transpiler.passes.python_calls import MATH_FUNCTIONS, BuiltinCalls
from transpiler.passes.python_comparisons import Comparisons
from transpiler.passes.python_values import call_node, text_of
from transpiler.passes.subscripts import SubscriptError, Values

# The runtime helpers this module writes (bare names in the IR, `rt.<name>`
# in the generated module).
HELPERS = PYTHON_HELPERS

# Words whose presence means there may be something to rewrite (a cheap test).
_WORDS = tuple(
    name
    for name in dir(builtins)
    if not name.startswith("_") and name[0].islower()
) + ("math", " is ", " in ", "f'", 'f"', "%", "] *", "* [", ".copy(", ".sort(", ".fill(", ".reverse(", ".index(", ".count(", ".bit_length(", ".mean(", ".prod(", ".argmax(", ".argmin(", ".cumsum(", ".cumprod(", ".flatten(", ".ravel(", ".transpose(", "sort(", "flip(", "roll(", "dot(", "matmul(", "inner(", "norm(", "@", "concatenate(", "stack(", "append(", ".astype(", "[[", PRESENT) + tuple(
    sorted(MATH_FUNCTIONS | {"isclose", "factorial", "comb", "perm"})  # `from math import sqrt`: sqrt(x)
)


def mentions(expr: str) -> bool:
    """Whether `expr` may call a builtin, test identity or membership."""
    return any(word in expr for word in _WORDS)


def joins_lists(expr: str, list_names) -> bool:
    """Whether `expr` may do arithmetic with a list (`row + [0]`, `a * 2` of a
    list name, `v - [1, 2]`): `_joined_lists`, `_list_operand` and
    `_refuse_list_arithmetic` look closer."""
    if not any(op in expr for op in "+-*/%"):
        return False
    return "[" in expr or bool(set(re.findall(r"[A-Za-z_]\w*", expr)) & set(list_names))


def rewrite(expr: str, values: Values) -> str:
    """`expr` with every builtin, `math` call, `is` and `in` on per-example
    values given its per-example meaning (or a SubscriptError)."""
    tree = ast.parse(expr, mode="eval")
    rewriter = _Rewriter(values)
    rewriter.root = tree.body
    new = rewriter.visit(tree)
    if not rewriter.changed:
        return expr
    return ast.unparse(ast.fix_missing_locations(new))


class _Rewriter(BuiltinCalls, Comparisons):
    """Every rule: calls (passes/python_calls.py), `is`, `in` and optionals
    (passes/python_comparisons.py), and text and repeated lists here."""

    # ---- reads by lists of positions ------------------------------------------

    def visit_Subscript(self, node):
        """`m[[i, j]]` (NumPy's fancy read) of a per-example array: the
        example's items at those positions, a new array (`py_join("stack",
        (m[i], m[j]), ranks)`; the subscripts pass reads each item)."""
        self.generic_visit(node)
        positions = node.slice
        if not (
            isinstance(node.ctx, ast.Load)
            and isinstance(positions, ast.List)
            and positions.elts
            and not any(isinstance(p, (ast.Starred, ast.Slice)) for p in positions.elts)
            and self.per_example(node.value)
        ):
            return node
        items = [ast.Subscript(node.value, p, ast.Load()) for p in positions.elts]
        infos = [self.info(item) for item in items]
        if any(i is None or not i.batched for i in infos):
            return node
        ranks = ast.Tuple([ast.Constant(len(i.shape)) for i in infos], ast.Load())
        return self.done(call_node("py_join", ast.Constant("stack"), ast.Tuple(items, ast.Load()), ranks))

    # ---- text ---------------------------------------------------------------

    def visit_JoinedStr(self, node):
        self.generic_visit(node)
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and self.per_example(part.value):
                raise SubscriptError(
                    f"the f-string `{text_of(node)}` formats a per-example value: text has no "
                    "per-example value in a batched program; return numbers (codes) instead"
                )
        return node

    def visit_BinOp(self, node):
        # which sides are lists, as written (`list(v)` becomes `v` below)
        written = [_written_as_list(self, node.left), _written_as_list(self, node.right)]
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult) and (isinstance(node.left, ast.List) or isinstance(node.right, ast.List)):
            repeated = _repeated_list(self, node)
            if repeated is not node:
                return repeated
        sides = [_list_kind(self, side, w) for side, w in zip((node.left, node.right), written)]
        joined = _joined_lists(self, node, sides)
        if joined is not None:
            return self.done(joined)
        operand = _list_operand(self, node, sides)
        if operand is not None:
            return self.done(operand)
        _refuse_list_arithmetic(self, node, sides)
        if isinstance(node.op, ast.Mod):
            left = self.info(node.left)
            if left is not None and not left.batched and isinstance(left.value, (str, bytes)) and self.per_example(node.right):
                raise SubscriptError(
                    f"`{text_of(node)}` formats a per-example value as text, which has no "
                    "per-example value in a batched program"
                )
        return node


def _refuse_list_arithmetic(rewriter, node, sides):
    """`a + b` of two lists joins them in Python, and `a * k` repeats one;
    a list made by `[0] * n` (or a comprehension) is an array here, which
    `+` and `*` would add and multiply elementwise: a wrong answer without
    an error, so refused.  (Two list displays, `[a, b] + [c]`, are Python
    lists here too, and join.)"""
    if isinstance(node.op, ast.MatMult) and sides != [None, None]:
        # Python raises TypeError for two lists; NumPy converts one beside an
        # array, whose per-example rank this rewrite does not see: refused
        # either way, never computed on the list as the batch holds it
        raise SubscriptError(
            f"`{text_of(node)}`: Python lists have no `@` of their own (two lists raise "
            "TypeError; NumPy converts one beside an array), and a list in `@` is not "
            "supported here: make it an array first (`np.array([1.0, 2.0]) @ v`)"
        )
    if not isinstance(node.op, (ast.Add, ast.Mult)):
        return
    if "array" not in sides:
        return
    if isinstance(node.op, ast.Add) and None not in sides:
        raise SubscriptError(
            f"`{text_of(node)}` joins two lists in Python, and a list made by `[x] * n` "
            "or a comprehension is an array here, which `+` would add elementwise: build "
            "the list at its full length and assign its items (`row = [0] * (n + 1)`, "
            "`row[0] = 1`)"
        )
    if isinstance(node.op, ast.Mult) and None in sides:
        other = node.right if sides[0] == "array" else node.left
        info = rewriter.info(other)
        if info is not None and not info.batched and isinstance(info.value, (int, np.integer)):
            raise SubscriptError(
                f"`{text_of(node)}` repeats a list in Python, and a list made by `[x] * n` "
                "or a comprehension is an array here, which `*` would multiply elementwise: "
                "make the repeated list in one step (`[x] * (n * k)`)"
            )


def _joined_lists(rewriter, node, sides):
    """`[1] + [0] * n`, `row + [x]`, `[i] + dp` where one side is a list kept
    as an array: Python's joined list, `py_list_join(parts, kinds)` (the
    parts of a chain `a + b + c` in one call), or None where this is not
    such a join (or the parts are not lists of numbers: refused below)."""
    if not isinstance(node.op, ast.Add):
        return None
    if None in sides or "array" not in sides:
        return None
    parts, kinds = [], []
    for side in (node.left, node.right):
        if _is_join(side):
            parts += side.args[0].elts
            kinds += [k.value for k in side.args[1].elts]
            continue
        info = rewriter.info(side)
        if info is None:
            return None
        if isinstance(info.value, (list, tuple)):
            items = [rewriter.info(ast.Subscript(side, ast.Constant(k), ast.Load())) for k in range(len(info.value))]
            if any(i is None or (i.batched and not i.scalar) for i in items):
                return None  # a list of rows: refused
            if not isinstance(side, ast.List):
                side = ast.List(rewriter.elements(side, info.value), ast.Load())
            parts.append(ast.Tuple(side.elts, ast.Load()))
            kinds.append("items")
        elif info.batched:
            if len(info.shape) != 1:
                return None
            parts.append(side)
            kinds.append("batched")
        else:
            shape = getattr(info.value, "shape", None)
            if len(np.shape(info.value) if shape is None else shape) != 1:
                return None
            parts.append(side)
            kinds.append("constant")
    return call_node(
        "py_list_join",
        ast.Tuple(parts, ast.Load()),
        ast.Tuple([ast.Constant(k) for k in kinds], ast.Load()),
    )


_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _list_operand(rewriter, node, sides):
    """`v + [1, 2, 3]`, `v * [1.0, 1.0, x]` with `v` a NumPy array: NumPy
    makes the list an array and works elementwise.  The list display here
    becomes that array, `py_list_join(((1.0, 1.0, x),), ("items",))`
    ([batch, n], or [n] where no item differs per example, of the dtype
    holding every item), which every backend's arithmetic takes (JAX and
    TensorFlow take no list, and a list of per-example numbers is no array
    for any of them).  None where this is not such an operation."""
    if not isinstance(node.op, _ELEMENTWISE) or sides.count("list") != 1 or "array" in sides:
        return None
    listed, other = (node.left, node.right) if sides[0] == "list" else (node.right, node.left)
    info, other_info = rewriter.info(listed), rewriter.info(other)
    if info is None or other_info is None or not isinstance(info.value, (list, tuple)):
        return None
    if not (other_info.shape if other_info.batched else isinstance(other_info.value, np.ndarray) and other_info.value.ndim):
        return None  # a number, a tuple, a list: Python's own (an error, or a join)
    items = [rewriter.info(ast.Subscript(listed, ast.Constant(k), ast.Load())) for k in range(len(info.value))]
    if not items or any(i is None or (i.batched and not i.scalar) for i in items):
        return None  # rows: NumPy's nested conversion, left to the evaluation below
    elements = listed.elts if isinstance(listed, ast.List) else rewriter.elements(listed, info.value)
    array = call_node(
        "py_list_join",
        ast.Tuple([ast.Tuple(list(elements), ast.Load())], ast.Load()),
        ast.Tuple([ast.Constant("items")], ast.Load()),
    )
    if listed is node.left:
        node.left = array
    else:
        node.right = array
    return node


def _is_join(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "py_list_join"


def _list_kind(rewriter, node, written):
    """"array" for a list the program keeps as an array (`[x] * n`, a
    comprehension, `list(v)`), "list" for one it keeps as a Python list (a
    display), None for anything not written as a list."""
    if not written:
        return None
    value = rewriter.values.of(node)
    return "list" if isinstance(value, (list, tuple)) else "array"


def _written_as_list(rewriter, node) -> bool:
    """Whether `node`, as the user wrote it, makes a Python list: a display
    or comprehension, `[x] * n`, `list(...)`, `sorted(...)`, a join of two,
    a slice of one, or a name some assignment makes a list."""
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return isinstance(node.left, ast.List) or isinstance(node.right, ast.List)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _written_as_list(rewriter, node.left) and _written_as_list(rewriter, node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in ("repeat", "py_list_join"):
            return True
        if node.func.id in ("list", "sorted"):
            return rewriter.function(node) in (list, sorted)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _written_as_list(rewriter, node.value)
    lists = getattr(rewriter.values, "list_names", frozenset())
    return isinstance(node, ast.Name) and node.id in lists


def _repeated_list(rewriter, node):
    """`[x] * n` (or `n * [x]`): a list of n equal numbers, used as a
    fixed-size array (`counts = [0] * 26`, `dp = [0] * (len(v) + 1)`), is
    `repeat(x, n)`, an array of n elements per example, which item
    assignment and per-example indexing work on.  n must be the same for
    every example; `[[0] * m] * n` repeats one row object in Python (a write
    to one row changes all), so it is refused."""
    items, count = (node.left, node.right) if isinstance(node.left, ast.List) else (node.right, node.left)
    if len(items.elts) != 1:
        return node  # `[a, b] * 2`: a list, as in Python
    element = items.elts[0]
    inner_list = isinstance(element, ast.Call) and isinstance(element.func, ast.Name) and element.func.id == "repeat"
    if inner_list or isinstance(element, (ast.List, ast.ListComp)) or (
        isinstance(element, ast.Name) and isinstance(rewriter.values.of(element), list)
    ):
        raise SubscriptError(
            "a list of lists made by `*` repeats one list object: in Python every row is the same "
            "object, so a write to one row changes them all; build the rows apart: "
            "`[[0] * m for _ in range(n)]`"
        )
    size = rewriter.info(count)
    if size is None:
        return node
    if size.batched:
        raise SubscriptError(
            f"`{text_of(node)}`: a list whose length differs per example has no fixed per-example "
            "shape; make its length the same for every example (a bound), and keep a count"
        )
    value = rewriter.info(element)
    if not isinstance(size.value, (int, np.integer)) or value is None:
        return node
    if not value.batched and not isinstance(value.value, (bool, int, float, np.number)):
        return node  # `[None] * n`, `["a"] * n`: Python's list
    if value.batched and not value.scalar:
        return node
    return rewriter.done(call_node("repeat", element, count))
