"""Calls of Python's builtins and `math` functions, per example.

`min(a, b)`, `sum(v)`, `int(x)`, `round(x)`, `isinstance(n, int)`,
`math.sqrt(n)` and the like, on per-example values, become the runtime's
`py_*` helpers, arithmetic or constants (see passes/python_builtins.py for
the table), or a `SubscriptError` naming what has no batched meaning
(`print`, text, `key=`).  A builtin whose arguments are all the same for
every example keeps its Python meaning.  One `builtin_<name>` method per
builtin, so that the rule for a builtin is found by its name.
"""

from __future__ import annotations

import ast
import copy
import builtins
import math
from typing import Optional

import numpy as np

from transpiler.frontend.narrowing import PRESENT
from transpiler.passes.python_values import after, call_node, name_node, text_of
from transpiler.passes.array_method_calls import ArrayMethodCalls
from transpiler.passes.joining_calls import JoiningCalls
from transpiler.passes.matrix_calls import MatrixCalls
from transpiler.passes.subscripts import SubscriptError, is_ragged_value

# `math` functions with a per-example helper (the keys of the runtime's MATH).
MATH_FUNCTIONS = frozenset(
    """sqrt exp expm1 log1p log2 log10 sin cos tan asin acos atan sinh cosh tanh
    asinh acosh atanh fabs degrees radians atan2 hypot copysign fmod pow log floor
    ceil trunc isqrt gcd lcm isnan isinf isfinite""".split()
)

# math's counting functions (python_errors.py) -> how many int arguments
_COUNTING = {"factorial": 1, "comb": 2, "perm": 2}

# Builtins that passes/subscripts.py gives their per-example meaning (it runs
# after this pass), or that are elementwise on arrays already.
_SUBSCRIPT_PASS = frozenset(("len", "slice"))
_TEXT = frozenset(("str", "repr", "format", "ascii", "hex", "oct", "bin", "chr"))
# Array methods that change the array in place -> what to write instead.
_IN_PLACE_METHODS = {
    "sort": "np.sort({}, axis=-1)",
    "fill": "np.full_like({}, value)",
    "reverse": "{}[::-1]",
}
_ITERATION = frozenset(("range", "enumerate", "zip", "map", "filter", "iter", "next", "reversed"))


class BuiltinCalls(ArrayMethodCalls, MatrixCalls, JoiningCalls):
    """The rewriter's rules for calls (a base of passes/python_builtins.py's
    rewriter)."""

    # ---- calls ------------------------------------------------------------

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == PRESENT and len(node.args) == 1:
            # a read a None-guard made safe (frontend/narrowing.py): the value
            # of an optional, any other value as it is
            (value,) = node.args
            if isinstance(value, ast.Name) and self.optional(value):
                return self.done(ast.Attribute(value, "value", ast.Load()))
            return self.done(self.visit(value))
        searched = (
            self.list_search(node)
            or self.bit_length(node)
            or self.array_reduction(node)
            or self.matrix_call(node)
            or self.joining_call(node)
        )
        if searched is not None:
            return searched
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
        converted = self.astype_call(node)
        if converted is not None:
            return converted
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in _IN_PLACE_METHODS
            and self.per_example(node.func.value)
        ):
            owner = text_of(node.func.value)
            raise SubscriptError(
                f"`{text_of(node)}` changes `{owner}` in place, which a batched function cannot do "
                f"through a method: write `{owner} = {_IN_PLACE_METHODS[node.func.attr].format(owner)}`"
                " (this example's own new array), or assign its elements (`v[i] = ...`) where the "
                "caller must see the change"
            )
        function = self.function(node)
        if function is None:
            return node
        name = _builtin_name(function)
        if name is None:
            return node
        arguments = list(node.args) + [k.value for k in node.keywords]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            if any(self.per_example(a.value if isinstance(a, ast.Starred) else a) for a in arguments):
                raise SubscriptError(f"`{text_of(node)}`: `*` and `**` arguments of per-example values are not supported here; pass them one by one")
            return node
        if name not in _SUBSCRIPT_PASS and any(is_ragged_value(self.values.of(a)) for a in arguments):
            return self.ragged_builtin(name, node)
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
                    return call_node("py_decimal_length", inner)
                raise SubscriptError(
                    f"`{text_of(node)}`: the length of the text of a per-example "
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
                return call_node("py_popcount", inner)
            func.value.args[0] = inner
        return None

    def ragged_builtin(self, name, node):
        """A builtin of a vector whose length differs per example
        (autobatch_runtime/ragged.py): the `ragged_*` helper that reads only
        each example's own elements, or a refusal naming what to write."""
        keywords = {k.arg: k.value for k in node.keywords}
        vector = node.args[0] if node.args else None
        alone = vector is not None and is_ragged_value(self.values.of(vector)) and not any(
            is_ragged_value(self.values.of(a)) for a in node.args[1:]
        )
        if name == "sum" and alone and len(node.args) <= 2 and set(keywords) <= {"start"}:
            start = node.args[1] if len(node.args) == 2 else keywords.get("start")
            return self.done(call_node("ragged_sum", vector, *([start] if start is not None else [])))
        if name in ("min", "max") and alone and len(node.args) == 1 and set(keywords) <= {"default"}:
            if "default" not in keywords:
                raise SubscriptError(
                    f"`{text_of(node)}`: {name}() of a vector whose length differs per example raises "
                    "ValueError where it is empty, which the batched program does not reproduce; "
                    f"pass default= (`{name}(v, default=0)`), or test `if len(v) > 0:` and "
                    "compute it with a loop"
                )
            return self.done(call_node(f"ragged_{name}_of", vector, keywords["default"]))
        if name in ("any", "all") and alone and len(node.args) == 1 and not keywords:
            return self.done(call_node(f"ragged_{name}", vector))
        if name == "sorted" and alone and len(node.args) == 1 and set(keywords) <= {"reverse"}:
            call = call_node("ragged_sorted", vector)
            if "reverse" in keywords:
                call.args.append(keywords["reverse"])
            return self.done(call)
        if name == "list" and alone and len(node.args) == 1 and not keywords:
            return self.done(vector)  # a copy: values are never shared
        if name in _ITERATION:
            raise SubscriptError(_no_translation(name, node))
        raise SubscriptError(
            f"`{text_of(node)}`: {name}() of a vector whose length differs per example is not "
            "supported (len, sum, min/max with default=, any, all, sorted and list are); copy "
            "it into an array of fixed length first, or loop over its elements"
        )

    def math_call(self, node, name):
        if name == "isclose":
            return self.isclose(node)
        if name in _COUNTING and not node.keywords:
            return self.counting(node, name)
        if name not in MATH_FUNCTIONS or node.keywords:
            raise SubscriptError(_no_translation("math." + name, node))
        for argument in node.args:
            info = self.info(argument)
            if info is not None and info.batched and not info.scalar:
                raise SubscriptError(
                    f"`{text_of(node)}`: math.{name} takes numbers, and `{text_of(argument)}` is an "
                    f"array per example (use np.{name} or tf.math.{name} for arrays)"
                )
        if name in ("floor", "ceil", "trunc") and len(node.args) == 1 and self.integer(node.args[0]):
            return self.done(node.args[0])  # math.floor(k) of an int is k
        return self.done(ast.Call(name_node("py_math"), [ast.Constant(name)] + list(node.args), []))

    def list_search(self, node):
        """`items.index(x)` and `items.count(x)` of a per-example list (made
        by list(), sorted() or a list display: a NumPy array has neither
        method): the first position holding x, where an example whose list
        lacks x stops with Python's ValueError; the number of items equal
        to x."""
        func = node.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in ("index", "count")
            and len(node.args) == 1
            and not node.keywords
        ):
            return None
        lists = getattr(self.values, "list_names", frozenset())
        if isinstance(func.value, ast.Name) and func.value.id in lists:
            items = func.value
        elif self.makes_list(func.value):
            items = self.visit(copy.deepcopy(func.value))  # `list(v)`: the example's copy of v
        else:
            return None
        info = self.info(items)
        if info is None or not info.batched or len(info.shape) != 1:
            return None
        self.scalars(node, node.args)
        value = self.visit(node.args[0])
        return self.done(call_node(f"py_list_{func.attr}", items, value))

    def bit_length(self, node):
        """`n.bit_length()` of a per-example int (NumPy's ints have no such
        method): Python's value, `py_bit_length(n)`."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "bit_length" and not node.args and not node.keywords):
            return None
        info = self.info(func.value)
        if info is None or not info.batched:
            return None
        if not info.scalar or info.dtype.kind not in "iub":
            raise SubscriptError(f"`{text_of(node)}`: bit_length() is a method of an int; `{text_of(func.value)}` is not one per example")
        return self.done(call_node("py_bit_length", self.visit(func.value)))

    def counting(self, node, name):
        """`math.factorial(n)`, `math.comb(n, k)`, `math.perm(n, k)` of
        per-example ints: exact where the result fits in int64; a negative
        argument raises ValueError and a larger result OverflowError in that
        example (python_errors.py)."""
        arity = _COUNTING[name]
        if len(node.args) != arity:
            raise SubscriptError(f"`{text_of(node)}`: math.{name} takes {arity} int argument(s) here")
        self.scalars(node, node.args)
        for argument in node.args:
            info = self.info(argument)
            if info is not None and info.batched and info.dtype.kind not in "iub":
                raise SubscriptError(
                    f"`{text_of(node)}`: math.{name} takes ints, and `{text_of(argument)}` is a "
                    f"{info.dtype} per example (Python raises TypeError); convert with int()"
                )
        if not any(self.per_example(argument) for argument in node.args):
            return node  # Python numbers: math's own value when the program is built
        return self.done(call_node(f"py_{name}", *node.args))

    def isclose(self, node):
        """`math.isclose(a, b, rel_tol=1e-09, abs_tol=0.0)` per example."""
        keywords = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 2 or set(keywords) - {"rel_tol", "abs_tol"}:
            raise SubscriptError(f"`{text_of(node)}`: math.isclose takes a, b, rel_tol= and abs_tol=")
        self.scalars(node, list(node.args) + list(keywords.values()))
        rel_tol = keywords.get("rel_tol", ast.Constant(1e-09))
        abs_tol = keywords.get("abs_tol", ast.Constant(0.0))
        return self.done(call_node("py_isclose", *node.args, rel_tol, abs_tol))

    def extremum(self, node, largest):
        which = "max" if largest else "min"
        keywords = {k.arg: k.value for k in node.keywords}
        if "key" in keywords:
            raise SubscriptError(
                f"`{text_of(node)}`: {which}() with key= is not supported on per-example values; "
                "compute the keys into an array and compare them in a loop"
            )
        if len(node.args) == 1:
            info = self.info(node.args[0])
            if info is not None and isinstance(info.value, (tuple, list)):
                elements = self.elements(node.args[0], info.value)
                return self.extremum(ast.Call(node.func, elements, []), largest) if len(elements) > 1 else self.done(elements[0])
            if info is None or not info.batched or not info.shape:
                raise SubscriptError(f"`{text_of(node)}`: {which}() of one number; Python needs an iterable or two numbers")
            if len(info.shape) > 1:
                raise SubscriptError(
                    f"`{text_of(node)}`: {which}() of a per-example {len(info.shape)}-d array compares its "
                    f"rows, which Python cannot do; use np.{which}(x, axis=-1)-style reductions"
                )
            if info.shape[0] == 0:
                if "default" in keywords:
                    return self.done(keywords["default"])
                raise SubscriptError(f"`{text_of(node)}`: {which}() of an empty vector raises ValueError on every example")
            return self.done(call_node(f"py_{which}_of", node.args[0]))
        if "default" in keywords:
            raise SubscriptError(f"`{text_of(node)}`: default= is only for a single iterable")
        self.scalars(node, node.args)
        return self.done(call_node(f"py_{which}", *node.args))

    def builtin_min(self, node):
        return self.extremum(node, largest=False)

    def builtin_max(self, node):
        return self.extremum(node, largest=True)

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
            return self.done(ast.BinOp(start, ast.Add(), call_node("sum", args[0])))
        if info is None or not info.batched or not info.shape:
            raise SubscriptError(f"`{text_of(node)}`: sum() needs a per-example vector or a tuple")
        call = call_node("py_sum", args[0])
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
            parts = [call_node("py_bool", e) for e in self.elements(node.args[0], info.value)]
            if not parts:
                return self.done(ast.Constant(which == "all"))
            result = parts[0]
            op = ast.BitOr() if which == "any" else ast.BitAnd()
            for part in parts[1:]:
                result = ast.BinOp(result, op, part)
            return self.done(result)
        if info is None or not info.batched or len(info.shape) != 1:
            raise SubscriptError(
                f"`{text_of(node)}`: {which}() needs a per-example vector (the truth of a "
                "row of a matrix is ambiguous)"
            )
        return self.done(call_node(f"py_{which}", node.args[0]))

    def builtin_sorted(self, node):
        keywords = {k.arg: k.value for k in node.keywords}
        info = self.info(node.args[0])
        if "key" not in keywords and info is not None and isinstance(info.value, (tuple, list)):
            # `a, b, c = sorted((a, b, c))`: a list of the same numbers, in order
            self.scalars(node, self.elements(node.args[0], info.value))
            call = call_node("py_sorted_elements", node.args[0])
            if "reverse" in keywords:
                call.args.append(keywords["reverse"])
            return self.done(call)
        if "key" in keywords or info is None or not info.batched or len(info.shape) != 1:
            raise SubscriptError(
                f"`{text_of(node)}`: sorted() is supported on a per-example vector, without key="
            )
        call = call_node("py_sorted", node.args[0])
        if "reverse" in keywords:
            call.args.append(keywords["reverse"])
        return self.done(call)

    def builtin_list(self, node):
        info = self.info(node.args[0]) if len(node.args) == 1 else None
        if info is not None and info.batched and info.shape:
            return self.done(node.args[0])  # a copy: values are never shared
        raise SubscriptError(f"`{text_of(node)}`: list() is supported on a per-example array (a copy)")

    def builtin_abs(self, node):
        info = self.info(node.args[0])
        if info is not None and info.batched and info.dtype == np.bool_:
            return self.done(call_node("py_int", node.args[0]))
        return node  # numbers and arrays: abs() is elementwise already

    def conversion(self, node, helper, accepts_arrays=False):
        if len(node.args) != 1 or node.keywords:
            raise SubscriptError(f"`{text_of(node)}`: only the one-argument form is supported per example")
        if not accepts_arrays:
            self.scalars(node, node.args)
        return self.done(call_node(helper, node.args[0]))

    def builtin_int(self, node):
        if self.integer(node.args[0] if len(node.args) == 1 else None) and not node.keywords:
            return self.done(node.args[0])  # int(k) of an int is k
        return self.conversion(node, "py_int")

    def integer(self, node) -> bool:
        """Whether `node` is a per-example int (not a bool): int(), round()
        and math.floor() of it are itself, and cannot raise."""
        info = self.info(node) if node is not None else None
        return info is not None and info.batched and info.scalar and info.dtype.kind in "iu"

    def builtin_float(self, node):
        return self.conversion(node, "py_float")

    def builtin_bool(self, node):
        return self.conversion(node, "py_bool")

    def builtin_round(self, node):
        self.scalars(node, node.args[:1])
        if len(node.args) == 1 and not node.keywords:
            if self.integer(node.args[0]):
                return self.done(node.args[0])  # round(k) of an int is k
            return self.done(call_node("py_round", node.args[0]))
        digits = node.args[1] if len(node.args) > 1 else node.keywords[0].value
        info = self.info(digits)
        if info is None or info.batched or not isinstance(info.value, int):
            raise SubscriptError(f"`{text_of(node)}`: round()'s digits must be the same int for every example")
        if info.value < 0:
            raise SubscriptError(f"`{text_of(node)}`: round() to negative digits is not supported per example")
        number = self.info(node.args[0])
        if number is not None and number.batched and number.dtype.kind == "f":
            raise SubscriptError(
                f"`{text_of(node)}`: round() of a float to digits rounds the exact decimal value, "
                "which the batched code cannot reproduce on every tie (round(2.675, 2) is 2.67); "
                "use np.round(x, n) (NumPy's rounding, which can differ on ties) or round(x * 100) / 100"
            )
        return self.done(call_node("py_round_digits", node.args[0], digits))

    def builtin_divmod(self, node):
        a, b = node.args
        return self.done(ast.Tuple([ast.BinOp(a, ast.FloorDiv(), b), ast.BinOp(a, ast.Mod(), b)], ast.Load()))

    def builtin_pow(self, node):
        args = list(node.args) + [k.value for k in node.keywords]
        self.scalars(node, args)
        if len(args) == 3:
            return self.done(call_node("py_powmod", *args))
        return self.done(ast.BinOp(args[0], ast.Pow(), args[1]))

    def builtin_isinstance(self, node):
        if len(node.args) != 2:
            raise SubscriptError(f"`{text_of(node)}`: isinstance() takes two arguments")
        classes = self.info(node.args[1])
        if classes is None or classes.batched:
            raise SubscriptError(f"`{text_of(node)}`: the classes must be the same for every example")
        info = self.info(node.args[0])
        try:
            if info.batched:
                answer = issubclass(self.python_class(node.args[0], info), classes.value)
            else:  # a per-example tuple: its class is the same on one example
                answer = isinstance(info.value, classes.value)
        except TypeError as e:
            raise SubscriptError(f"`{text_of(node)}`: {e}") from None
        return self.done(after(node.args[0], bool(answer)))

    def python_class(self, node, info):
        """The class `node`'s value has on one example: an item of an
        example's NumPy array (`v[0]`, `m[i, j]`) is a NumPy scalar
        (`np.int64` is not an `int`; `np.float64` is a `float`), any other
        number Python's own class."""
        if isinstance(node, ast.Subscript) and info.scalar:
            array = self.info(node.value)
            if array is not None and array.batched and array.shape and not self.makes_list(node.value):
                return info.dtype.type
        return info.python_class()

    def builtin_type(self, node):
        info = self.info(node.args[0])
        if len(node.args) == 1 and info is not None and info.batched and info.scalar:
            cls = self.python_class(node.args[0], info)
            if cls.__module__ == "numpy":
                raise SubscriptError(
                    f"`{text_of(node)}`: an item of an example's NumPy array is a NumPy scalar "
                    f"(np.{cls.__name__}), whose type is not supported per example; test it with "
                    "isinstance(x, (int, np.integer)) or isinstance(x, float)"
                )
            return self.done(name_node(cls.__name__))
        raise SubscriptError(f"`{text_of(node)}`: type() of a per-example array or tuple; use isinstance()")


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
            f"`{text_of(node)}` makes text of a per-example value: text has no per-example value "
            "in a batched program (len(str(n)) of an int works); return numbers (codes) instead"
        )
    if short in _ITERATION:
        return (
            f"`{text_of(node)}`: {short}() of per-example values works only in a `for` header "
            "(`for i, x in enumerate(v)`)"
        )
    return (
        f"`{text_of(node)}`: the builtin {name}() has no per-example translation, and a Python "
        "builtin never runs on the whole batch; compute it with arithmetic or an array function"
    )
