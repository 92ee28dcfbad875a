"""What may share storage with what: the lattice of the in-place analysis.

passes/inplace.py gives callees Python's in-place effects; to do so (and to
refuse what it cannot reproduce) its analysis (passes/inplace_analysis.py)
tracks, for every variable, the objects it may share storage with and how.
This module is that vocabulary: the four ways of sharing, how they compose
along a chain of reads and join where paths meet, which NumPy functions and
methods return views, and `sources_of`, what the value of an expression may
share.  It also reads the two IR forms the builder writes for Python's
mutation, item assignment (`v = __setitem__(v, (i,), x)`) and a list
comprehension (`repeat(x, n)`).

The kinds, closest first:
- `same`: may be that very object;
- `view`: definitely an array sharing its storage (a slice, `.T`,
  `np.reshape`, a tuple holding it);
- `part`: may be an element of it, which may be a number or a view
  (decided by its type, after type inference);
- `items`: a new container of its elements, `list(m)` (decided by its
  elements' type).
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import types as pytypes
from typing import List, Optional

from transpiler.ir import instructions as ir

SET_ITEM = "__setitem__"  # the builder's item assignment (ir/builder_support.py)
REPEAT = "repeat"  # the builder's list comprehension, `repeat(x, n)` (ir/builder_support.py)

SAME, VIEW, PART, ITEMS = "same", "view", "part", "items"

# NumPy functions and array methods that return a view of (or the very)
# array they are given; every other NumPy/TensorFlow function returns a new
# array.  An unknown callable (a helper of your module) may return either.
VIEW_FUNCTIONS = frozenset(
    """asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite
    require reshape ravel transpose permute_dims matrix_transpose swapaxes
    moveaxis rollaxis squeeze expand_dims atleast_1d atleast_2d atleast_3d
    broadcast_to broadcast_arrays flip fliplr flipud rot90 diagonal real imag
    split array_split hsplit vsplit dsplit unstack view as_strided""".split()
)
VIEW_METHODS = frozenset(
    "reshape view ravel transpose swapaxes squeeze diagonal __getitem__".split()
)
COPY_METHODS = frozenset(
    """copy astype flatten tolist item sum prod mean std var min max argmin
    argmax argsort cumsum cumprod dot round clip any all nonzero repeat take
    compress conj conjugate trace ptp searchsorted numpy""".split()
)
VIEW_ATTRIBUTES = frozenset("T mT real imag flat base".split())
# Builtins that return a new value (a number, a new list of numbers); the
# others (`list(m)`, `min(a, b)`) may hand back what they were given.
FRESH_BUILTINS = frozenset(
    """len int float bool complex abs round range str repr isinstance type hash
    divmod pow sum any all sorted bin oct hex ord chr format""".split()
)


# ---- the lattice ---------------------------------------------------------------

# The closest way first: SAME and VIEW are refused at once, PART waits for
# the variable's type (an array?), ITEMS for its elements' (arrays?); where
# paths disagree, PART's question is the safer one.
ORDER = {SAME: 0, VIEW: 1, PART: 2, ITEMS: 3}


def compose(held, how):
    """How a value shares an object, from how its source does (`held`) and
    how the value shares its source (`how`)."""
    if held == SAME:
        return how
    if how == SAME:
        return held
    if how == ITEMS:
        # a container of the elements of a view, an element or a container
        # of elements: its elements are arrays only where they share storage
        return ITEMS
    if how == VIEW:
        return VIEW if held == VIEW else PART
    return PART


def join(a, b):
    if a is None:
        return dict(b)
    out = dict(a)
    for name, roots in b.items():
        out[name] = out.get(name, frozenset()) | roots
    return out


def age(state, site):
    """A site makes a new object: what other names hold from it is older."""
    old = ("old", site)
    for name, roots in list(state.items()):
        if any(r == site for r, _ in roots):
            state[name] = frozenset((old if r == site else r, h) for r, h in roots)


def with_how(state, name):
    """{root: the closest way `name` may share it}."""
    out = {}
    for r, h in state.get(name, ()):
        if r not in out or ORDER[h] < ORDER[out[r]]:
            out[r] = h
    return out


# ---- what the value of an expression may share ------------------------------


def sources_of(node, namespace, local_names) -> List[tuple]:
    """The variables (or globals) whose storage the value of `node` may
    share, each with how it shares it."""
    if node is None:
        return []
    if isinstance(node, ast.Name):
        if node.id in local_names:
            return [(node.id, SAME)]
        if node.id in ("None", "True", "False") or _is_module(node.id, namespace):
            return []
        return [(("global", node.id), SAME)]
    if isinstance(node, ast.Subscript):
        how = VIEW if _has_slice(node.slice) else PART
        return [(n, compose(h, how)) for n, h in sources_of(node.value, namespace, local_names)]
    if isinstance(node, ast.Attribute):
        how = VIEW if node.attr in VIEW_ATTRIBUTES else PART
        return [(n, compose(h, how)) for n, h in sources_of(node.value, namespace, local_names)]
    if isinstance(node, (ast.Tuple, ast.List)):
        out = []
        for e in node.elts:
            out += [(n, compose(h, VIEW)) for n, h in sources_of(e, namespace, local_names)]
        return out
    if isinstance(node, ast.Starred):
        return sources_of(node.value, namespace, local_names)
    if isinstance(node, ast.Call):
        return _call_sources(node, namespace, local_names)
    if isinstance(node, ast.IfExp):
        return sources_of(node.body, namespace, local_names) + sources_of(node.orelse, namespace, local_names)
    if isinstance(node, ast.BoolOp):  # `a or b` is one of them
        return [s for v in node.values for s in sources_of(v, namespace, local_names)]
    return []  # arithmetic, comparisons, literals: a new value


def _call_sources(node, namespace, local_names):
    arguments = []
    for a in list(node.args) + [k.value for k in node.keywords]:
        arguments += sources_of(a, namespace, local_names)
    no_copy = any(
        k.arg == "copy"
        and isinstance(k.value, ast.Constant)
        and k.value.value in (False, None)
        for k in node.keywords
    )
    callee = _resolve(node.func, namespace, local_names)
    if callee is not _UNKNOWN:
        module = getattr(callee, "__module__", None) or ""
        name = getattr(callee, "__name__", "")
        if module == "builtins" and name in FRESH_BUILTINS:
            return []
        if module.split(".")[0] in ("numpy", "tensorflow", "math"):
            if name in VIEW_FUNCTIONS or no_copy:
                return [(n, compose(h, VIEW)) for n, h in arguments]
            return []
        if callee in (list, tuple, reversed, iter, zip, enumerate):
            # a new container of the argument's elements: numbers of a
            # vector, but the rows (views) of a matrix
            return [(n, compose(h, ITEMS)) for n, h in arguments]
        # min(a, b), a helper of your module: may hand back what it was
        # given, or part of it
        return [(n, compose(h, PART)) for n, h in arguments]
    if isinstance(node.func, ast.Name) and node.func.id == REPEAT and node.args:
        # `[x for _ in range(n)]` (ir/builder_expressions.py): n elements that in
        # Python are x itself; n is a number
        return [(n, compose(h, ITEMS)) for n, h in sources_of(node.args[0], namespace, local_names)]
    if isinstance(node.func, ast.Attribute):  # a method of a value
        receiver = sources_of(node.func.value, namespace, local_names)
        if node.func.attr in COPY_METHODS and not no_copy:
            return []
        how = VIEW if node.func.attr in VIEW_METHODS else PART
        return [(n, compose(h, how)) for n, h in receiver + arguments]
    return [(n, compose(h, PART)) for n, h in arguments]


_UNKNOWN = object()


def _resolve(func, namespace, local_names):
    """The object a callee expression names (`np.reshape`, `helper`), or _UNKNOWN."""
    path = []
    node = func
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in local_names:
        return _UNKNOWN
    if namespace is not None and node.id in namespace:
        value = namespace[node.id]
    elif hasattr(builtins, node.id):
        value = getattr(builtins, node.id)
    else:
        return _UNKNOWN
    for attr in reversed(path):
        try:
            value = getattr(value, attr)
        except AttributeError:
            return _UNKNOWN
    return value


def _is_module(name, namespace):
    return isinstance(name, tuple) and isinstance(
        (namespace or {}).get(name[1]), pytypes.ModuleType
    )


def _has_slice(node) -> bool:
    if isinstance(node, ast.Slice):
        return True
    if isinstance(node, ast.Tuple):
        return any(isinstance(e, ast.Slice) for e in node.elts)
    return False


# ---- the IR the builder writes ------------------------------------------------


def written_variable(ins) -> Optional[str]:
    """The variable an item assignment `v = __setitem__(v, ...)` changes."""
    if not isinstance(ins, ir.PrimOp) or not isinstance(ins.vars_out, str):
        return None
    if callable(ins.expr) or SET_ITEM not in ins.expr:
        return None
    node = parse(ins.expr)
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == SET_ITEM
        and node.args
    ):
        node = node.args[0]
    if isinstance(node, ast.Name) and node.id == ins.vars_out:
        return node.id
    return None


# `v += x` (the source line of an augmented assignment of a name): NumPy
# changes an array in place; the builder writes `v = v + x`.
AUGMENTED = re.compile(r"^(\w+)\s*(\*\*|//|<<|>>|[-+*/%&|^@])=")


def augmented_name(ins) -> Optional[str]:
    """The name `ins` assigns augmented (`w += 1`), or None."""
    if not isinstance(ins, ir.PrimOp) or not isinstance(ins.vars_out, str) or ins.origin is None:
        return None
    match = AUGMENTED.match(ins.origin.text or "")
    if match is None or match.group(1) != ins.vars_out or ins.vars_out not in ins.vars_in:
        return None
    return ins.vars_out


def rebinds_one_slot(ins) -> bool:
    """Whether the item assignment `ins` is `v[i] = x`: one integer item,
    no subscript of an element (`v[i][j] = x`, `v[i, j] = x`).  On a list
    (what `list(m)` or a comprehension makes) that rebinds a slot, and
    changes none of the objects the list held."""
    node = parse(ins.expr)
    if not (isinstance(node, ast.Call) and len(node.args) == 3):
        return False
    items, value = node.args[1], node.args[2]
    nested = (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == SET_ITEM
    )
    return (
        isinstance(items, ast.Tuple)
        and len(items.elts) == 1
        and not isinstance(items.elts[0], ast.Slice)
        and not nested
    )


def makes_list(node) -> bool:
    """Whether the expression `node` makes a Python list (a display, `[x] * n`,
    a comprehension, `list(...)`, `sorted(...)`) rather than a NumPy array.
    Their items differ: `m[i] = m[j]` makes two slots of a list one row
    object, and copies the row of an array; `m[i] = x` leaves the row that
    was in slot i of a list as it was, and writes into it in an array."""
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return isinstance(node.left, ast.List) or isinstance(node.right, ast.List)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # `[1] + [0] * n` (a list and an array would add elementwise)
        return makes_list(node.left) and makes_list(node.right)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("list", "sorted", REPEAT)
    )


def stored_value(ins):
    """The value an item assignment `v = __setitem__(v, items, value)`
    stores (the innermost one of `v[i][j] = value`)."""
    node = parse(ins.expr)
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == SET_ITEM
        and len(node.args) == 3
    ):
        node = node.args[2]
    return node


@functools.lru_cache(maxsize=4096)
def parse(text):
    return ast.parse(text.strip(), mode="eval").body


def names_of(fn, expressions=True):
    """Every variable of `fn`; with `expressions`, every identifier its
    expressions mention too (fresh names must not shadow a global)."""
    names = set(fn.params)
    for b in fn.blocks:
        for ins in b.instructions:
            names.update(ir.pattern_names(ins.vars_out))
            names.update(getattr(ins, "vars_in", ()))
            if expressions:
                for text in (getattr(ins, "expr", None), getattr(ins, "condition", None)):
                    if isinstance(text, str):
                        names.update(re.findall(r"[A-Za-z_]\w*", text))
    return names
