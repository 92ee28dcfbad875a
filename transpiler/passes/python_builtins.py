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
"""

from __future__ import annotations

import ast
import builtins
import math
from typing import Optional

import numpy as np

from autobatch_runtime.common import PYTHON_HELPERS
from transpiler.frontend.narrowing import PRESENT
from transpiler.passes.subscripts import SubscriptError, Values, _UNKNOWN

# The runtime helpers this module writes (bare names in the IR, `rt.<name>`
# in the generated module).
HELPERS = PYTHON_HELPERS

# `math` functions with a per-example helper (the keys of the runtime's MATH).
MATH_FUNCTIONS = frozenset(
    """sqrt exp expm1 log1p log2 log10 sin cos tan asin acos atan sinh cosh tanh
    asinh acosh atanh fabs degrees radians atan2 hypot copysign fmod pow log floor
    ceil trunc isqrt gcd lcm isnan isinf isfinite""".split()
)

# Builtins that passes/subscripts.py gives their per-example meaning (it runs
# after this pass), or that are elementwise on arrays already.
_SUBSCRIPT_PASS = frozenset(("len", "slice"))
_TEXT = frozenset(("str", "repr", "format", "ascii", "hex", "oct", "bin", "chr"))
_ITERATION = frozenset(("range", "enumerate", "zip", "map", "filter", "iter", "next", "reversed"))

# Words whose presence means there may be something to rewrite (a cheap test).
_WORDS = tuple(
    name
    for name in dir(builtins)
    if not name.startswith("_") and name[0].islower()
) + ("math", " is ", " in ", "f'", 'f"', "%", "] *", "* [", ".copy(", PRESENT)


def mentions(expr: str) -> bool:
    """Whether `expr` may call a builtin, test identity or membership."""
    return any(word in expr for word in _WORDS)


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


class _Value:
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


def _name(text):
    return ast.Name(text, ast.Load())


def _call(function, *args):
    return ast.Call(_name(function), list(args), [])


def _text(node) -> str:
    return ast.unparse(node)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, values: Values):
        self.values = values
        self.changed = False

    # ---- what a subexpression is ------------------------------------------

    def info(self, node) -> Optional[_Value]:
        value = self.values.of(node)
        if value is _UNKNOWN:
            return None
        shape = self.values.event_shape(value)
        if shape is None:
            return _Value(value, None, None)
        dtype = value.dtype
        return _Value(value, tuple(shape), np.dtype(getattr(dtype, "as_numpy_dtype", dtype)))

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

    # ---- calls ------------------------------------------------------------

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == PRESENT and len(node.args) == 1:
            # a read a None-guard made safe (frontend/narrowing.py): the value
            # of an optional, any other value as it is
            (value,) = node.args
            if isinstance(value, ast.Name) and self.optional(value):
                return self.done(ast.Attribute(value, "value", ast.Load()))
            return self.done(self.visit(value))
        special = self.text_pattern(node)
        if special is not None:
            return self.done(special)
        self.generic_visit(node)
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "copy"
            and not node.args
            and not node.keywords
            and self.per_example(node.func.value)
        ):
            # `v.copy()` of a per-example array: each example's own copy,
            # which every value here already is (TF tensors have no .copy)
            return self.done(node.func.value)
        function = self.function(node)
        if function is None:
            return node
        name = _builtin_name(function)
        if name is None:
            return node
        arguments = list(node.args) + [k.value for k in node.keywords]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            if any(self.per_example(a.value if isinstance(a, ast.Starred) else a) for a in arguments):
                raise SubscriptError(f"`{_text(node)}`: `*` and `**` arguments of per-example values are not supported here; pass them one by one")
            return node
        if name == "print":
            raise SubscriptError(
                "print() has no per-example meaning in a batched program (it would run once for "
                "the whole batch); remove it, or call the function with dry_run=True to run it as Python"
            )
        if not any(self.per_example(a) for a in arguments) or name in _SUBSCRIPT_PASS:
            return node  # constants only: Python's own meaning
        if name.startswith("math."):
            return self.math_call(node, name[5:])
        handler = getattr(self, "builtin_" + name, None)
        if handler is None:
            raise SubscriptError(_no_translation(name, node))
        return handler(node)

    def text_pattern(self, node):
        """`len(str(n))` and `bin(n).count("1")`: text whose length or count
        is a number per example."""
        if (
            isinstance(node.func, ast.Name)
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Call)
            and len(node.args[0].args) == 1
            and not node.args[0].keywords
            and self.function(node) is builtins.len
            and self.function(node.args[0]) in (builtins.str, builtins.repr)
        ):
            inner = self.visit(node.args[0].args[0])
            info = self.info(inner)
            if info is not None and info.batched:
                if info.scalar and info.dtype.kind in "biu":
                    return _call("py_decimal_length", inner)
                raise SubscriptError(
                    f"`{_text(node)}`: the length of the text of a per-example "
                    f"{info.python_class().__name__} is supported for ints and bools only"
                )
            node.args[0].args[0] = inner
            return None
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "count"
            and isinstance(func.value, ast.Call)
            and len(func.value.args) == 1
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "1"
            and self.function(func.value) is builtins.bin
        ):
            inner = self.visit(func.value.args[0])
            info = self.info(inner)
            if info is not None and info.batched and info.scalar and info.dtype.kind in "biu":
                return _call("py_popcount", inner)
            func.value.args[0] = inner
        return None

    def math_call(self, node, name):
        if name not in MATH_FUNCTIONS or node.keywords:
            raise SubscriptError(_no_translation("math." + name, node))
        for argument in node.args:
            info = self.info(argument)
            if info is not None and info.batched and not info.scalar:
                raise SubscriptError(
                    f"`{_text(node)}`: math.{name} takes numbers, and `{_text(argument)}` is an "
                    f"array per example (use np.{name} or tf.math.{name} for arrays)"
                )
        return self.done(ast.Call(_name("py_math"), [ast.Constant(name)] + list(node.args), []))

    def scalars(self, node, args):
        """Checks that every argument is one number per example."""
        for argument in args:
            info = self.info(argument)
            if info is not None and info.batched and not info.scalar:
                raise SubscriptError(
                    f"`{_text(node)}`: `{_text(argument)}` is an array per example, where "
                    "Python takes a number here"
                )
            if info is not None and not info.batched and isinstance(info.value, str):
                raise SubscriptError(f"`{_text(node)}` mixes text with numbers")

    def extremum(self, node, largest):
        which = "max" if largest else "min"
        keywords = {k.arg: k.value for k in node.keywords}
        if "key" in keywords:
            raise SubscriptError(
                f"`{_text(node)}`: {which}() with key= is not supported on per-example values; "
                "compute the keys into an array and compare them in a loop"
            )
        if len(node.args) == 1:
            info = self.info(node.args[0])
            if info is not None and isinstance(info.value, (tuple, list)):
                elements = self.elements(node.args[0], info.value)
                return self.extremum(ast.Call(node.func, elements, []), largest) if len(elements) > 1 else self.done(elements[0])
            if info is None or not info.batched or not info.shape:
                raise SubscriptError(f"`{_text(node)}`: {which}() of one number; Python needs an iterable or two numbers")
            if len(info.shape) > 1:
                raise SubscriptError(
                    f"`{_text(node)}`: {which}() of a per-example {len(info.shape)}-d array compares its "
                    f"rows, which Python cannot do; use np.{which}(x, axis=-1)-style reductions"
                )
            if info.shape[0] == 0:
                if "default" in keywords:
                    return self.done(keywords["default"])
                raise SubscriptError(f"`{_text(node)}`: {which}() of an empty vector raises ValueError on every example")
            return self.done(_call(f"py_{which}_of", node.args[0]))
        if "default" in keywords:
            raise SubscriptError(f"`{_text(node)}`: default= is only for a single iterable")
        self.scalars(node, node.args)
        return self.done(_call(f"py_{which}", *node.args))

    def builtin_min(self, node):
        return self.extremum(node, largest=False)

    def builtin_max(self, node):
        return self.extremum(node, largest=True)

    def elements(self, node, value):
        """A per-example tuple's elements as subscripts by literals."""
        return [ast.Subscript(node, ast.Constant(k), ast.Load()) for k in range(len(value))]

    def builtin_sum(self, node):
        args = list(node.args)
        start = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "start"), None)
        info = self.info(args[0])
        if info is not None and isinstance(info.value, (tuple, list)):
            total = start if start is not None else ast.Constant(0)
            for element in self.elements(args[0], info.value):
                total = ast.BinOp(total, ast.Add(), element)
            return self.done(total)
        if info is not None and not info.batched and start is not None and np.ndim(info.value) == 1:
            # `sum(TABLE, d)`: the table's own sum, the same for every example
            return self.done(ast.BinOp(start, ast.Add(), _call("sum", args[0])))
        if info is None or not info.batched or not info.shape:
            raise SubscriptError(f"`{_text(node)}`: sum() needs a per-example vector or a tuple")
        call = _call("py_sum", args[0])
        if start is not None:
            call.args.append(start)
        return self.done(call)

    def builtin_any(self, node):
        return self.truth_reduction(node, "any")

    def builtin_all(self, node):
        return self.truth_reduction(node, "all")

    def truth_reduction(self, node, which):
        info = self.info(node.args[0])
        if info is not None and isinstance(info.value, (tuple, list)):
            parts = [_call("py_bool", e) for e in self.elements(node.args[0], info.value)]
            if not parts:
                return self.done(ast.Constant(which == "all"))
            result = parts[0]
            op = ast.BitOr() if which == "any" else ast.BitAnd()
            for part in parts[1:]:
                result = ast.BinOp(result, op, part)
            return self.done(result)
        if info is None or not info.batched or len(info.shape) != 1:
            raise SubscriptError(
                f"`{_text(node)}`: {which}() needs a per-example vector (the truth of a "
                "row of a matrix is ambiguous)"
            )
        return self.done(_call(f"py_{which}", node.args[0]))

    def builtin_sorted(self, node):
        keywords = {k.arg: k.value for k in node.keywords}
        info = self.info(node.args[0])
        if "key" not in keywords and info is not None and isinstance(info.value, (tuple, list)):
            # `a, b, c = sorted((a, b, c))`: a list of the same numbers, in order
            self.scalars(node, self.elements(node.args[0], info.value))
            call = _call("py_sorted_elements", node.args[0])
            if "reverse" in keywords:
                call.args.append(keywords["reverse"])
            return self.done(call)
        if "key" in keywords or info is None or not info.batched or len(info.shape) != 1:
            raise SubscriptError(
                f"`{_text(node)}`: sorted() is supported on a per-example vector, without key="
            )
        call = _call("py_sorted", node.args[0])
        if "reverse" in keywords:
            call.args.append(keywords["reverse"])
        return self.done(call)

    def builtin_list(self, node):
        info = self.info(node.args[0]) if len(node.args) == 1 else None
        if info is not None and info.batched and info.shape:
            return self.done(node.args[0])  # a copy: values are never shared
        raise SubscriptError(f"`{_text(node)}`: list() is supported on a per-example array (a copy)")

    def builtin_abs(self, node):
        info = self.info(node.args[0])
        if info is not None and info.batched and info.dtype == np.bool_:
            return self.done(_call("py_int", node.args[0]))
        return node  # numbers and arrays: abs() is elementwise already

    def conversion(self, node, helper, accepts_arrays=False):
        if len(node.args) != 1 or node.keywords:
            raise SubscriptError(f"`{_text(node)}`: only the one-argument form is supported per example")
        if not accepts_arrays:
            self.scalars(node, node.args)
        return self.done(_call(helper, node.args[0]))

    def builtin_int(self, node):
        return self.conversion(node, "py_int")

    def builtin_float(self, node):
        return self.conversion(node, "py_float")

    def builtin_bool(self, node):
        return self.conversion(node, "py_bool")

    def builtin_round(self, node):
        self.scalars(node, node.args[:1])
        if len(node.args) == 1 and not node.keywords:
            return self.done(_call("py_round", node.args[0]))
        digits = node.args[1] if len(node.args) > 1 else node.keywords[0].value
        info = self.info(digits)
        if info is None or info.batched or not isinstance(info.value, int):
            raise SubscriptError(f"`{_text(node)}`: round()'s digits must be the same int for every example")
        if info.value < 0:
            raise SubscriptError(f"`{_text(node)}`: round() to negative digits is not supported per example")
        number = self.info(node.args[0])
        if number is not None and number.batched and number.dtype.kind == "f":
            raise SubscriptError(
                f"`{_text(node)}`: round() of a float to digits rounds the exact decimal value, "
                "which the batched code cannot reproduce on every tie (round(2.675, 2) is 2.67); "
                "use np.round(x, n) (NumPy's rounding, which can differ on ties) or round(x * 100) / 100"
            )
        return self.done(_call("py_round_digits", node.args[0], digits))

    def builtin_divmod(self, node):
        a, b = node.args
        return self.done(ast.Tuple([ast.BinOp(a, ast.FloorDiv(), b), ast.BinOp(a, ast.Mod(), b)], ast.Load()))

    def builtin_pow(self, node):
        args = list(node.args) + [k.value for k in node.keywords]
        self.scalars(node, args)
        if len(args) == 3:
            return self.done(_call("py_powmod", *args))
        return self.done(ast.BinOp(args[0], ast.Pow(), args[1]))

    def builtin_isinstance(self, node):
        if len(node.args) != 2:
            raise SubscriptError(f"`{_text(node)}`: isinstance() takes two arguments")
        classes = self.info(node.args[1])
        if classes is None or classes.batched:
            raise SubscriptError(f"`{_text(node)}`: the classes must be the same for every example")
        info = self.info(node.args[0])
        try:
            if info.batched:
                answer = issubclass(info.python_class(), classes.value)
            else:  # a per-example tuple: its class is the same on one example
                answer = isinstance(info.value, classes.value)
        except TypeError as e:
            raise SubscriptError(f"`{_text(node)}`: {e}") from None
        return self.done(_after(node.args[0], bool(answer)))

    def builtin_type(self, node):
        info = self.info(node.args[0])
        if len(node.args) == 1 and info is not None and info.batched and info.scalar:
            return self.done(_name(info.python_class().__name__))
        raise SubscriptError(f"`{_text(node)}`: type() of a per-example array or tuple; use isinstance()")

    # ---- identity and membership -------------------------------------------

    # ---- optionals: a value that is None in some examples ------------------

    def optional(self, node) -> bool:
        from autobatch_runtime.optional import Optional

        info = self.info(node)
        return info is not None and isinstance(info.value, Optional)

    def visit_Name(self, node):
        """An optional used as its value (`r * 2` after `if r is None:
        return -1`) reads its `value`; the whole expression `y = r` or
        `return r` keeps it optional."""
        if node is self.root or not isinstance(node.ctx, ast.Load) or not self.optional(node):
            return node
        return self.done(ast.Attribute(node, "value", ast.Load()))

    def visit_Attribute(self, node):
        if node.attr in ("present", "value") and isinstance(node.value, ast.Name) and self.optional(node.value):
            return node  # already read apart (type inference's `r.present & py_bool(r.value)`)
        return self.generic_visit(node)

    def visit_Tuple(self, node):
        for element in node.elts:
            if isinstance(element, ast.Name) and self.optional(element):
                raise SubscriptError(
                    f"`{_text(node)}` puts `{element.id}`, which is None in some examples, in a "
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
        return self.done(_call("py_not", present) if absent else present)

    def visit_Compare(self, node):
        tested = self.none_test(node)
        if tested is not None:
            return tested
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
                f"`{_text(node)}` compares the identity of per-example values, which has no "
                "batched meaning; compare values with == (or test `is None` on an optional)"
            )
        return self.done(_after(left, answer != negated))

    def membership(self, node, negated):
        item, container = node.left, node.comparators[0]
        result = self.contains(node, item, container)
        if result is None:
            return node
        self.changed = True
        return _call("py_not", result) if negated else result

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
        if holder.batched:
            self.scalars(node, [item])
            if not holder.shape:
                raise SubscriptError(f"`{_text(node)}`: `in` a number; Python needs a container")
            return _call("py_contains", container, item)
        if isinstance(holder.value, (tuple, list)) and self.batched_tuple(holder.value):
            self.scalars(node, [item])
            return _any_equal(item, self.elements(container, holder.value))
        if not self.per_example(item):
            return None
        self.scalars(node, [item])
        if isinstance(holder.value, str):
            raise SubscriptError(
                f"`{_text(node)}`: a number `in` a string raises TypeError in Python; with text "
                "held as character codes, test the codes: `c in CODES` with a module-level "
                "`CODES = np.array([ord(ch) for ch in 'aeiou'])`"
            )
        if isinstance(holder.value, (dict, set, frozenset)):
            raise SubscriptError(f"`{_text(node)}`: `in` a dict or set is not supported per example; use a tuple or an array")
        table = np.asarray(holder.value)
        if table.dtype.kind not in "biuf":
            raise SubscriptError(f"`{_text(node)}`: `in` needs a container of numbers")
        return _call("py_contains_constant", container, item)

    def in_range(self, node, item, call):
        args = list(call.args)
        start, stop, step = (ast.Constant(0), args[0], None) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else None)
        sign = 1
        if step is not None:
            info = self.info(step)
            if info is None or info.batched or not isinstance(info.value, int) or info.value == 0:
                raise SubscriptError(f"`{_text(node)}`: `in range(...)` needs a step that is the same nonzero int for every example")
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

    # ---- text ---------------------------------------------------------------

    def visit_JoinedStr(self, node):
        self.generic_visit(node)
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and self.per_example(part.value):
                raise SubscriptError(
                    f"the f-string `{_text(node)}` formats a per-example value: text has no "
                    "per-example value in a batched program; return numbers (codes) instead"
                )
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult) and (isinstance(node.left, ast.List) or isinstance(node.right, ast.List)):
            return _repeated_list(self, node)
        if isinstance(node.op, ast.Mod):
            left = self.info(node.left)
            if left is not None and not left.batched and isinstance(left.value, (str, bytes)) and self.per_example(node.right):
                raise SubscriptError(
                    f"`{_text(node)}` formats a per-example value as text, which has no "
                    "per-example value in a batched program"
                )
        return node


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
            f"`{_text(node)}`: a list whose length differs per example has no fixed per-example "
            "shape; make its length the same for every example (a bound), and keep a count"
        )
    value = rewriter.info(element)
    if not isinstance(size.value, (int, np.integer)) or value is None:
        return node
    if not value.batched and not isinstance(value.value, (bool, int, float, np.number)):
        return node  # `[None] * n`, `["a"] * n`: Python's list
    if value.batched and not value.scalar:
        return node
    return rewriter.done(_call("repeat", element, count))


def _after(operand, answer):
    """The constant `answer`, once `operand` is evaluated if that can fail:
    `isinstance(v[n], float)` still reads v[n] (an index out of range raises
    IndexError, as in Python): `(v[n], False)[1]`."""
    if all(isinstance(n, (ast.Name, ast.Constant, ast.Load, ast.Attribute)) for n in ast.walk(operand)):
        return ast.Constant(answer)
    return ast.Subscript(ast.Tuple([operand, ast.Constant(answer)], ast.Load()), ast.Constant(1), ast.Load())


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


def _builtin_name(function) -> Optional[str]:
    """"min" for the builtin `min`, "math.sqrt" for `math.sqrt`, else None
    (a user's own function of the same name is not a builtin)."""
    name = getattr(function, "__name__", None)
    if name is None:
        return None
    try:
        if getattr(builtins, name, None) is function:
            return name
        if getattr(math, name, None) is function:
            return "math." + name
    except TypeError:
        return None
    return None


def _no_translation(name, node) -> str:
    short = name.split(".")[-1]
    if short in _TEXT or name in ("str", "repr"):
        return (
            f"`{_text(node)}` makes text of a per-example value: text has no per-example value "
            "in a batched program (len(str(n)) of an int works); return numbers (codes) instead"
        )
    if short in _ITERATION:
        return (
            f"`{_text(node)}`: {short}() of per-example values works only in a `for` header "
            "(`for i, x in enumerate(v)`)"
        )
    return (
        f"`{_text(node)}`: the builtin {name}() has no per-example translation, and a Python "
        "builtin never runs on the whole batch; compute it with arithmetic or an array function"
    )
