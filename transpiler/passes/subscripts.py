"""Per-example subscripts, lengths, shapes and item assignment.

Code is written for one example, so `v[i]` means element `i` of *this
example's* vector.  On the batch, `v` is [batch, n] and `i` is [batch]:
NumPy would read `v[i]` as rows of the batch (a [batch, batch, n] array,
silently) and TensorFlow would refuse it.  `rewrite` gives every such form
its per-example meaning before anything is evaluated or emitted:

    v[2], m[1:3, ::-1]     ->  v[:, 2], m[:, 1:3, ::-1]   (static: the batch axis kept)
    v[i], m[i, j], m[:, j] ->  take(v, (i,)), take(m, (i, j)), take(m, (slice(None), j))
    (a, b)[k]              ->  take(stack_items((a, b)), (k,))  (like items; a bool k: py_int(k))
    VALUE[node]            ->  lookup(VALUE, (node,))      (a module-level constant table)
    len(v), v.shape        ->  5, (5,)                     (static per-example shape)
    v[i] = x               ->  v = put(v, (i,), x)         (builder: `__setitem__(v, (i,), x)`)
    repeat(x, n)           ->  repeat(x, n, 1)             (x per example: the new axis after the batch axis)

`take`, `lookup` and `put` are runtime helpers: one gather or scatter each,
with negative indices counted from the end and out-of-range indices
clipped (idle examples compute junk); the emitter adds an `index_fault`
check per call so that an *active* example with an out-of-range index
stops with an IndexError (emit/block.py).  A static index out of range
is an error here, at build time, as it would be on every example.

Whatever has no per-example meaning that this module can produce is
refused with a `BatchTypeError` naming the line: a per-example index into
a tuple, a float index, `len` of a scalar, `.T` of a per-example array.
Subscripts of tuples by literals and of constants by constants keep their
Python meaning and are left alone.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional, Tuple

import numpy as np

from transpiler.passes.subscript_syntax import (
    _as_slice,
    _helper,
    _items,
    _ragged_slice,
    _shape_constant,
    _shape_queries,
    _slice_call,
    _slice_of,
    _static_int,
    _static_slice,
)
from transpiler.types import Size

SET_ITEM = "__setitem__"  # the builder's marker for `x[items] = value`
REPEAT = "repeat"  # the runtime's repeat(x, n): `[x for _ in range(n)]`
HELPERS = ("take", "lookup", "put")  # the runtime helpers this module writes
RAGGED_TAKE = "ragged_take"  # `r[i]` of a vector of per-example length (index-checked)


def is_ragged_value(value) -> bool:
    """Whether a placeholder value is a vector of per-example length
    (autobatch_runtime/ragged.py)."""
    from autobatch_runtime.ragged import Ragged

    return isinstance(value, Ragged)


class SubscriptError(Exception):
    """A subscript with no per-example meaning (type inference adds the line)."""


class Values:
    """What the rewrite needs to know of a subexpression.

    `evaluate(text)` returns its value on placeholders (or raises);
    `event_shape(value)` its per-example shape if it is batched, else None;
    `align(text)` the text with per-example broadcasting made explicit
    (passes/broadcast.py): `(v - d)[0]` subscripts the per-example
    difference, which is `v - d[:, None]` on the batch.
    """

    def __init__(
        self,
        evaluate: Callable[[str], object],
        event_shape: Callable[[object], Optional[Tuple[int, ...]]],
        align: Callable[[str], str] = lambda text: text,
    ):
        self.evaluate = evaluate
        self.event_shape = event_shape
        self.align = align

    def of(self, node: ast.expr):
        try:
            return self.evaluate(self.align(ast.unparse(node)))
        except Exception:  # noqa: BLE001 - the whole expression reports it
            return _UNKNOWN

    def aligned(self, node: ast.expr) -> Optional[ast.expr]:
        """`node` with its broadcasting made explicit, or None if unchanged."""
        text = ast.unparse(node)
        try:
            new = self.align(text)
        except Exception:  # noqa: BLE001 - the whole expression reports it
            return None
        return None if new == text else ast.parse(new, mode="eval").body


_UNKNOWN = object()


def mentions(expr: str) -> bool:
    """Whether `expr` has anything this module may rewrite (a cheap test)."""
    return any(word in expr for word in ("[", "len", "shape", "ndim", "size", "rank", ".T", ".mT", SET_ITEM, REPEAT))


def rewrite(expr: str, values: Values) -> str:
    """`expr` with per-example subscripts, lengths and shapes made explicit."""
    tree = ast.parse(expr, mode="eval")
    rewriter = _Rewriter(values)
    new = rewriter.visit(tree)
    if not rewriter.changed:
        return expr
    return ast.unparse(ast.fix_missing_locations(new))


def _has_batched_leaf(value, values: Values) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_batched_leaf(v, values) for v in value)
    return values.event_shape(value) is not None


def _stackable(value, values: Values) -> bool:
    """A non-empty tuple whose items are per-example arrays of one dtype and
    shape: indexing it per example means what Python's indexing means."""
    if not value or any(isinstance(v, (tuple, list)) for v in value):
        return False
    shapes = {values.event_shape(v) for v in value}
    dtypes = {str(getattr(v, "dtype", None)) for v in value}
    return len(shapes) == 1 and None not in shapes and len(dtypes) == 1


class _Rewriter(ast.NodeTransformer):
    def __init__(self, values: Values):
        self.values = values
        self.changed = False
        self.queries = _shape_queries()

    # ---- classification --------------------------------------------------

    def item_kind(self, item, size):
        """('slice' | 'static' | 'dynamic', node) of one subscript item on an
        axis of `size` elements (None when the axis is unknown)."""
        if isinstance(item, ast.Slice):
            if not _static_slice(item):
                raise SubscriptError(
                    "a slice with per-example bounds of an array of more than one axis (or with "
                    "more than one item) has no fixed per-example shape (a vector's, `v[i:]`, "
                    "has); use literal bounds, or index element by element in a loop"
                )
            # `v[1:]` of an axis of symbolic size n is n - 1 long, a plain
            # number that differs between the two probes of
            # transpiler/sizes.py: the program stays concrete unless that
            # length meets n at a join (a recursion on `s[1:-1]`), which
            # makes it a Ragged of capacity n, the same program at every size.
            return "slice", item
        static = _static_int(item)
        if static is not None:
            if size is not None:
                self.in_range(static, size)
            return "static", item
        if isinstance(item, ast.Constant) and item.value is Ellipsis:
            raise SubscriptError("`...` in a subscript is not supported: write the axes out")
        if isinstance(item, ast.Constant) and item.value is None:
            raise SubscriptError("`None` (a new axis) in a subscript is not supported: use np.expand_dims")
        if isinstance(item, (ast.List, ast.ListComp, ast.Tuple)):
            raise SubscriptError(
                f"`{ast.unparse(item)}` indexes by a list of positions (NumPy's fancy "
                "indexing), which is supported in a read (`a[[i, j]]`) and as an "
                "assignment's target given as many values (`a[[i, j]] = a[[j, i]]`, "
                "`v[[i, j]] = [x, y]`): assign one item at a time"
            )
        value = self.values.of(item)
        if value is _UNKNOWN:
            return "dynamic", item  # reported when the whole expression is evaluated
        shape = self.values.event_shape(value)
        dtype = getattr(value, "dtype", None)
        dtype = np.asarray(value).dtype if dtype is None else np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        if shape is None:
            shape = np.shape(value)  # a constant: a global, or arithmetic on literals
            if dtype.kind in "iu" and shape == () and size is not None:
                self.in_range(int(value), size)
            if dtype.kind in "iu" and shape == ():
                return "static", item
        if dtype.kind not in "iu" or shape != ():
            what = f"of dtype {dtype.name}" if dtype.kind not in "iu" else f"of shape {tuple(shape)}"
            raise SubscriptError(
                f"an index must be one integer per example; `{ast.unparse(item)}` is {what}"
            )
        return "dynamic", item

    @staticmethod
    def in_range(index, size):
        if isinstance(size, Size) and index not in (0, -1):
            # In range for some sizes only: the program of one size
            # (transpiler/sizes.py) refuses it at build time when it is not.
            raise SubscriptError(f"index {index} of an axis of symbolic size {size}")
        if not -size <= index < size:
            raise SubscriptError(f"index {index} is out of range for an axis of {size} element(s)")

    # ---- x[items] --------------------------------------------------------

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        aligned = self.values.aligned(node.value)
        if aligned is not None:  # `(v - d)[0]`: the per-example difference first
            node.value = aligned
            self.changed = True
        base = self.values.of(node.value)
        if base is _UNKNOWN:
            return node
        shape = self.values.event_shape(base)
        items = _items(node)
        if is_ragged_value(base):
            return self.ragged(node, items)
        if shape is not None and len(shape) == 1 and len(items) == 1 and _ragged_slice(items[0]):
            # `v[i:]`, `v[:k]` with per-example bounds: a vector of per-example length
            return self.ragged(node, items)
        if shape is not None:
            return self.per_example(node, shape, items)
        if isinstance(base, (tuple, list)) and _has_batched_leaf(base, self.values):
            # A per-example tuple (or namedtuple): Python's own indexing, by literals.
            for item in items:
                if not isinstance(item, ast.Slice) and _static_int(item) is None:
                    if len(items) == 1 and _stackable(base, self.values):
                        # `gaps[k]` of a tuple of like values (a list display
                        # `[701, 301, ...]`, `for gap in gaps`): its items side
                        # by side, [batch, len, ...], then the example's one.
                        self.changed = True
                        stacked = ast.Call(ast.Name("stack_items", ast.Load()), [node.value], [])
                        return _helper("take", stacked, [self.tuple_index(node, base, item)])
                    raise SubscriptError(
                        f"`{ast.unparse(node)}` indexes a tuple with a value that differs per "
                        "example; tuples have a fixed structure: use an array (np.stack) "
                        "or a literal index"
                    )
            return node
        kinds = [self.item_kind(item, None) for item in items]
        if not any(kind == "dynamic" for kind, _ in kinds):
            static = _static_int(items[0]) if len(items) == 1 else None
            if isinstance(node.value, ast.Tuple) and static is not None and -len(node.value.elts) <= static < len(node.value.elts):
                self.changed = True  # `v.shape[0]` -> `(6,)[0]` -> `6`: a constant divisor
                return node.value.elts[static]
            return node  # a constant indexed by constants: Python's meaning
        table = np.asarray(base) if not hasattr(base, "shape") else base
        if getattr(table, "dtype", np.dtype(object)) == object or len(np.shape(table)) < len(items):
            raise SubscriptError(
                f"`{ast.unparse(node.value)}` is indexed per example, so it must be a "
                "numeric array (a module-level NumPy array or a tuple of numbers) with "
                f"at least {len(items)} axes"
            )
        for size, (kind, item) in zip(np.shape(table), kinds):
            self.item_kind(item, size)  # static items: in range
        self.changed = True
        return _helper("lookup", node.value, [self.item_node(k, i) for k, i in kinds])

    def ragged(self, node, items):
        """`r[i]` and `r[a:b]` of a vector whose length differs per example
        (autobatch_runtime/ragged.py), or `v[a:b]` with per-example bounds:
        `ragged_take(r, i)` (the emitter checks i against the example's
        length) and `ragged_slice(r, a, b)` (Python's clamping, a copy)."""
        if len(items) != 1:
            raise SubscriptError(
                f"`{ast.unparse(node)}`: a vector whose length differs per example has one axis; "
                "index it with one integer or one slice"
            )
        (item,) = items
        self.changed = True
        if isinstance(item, ast.Slice):
            step = item.step
            if not (step is None or (isinstance(step, ast.Constant) and step.value is None) or _static_int(step) == 1):
                raise SubscriptError(
                    f"`{ast.unparse(node)}`: a slice with a step of a vector whose length differs "
                    "per example is not supported (only step 1); index element by element in a loop"
                )
            bounds = [b if b is not None else ast.Constant(None) for b in (item.lower, item.upper)]
            for b in bounds:
                self.bound(node, b)
            return ast.Call(ast.Name("ragged_slice", ast.Load()), [node.value, *bounds], [])
        self.bound(node, item)
        return ast.Call(ast.Name(RAGGED_TAKE, ast.Load()), [node.value, item], [])

    def bound(self, node, item):
        """An index or slice bound of a ragged vector: one integer per example."""
        if isinstance(item, ast.Constant) and item.value is None:
            return
        value = self.values.of(item)
        if value is _UNKNOWN:
            return
        shape = self.values.event_shape(value)
        dtype = getattr(value, "dtype", None)
        dtype = np.asarray(value).dtype if dtype is None else np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        if dtype.kind not in "iu" or (shape is not None and shape != ()) or (shape is None and np.shape(value) != ()):
            raise SubscriptError(
                f"`{ast.unparse(node)}`: an index must be one integer per example; `{ast.unparse(item)}` is not"
            )

    def tuple_index(self, node, base, item):
        """The per-example index of a tuple (or list) of like values
        (`options[k]`): an integer as it is, a bool as Python reads it (False
        is 0, True is 1: `(x, 2.0 * x)[flag]`), anything else refused."""
        value = self.values.of(item)
        if value is _UNKNOWN:
            return item  # reported when the whole expression is evaluated
        dtype = getattr(value, "dtype", None)
        dtype = np.asarray(value).dtype if dtype is None else np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        shape = self.values.event_shape(value)
        if dtype.kind == "b" and shape in (None, ()):
            return ast.Call(ast.Name("py_int", ast.Load()), [item], [])
        if dtype.kind not in "iu" or shape not in (None, ()):
            what = f"of dtype {dtype.name}" if dtype.kind not in "iu" else f"of shape {tuple(shape)}"
            raise SubscriptError(
                f"`{ast.unparse(node)}`: the index of a {'list' if isinstance(base, list) else 'tuple'} "
                "must be one integer per example; "
                f"`{ast.unparse(item)}` is {what}: index with an int (`int({ast.unparse(item)})`), "
                "or choose with `a if condition else b`"
            )
        return item

    def item_node(self, kind, item):
        return _slice_call(item) if kind == "slice" else item

    def per_example(self, node, shape, items):
        if not shape:
            raise SubscriptError(
                f"`{ast.unparse(node.value)}` is one number per example: it has no elements to index"
            )
        if len(items) > len(shape):
            raise SubscriptError(
                f"too many indices: `{ast.unparse(node.value)}` has per-example shape "
                f"{tuple(shape)} ({len(shape)} axes), the subscript gives {len(items)}"
            )
        kinds = [self.item_kind(item, size) for item, size in zip(items, shape)]
        self.changed = True
        if all(kind != "dynamic" for kind, _ in kinds):
            index = [ast.Slice()] + [item for _, item in kinds]
            return ast.Subscript(node.value, ast.Tuple(index, ast.Load()), ast.Load())
        return _helper("take", node.value, [self.item_node(k, i) for k, i in kinds])

    # ---- len(x), x.shape, x[items] = value --------------------------------

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == SET_ITEM:
            return self.set_item(node)
        if isinstance(node.func, ast.Name) and node.func.id == REPEAT and len(node.args) == 2:
            return self.repeat(node)
        if len(node.args) != 1 or node.keywords:
            return node
        query = self.queries.get(id(self.values.of(node.func)))
        if query is None:
            return node  # not len (a user's own `len` too), np.shape, ...
        if is_ragged_value(self.values.of(node.args[0])):
            if query != "len":
                raise SubscriptError(
                    f"`{ast.unparse(node)}`: the shape of a vector whose length differs per example "
                    "is not one constant; use len()"
                )
            self.changed = True
            return ast.Attribute(node.args[0], "length", ast.Load())
        shape = self.values.event_shape(self.values.of(node.args[0]))
        if shape is None:
            return node  # a tuple or a constant: Python's len
        self.changed = True
        if query == "len":
            if not shape:
                raise SubscriptError(
                    f"len() of `{ast.unparse(node.args[0])}`, which is one number per example"
                )
            return ast.Constant(shape[0])
        return _shape_constant(query, shape)

    def repeat(self, node):
        """`repeat(x, n)`: n copies of x on a new axis, which for a per-example
        x comes after the batch axis: `repeat(x, n, 1)`."""
        count = self.values.of(node.args[1])
        if count is not _UNKNOWN and self.values.event_shape(count) is not None:
            raise SubscriptError(
                f"`{ast.unparse(node.args[1])}` differs per example: a list whose length differs per "
                "example has no fixed per-example shape; make its length the same for every example "
                "(`len(v)` of the whole vector, a bound), and keep a count"
            )
        value = self.values.of(node.args[0])
        if value is not _UNKNOWN and self.values.event_shape(value) is not None:
            node.args.append(ast.Constant(1))
            self.changed = True
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr not in ("shape", "ndim", "size", "T", "mT"):
            return node
        value = self.values.of(node.value)
        if is_ragged_value(value):
            raise SubscriptError(
                f"`{ast.unparse(node)}`: `{ast.unparse(node.value)}` is a vector whose length differs "
                "per example, which has no fixed shape; use len()"
            )
        shape = None if value is _UNKNOWN else self.values.event_shape(value)
        if shape is None:
            return node
        if node.attr == "T":
            # NumPy's `.T` of the example's array: its axes reversed (an
            # array of one axis is itself), the batch axis left first
            # (autobatch_runtime/array_methods.py)
            self.changed = True
            arguments = [ast.Constant("transpose"), node.value]
            return ast.Call(ast.Name("py_array_method", ast.Load()), arguments, [])
        if node.attr == "mT":
            raise SubscriptError(
                "`.mT` of a per-example array would move the batch axis: "
                "use np.swapaxes(x, -1, -2) (or tf.linalg.matrix_transpose)"
            )
        self.changed = True
        return _shape_constant(node.attr, shape)

    def set_item(self, node):
        """`__setitem__(x, (items...), value)` -> `put(x, (items...), value)`."""
        target, index, value = node.args
        base = self.values.of(target)
        if is_ragged_value(base):
            name = ast.unparse(target)
            raise SubscriptError(
                f"item assignment to `{name}`, a vector whose length differs per example (a slice "
                "with per-example bounds, or one that recursion shortens), is not supported: copy "
                f"it into an array of fixed length first (`buf = np.zeros(CAPACITY)`, then "
                f"`buf[k] = {name}[k]` in a loop) and assign into that"
            )
        shape = None if base is _UNKNOWN else self.values.event_shape(base)
        if base is not _UNKNOWN and shape is None and isinstance(base, list):
            name = ast.unparse(target)
            raise SubscriptError(
                f"item assignment needs a per-example array; `{name}` is a list, and a list's "
                f"items cannot be assigned in a batched function: build a new list (`{name} = "
                "[...]` with the new item), or keep the items in an array and assign its elements"
            )
        if base is not _UNKNOWN and shape is None:
            raise SubscriptError(
                f"item assignment needs a per-example array; `{ast.unparse(target)}` is not "
                "one (tuples are immutable: build a new one, or `t = t._replace(...)`)"
            )
        items = list(index.elts)
        if shape is not None:
            if not shape:
                raise SubscriptError(
                    f"`{ast.unparse(target)}` is one number per example: it has no elements to assign"
                )
            if len(items) > len(shape):
                raise SubscriptError(
                    f"too many indices: `{ast.unparse(target)}` has per-example shape "
                    f"{tuple(shape)}, the assignment gives {len(items)}"
                )
            kinds = [self.item_kind(_as_slice(i), size) for i, size in zip(items, shape)]
            items = [self.item_node(k, i) for k, i in kinds]
            value = self.aligned_value(node, value, shape, kinds)
            self.refuse_narrowing_store(target, base, value)
        self.changed = True
        return _helper("put", target, items, value)

    def refuse_narrowing_store(self, target, base, value):
        """A float stored into a list of ints (or a number into one of
        bools): a Python list made by `[0] * n` would hold the float, and the
        batched array would cut it to an int, a wrong answer given without
        an error; so it is refused, saying how to make the list hold it.
        NumPy's own arrays keep their dtype, on one example too."""
        lists = getattr(self.values, "list_names", frozenset())
        root = target
        while True:  # `m[i][j] = x`: a row of the list m (`m[i]`, or `take(m, (i,))` rewritten)
            if isinstance(root, ast.Subscript):
                root = root.value
            elif (
                isinstance(root, ast.Call)
                and isinstance(root.func, ast.Name)
                and root.func.id == "take"
                and root.args
            ):
                root = root.args[0]
            else:
                break
        if not (isinstance(root, ast.Name) and root.id in lists):
            return  # an array (a parameter, np.zeros): NumPy's dtype, as on one example
        stored = self.values.of(value)
        if stored is _UNKNOWN:
            return
        kind = np.dtype(getattr(base.dtype, "as_numpy_dtype", base.dtype)).kind
        stored_dtype = getattr(stored, "dtype", None)
        if stored_dtype is None:
            if isinstance(stored, bool) or not isinstance(stored, (int, float)):
                return
            stored_kind = "f" if isinstance(stored, float) else "i"
        else:
            stored_kind = np.dtype(getattr(stored_dtype, "as_numpy_dtype", stored_dtype)).kind
        name = root.id
        if kind in "iu" and stored_kind == "f":
            raise SubscriptError(
                f"`{name}` holds ints and this stores a float into it: a Python list made by "
                f"`[0] * n` would keep the float, and the batched array would cut it to an int. "
                f"Make `{name}` hold floats from the start (`[0.0] * n`, `np.zeros(n)`), or store "
                f"`int(...)` if an int is meant"
            )
        if kind == "b" and stored_kind in "iuf":
            raise SubscriptError(
                f"`{name}` holds bools and this stores a number into it: a Python list made by "
                f"`[False] * n` would keep the number, and the batched array would make it a bool. "
                f"Make `{name}` hold numbers from the start (`[0] * n`), or store a bool"
            )

    def aligned_value(self, node, value, shape, kinds):
        """The assigned value with its per-example axes placed as on one
        example: a per-example scalar assigned to a slice is [batch] against a
        [batch, k] region, and must be expanded after the batch axis."""
        region = list(shape[len(kinds):])
        for (kind, item), size in zip(reversed(kinds), reversed(shape[: len(kinds)])):
            if kind == "slice":
                region.insert(0, len(range(size)[_slice_of(item)]))
        assigned = self.values.of(value)
        value_shape = None if assigned is _UNKNOWN else self.values.event_shape(assigned)
        if value_shape is None:
            return value  # a constant: broadcasts from the right, as on one example
        if len(value_shape) > len(region):
            raise SubscriptError(
                f"cannot assign a value of per-example shape {tuple(value_shape)} to "
                f"a region of per-example shape {tuple(region)}"
            )
        missing = len(region) - len(value_shape)
        if missing:
            index = [ast.Slice()] + [ast.Constant(None)] * missing
            return ast.Subscript(value, ast.Tuple(index, ast.Load()), ast.Load())
        return value


# Where a vector of per-example length may appear in a rewritten expression:
# as the whole value (`t = s`, `return s`), in a tuple display, as an
# argument of a ragged helper, or read apart (`s.length`).
_RAGGED_READS = ("length", "values")


def check_ragged_uses(expr: str, values: Values) -> None:
    """Refuses (SubscriptError) a use of a vector whose length differs per
    example that the rewrites did not give a meaning: arithmetic (`s + 1`),
    a library call (`np.sum(s)`), a comparison of two of them.  On the batch
    it is a (values, length) pair, and any such use would compute on its
    padding or on the pair itself."""
    tree = ast.parse(expr, mode="eval")
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def allowed(node):
        parent = parents.get(node)
        if parent is None or isinstance(parent, ast.Expression):
            return True
        if isinstance(parent, (ast.Tuple, ast.List)):
            return allowed(parent)
        if isinstance(parent, ast.IfExp) and node is not parent.test:
            return allowed(parent)
        if isinstance(parent, ast.Attribute) and parent.attr in _RAGGED_READS:
            return True
        if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name):
            return parent.func.id.startswith("ragged_")
        return False

    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Call)) or isinstance(getattr(node, "ctx", None), ast.Store):
            continue
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id.startswith("ragged_")):
            continue
        if allowed(node) or not is_ragged_value(values.of(node)):
            continue
        parent = parents.get(node)
        raise SubscriptError(
            f"`{ast.unparse(node)}` is a vector whose length differs per example (held as padded "
            f"values and a length), and `{ast.unparse(parent)}` has no per-example meaning for it "
            "here; supported: len(), an index, a slice (step 1), `for`, `in`, sum(), any(), all(), "
            "sorted(), min()/max() with default=, and passing it to a batched function; to compute "
            "with it otherwise, copy it into an array of fixed length (np.zeros(N), then element "
            "by element in a loop)"
        )
