"""Names and small AST builders that the program and block emitters share.

`rt.<helper>` calls (`_call`), the state's field names (`_field_name`,
`_safe`: no collision with a name generated code binds), the leaves of a
tuple-valued type (`_leaf_paths`), and the tests of which subscripts are
checked per example (`_index_checks`).  Underscored: internals of
transpiler/emit/, not an API.
"""

from __future__ import annotations

import ast
import keyword
from typing import Optional

from autobatch_runtime import python_errors
from transpiler import expression_helpers
from transpiler import types as T
from transpiler.passes import subscripts



# The module name generated code reaches the runtime by (`rt.select(...)`);
# see autobatch_runtime/__init__.py.  User names never collide with a helper's.
RUNTIME = "rt"

# Names that generated code binds itself; user names that collide get a "_".
RESERVED = frozenset(
    """state active pc overflow overflow_at batch leaves result program counters
    profile xla max_stack_depth max_iterations max_stack_bytes peek stack_shape""".split()
    + [RUNTIME]
)

# The runtime helpers that rewritten expressions call (passes/subscripts.py,
# type inference's `spread`), written as bare names in the IR.
_EXPRESSION_HELPERS = expression_helpers.NAMES


def _helper(func) -> Optional[str]:
    """The helper a call's function names (`rt.take` -> "take"), or None."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id == RUNTIME else None
    return func.id if isinstance(func, ast.Name) else None


def _index_check(node) -> bool:
    """A `take`/`lookup`/`put` call (passes/subscripts.py) with an item that
    differs per example (not a literal, not a static `slice(...)`)."""
    if not (
        isinstance(node, ast.Call)
        and _helper(node.func) in subscripts.HELPERS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Tuple)
    ):
        return False
    return any(
        not (
            isinstance(item, ast.Constant)
            or (isinstance(item, ast.UnaryOp) and isinstance(item.operand, ast.Constant))
            or (isinstance(item, ast.Call) and _helper(item.func) == "slice")
        )
        for item in node.args[1].elts
    )


def _ragged_take(node) -> bool:
    """A `ragged_take(r, i)` call: a read of a vector of per-example length,
    checked against each example's length (autobatch_runtime/ragged.py)."""
    return isinstance(node, ast.Call) and _helper(node.func) == subscripts.RAGGED_TAKE and len(node.args) == 2


def _put_of(expr: str, name: str) -> bool:
    """Whether `expr` is `put(name, (items...), value)`: an item assignment
    to `name` (passes/subscripts.py)."""
    node = ast.parse(expr, mode="eval").body
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "put"
        and len(node.args) == 3
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == name
    )


def _negative_power(node) -> bool:
    """An `exponent_or_zero(k)` call (passes/broadcast.py): an int raised to a
    per-example int power, which must not be negative (Python's value would
    be a float)."""
    return isinstance(node, ast.Call) and _helper(node.func) == "exponent_or_zero" and len(node.args) == 1


def _python_errors(node):
    """For a call where Python may raise on some examples' values (a
    `py_divisor`, `py_power`, `py_math`, `py_int` or `py_round` of
    per-example numbers: passes/broadcast.py, passes/python_calls.py), its
    (operation, operands, ((error, message), ...)) for python_errors.py's
    `python_error`; else None."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    helper = _helper(node.func)
    args = list(node.args)
    if helper == "py_bound" and len(args) == 2 and isinstance(args[1], ast.Constant):
        return "bound", args[:1], python_errors.unbound_errors(args[1].value)
    if helper == "py_not_none" and len(args) == 3 and isinstance(args[2], ast.Constant):
        return "none", args[:1], python_errors.none_errors(args[2].value)
    if helper == "py_nonempty" and len(args) == 3 and isinstance(args[2], ast.Constant):
        return "empty", args[:1], python_errors.empty_errors(args[2].value)
    if helper == "py_powmod" and len(args) == 3:
        return "powmod", args, python_errors.errors_of("powmod")
    if helper == "py_divisor" and len(args) == 1:
        return "divide", args, python_errors.errors_of("divide")
    if helper in ("py_factorial", "py_comb", "py_perm") and len(args) == (1 if helper == "py_factorial" else 2):
        return helper[3:], args, python_errors.errors_of(helper[3:])
    if helper == "py_int_power" and len(args) == 2:
        return "int_power", args, python_errors.errors_of("int_power")
    if helper == "py_list_index" and len(args) == 2:
        return "not_found", [node], python_errors.errors_of("not_found")
    if helper in ("py_shift_count", "py_range_step") and len(args) == 1:
        operation = "shift" if helper == "py_shift_count" else "range_step"
        return operation, args, python_errors.errors_of(operation)
    if helper == "py_power" and len(args) == 2:
        return "power", args, python_errors.power_errors(_constant_number(args[1]))
    if helper in ("py_int", "py_round") and len(args) == 1:
        return "int", args, python_errors.errors_of("int")
    if helper == "py_math" and args and isinstance(args[0], ast.Constant):
        name, operands = args[0].value, args[1:]
        errors = python_errors.errors_of(name, len(operands))
        return (name, operands, errors) if errors else None
    return None


def _constant_number(node):
    """The value of a literal number (`2`, `-0.5`), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * node.value
    return None


def _index_checks(expr: str) -> bool:
    return any(
        _index_check(node) or _ragged_take(node) or _negative_power(node) or _python_errors(node)
        for node in ast.walk(ast.parse(expr, mode="eval"))
    )


def _short(var):
    return var.split(".", 1)[1]


def _function_of(var):
    return var.split(".", 1)[0]


def _safe(name, taken):
    while name in RESERVED or keyword.iskeyword(name) or name in taken:
        name += "_"
    return name


def _field_name(name):
    """`name` as a NamedTuple field: no leading underscore, no leading digit.

    Fields are `<function>_<variable>`, and namedtuple refuses names that
    start with `_` (a function `_build_tree`, a function `_`), so those
    lose their leading underscores; `_safe` then keeps fields distinct.
    """
    name = name.lstrip("_") or "value"
    return "v_" + name if name[0].isdigit() else name


def _leaf_paths(pattern, path=()):
    """[(index path, leaf type, field suffix)] of a pattern's leaves."""
    if isinstance(pattern, T.TensorType):
        return [(path, pattern, "")]
    out = []
    if isinstance(pattern, T.TupleType):
        names = getattr(pattern.cls, "_fields", None)
        for i, element in enumerate(pattern.elements):
            label = names[i] if names else str(i)
            for p, leaf, suffix in _leaf_paths(element, path + (i,)):
                out.append((p, leaf, f"_{label}{suffix}"))
    return out


def _index(expr, path):
    for i in path:
        expr = ast.Subscript(expr, ast.Constant(i), ast.Load())
    return expr


def _count(leaf):
    """How many numbers one example's value of a leaf type holds."""
    count = 1
    for d in leaf.shape:
        count *= d
    return count


def _bytes(leaf):
    """(bytes, symbols) one example's value of a leaf type takes: 8 x n is (8, ("n",))."""
    size, symbols = leaf.dtype.itemsize, []
    for d in leaf.shape:
        if isinstance(d, T.Size):
            symbols.append(d.symbol)
        else:
            size *= int(d)
    return size, tuple(sorted(symbols))


class _SizeNames(ast.NodeTransformer):
    """A symbolic size written as a constant (a shape built from a type) is
    the name that holds it in generated code: `(size_n,)`."""

    def visit_Constant(self, node):
        if isinstance(node.value, T.Size):
            return ast.copy_location(_name(node.value.variable), node)
        return node


def _is_docstring(statement):
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(
        statement.value.value, str
    )


def _name(id_, store=False):
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _runtime(helper):
    """`rt.<helper>`: a runtime helper as generated code names it."""
    return ast.Attribute(_name(RUNTIME), helper, ast.Load())


def _call(fn, *args, **kwargs):
    """A call of the runtime helper `fn`: `rt.fn(*args, **kwargs)`."""
    return ast.Call(
        _runtime(fn),
        [a if isinstance(a, ast.AST) else ast.Constant(a) for a in args],
        [ast.keyword(k, v) for k, v in kwargs.items()],
    )


def _zeros(leading, shape, dtype):
    """`zeros([batch], (3,), "float32")`: an initial register or stack
    (`leading`: a list of dimensions, or the name of one)."""
    if isinstance(leading, str):
        leading = _name(leading)
    else:
        leading = ast.List([ast.Constant(d) if isinstance(d, int) else _name(d) for d in leading], ast.Load())
    return _call(
        "zeros",
        leading,
        ast.Tuple([ast.Constant(d) for d in shape], ast.Load()),
        dtype,
    )


def _writes_table(block_writes, width=72):
    """The WRITES tuple: per block one string of the state fields it writes,
    then after a "|" the stacks (`"pc fib_n return_sp | returns",  # block 1`),
    apart by spaces.  A long one is an implicit concatenation of pieces of
    at most `width` characters, which black keeps one piece a line, the
    last followed by the block's number.

    (The table is written as a name, whose text `ast.unparse` copies as it
    is: an `ast.Constant` would unparse as one long string, and an AST
    holds no comments.)
    """
    lines = ["("]
    for k, (fields, stacks) in enumerate(block_writes):
        names = list(fields) + (["|", *stacks] if stacks else [])
        pieces, piece = [], ""
        for name in names:
            if piece and len(piece) + len(name) > width:
                pieces.append(piece)
                piece = ""
            piece += name + " "
        pieces.append(piece.rstrip())
        texts = [repr(p).replace("'", '"') for p in pieces]
        lines.extend(texts[:-1])
        lines.append(f"{texts[-1]},  # block {k}")
    lines.append(")")
    return _name("\n".join(lines))


def _attr(value, attr):
    return ast.Attribute(_name(value), attr, ast.Load())


def _target(names):
    if len(names) == 1:
        return names[0]
    return ast.Tuple(list(names), ast.Store())
