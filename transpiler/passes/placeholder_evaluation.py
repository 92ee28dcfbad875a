"""Type inference's evaluation of expressions on placeholders.

A primitive's type is what its expression returns on a batch of
placeholders of its input types (B.placeholder: TensorFlow's symbolic
tensors, NumPy's arrays of batch PLACEHOLDER_BATCH, JAX's shapes and dtypes
traced with `jax.eval_shape`).  Before that the expression is *aligned*: its
subscripts, Python builtins and broadcasting rewritten to their per-example
meaning (passes/subscripts.py, python_builtins.py, broadcast.py), which
itself evaluates subexpressions.  `PlaceholderEvaluation` holds that
machinery as a part of type inference's `_Inference` (passes/type_inference.py),
whose state it reads: `backend`, `namespaces`, `overrides`, `cache`.
"""

from __future__ import annotations

import ast
import functools
import warnings

import numpy as np

from transpiler import backends as B
from transpiler import types as T
from transpiler.errors import BatchTypeError, where
from transpiler.ir import instructions as ir
from transpiler.passes import batch_axis, broadcast, numpy_on_backends, python_builtins, subscripts
from transpiler.passes.inplace_sharing import makes_list


class PlaceholderEvaluation:
    """Evaluating, aligning and spreading expressions on placeholders (a
    part of `type_inference._Inference`; see the module docstring)."""

    def evaluate(self, fn, expr, vars_in, inputs):
        """(type, None, promoted) of `expr` on placeholders, or (None, error, None).

        Weak inputs (from literals) that meet strong inputs of the same kind
        take their dtype first, as Python numbers would (`i < n` with `i = 0`
        and an int64 `n`: `i` is int64); TensorFlow would otherwise refuse to
        mix int32 and int64.  `promoted` gives those input types, which the
        caller joins into the variables.
        """
        key = (fn, expr, vars_in, inputs)
        if key not in self.cache:
            # Only the inputs `expr` reads: a Select's side `1.0` next to a
            # strong condition is still a literal (weak), as in Python.
            used = [k for k, name in enumerate(vars_in) if name in _names(expr)]
            names = tuple(vars_in[k] for k in used)
            promoted = list(inputs)
            for k, t in zip(used, _promote_by_groups(expr, names, tuple(inputs[k] for k in used))):
                promoted[k] = t
            promoted = tuple(promoted)
            used_inputs = tuple(promoted[k] for k in used)
            try:
                text = self.aligned(fn, expr, vars_in, inputs)
            except subscripts.SubscriptError as e:
                self.cache[key] = (None, e, None)
                return self.cache[key]
            value_type, error, leaf_info = self._try(fn, text, names, used_inputs)
            if error is not None:  # `abs(0.5) <= n` on TF: align it after all
                forced = self.aligned(fn, expr, vars_in, inputs, force=True)
                if forced != text:
                    value_type, error, leaf_info = self._try(fn, forced, names, used_inputs)
                    if error is None:
                        self.cache[("aligned", fn, expr, vars_in, inputs)] = forced
            self.cache[("leaves", fn, expr, vars_in, inputs)] = leaf_info
            self.cache[key] = (value_type, error, promoted if promoted != inputs else None)
        return self.cache[key]

    def aligned(self, fn, expr, vars_in, inputs, force=False):
        """`expr` with per-example broadcasting made explicit (passes/broadcast.py).

        Needed when some input has a per-example rank above 0 (a silent
        misalignment is possible), when the expression reads something other
        than its inputs (a call or a global may give an array: `d +
        np.ones(3)` is [batch] against [3]), or (`force`) when the expression as
        written fails: ints meeting floats on TF (`accept / steps`,
        `abs(0.5) <= n`).  NumPy promotes by itself, so there the
        expression stays as written and is evaluated once.
        """
        key = ("aligned", fn, expr, vars_in, inputs) + (("force",) if force else ())
        if key not in self.cache:
            leaves = [leaf for t in inputs for leaf in T.leaves(t)]
            ranks = {len(leaf.shape) for leaf in leaves}
            text = expr
            env = self._placeholder_env(vars_in, _promote_weak(inputs))
            ragged = any(T.is_ragged(t) for t in inputs)
            if self.backend.name in numpy_on_backends.HELPERS and numpy_on_backends.mentions(text):
                text = numpy_on_backends.rewrite(
                    text,
                    self.backend.name,
                    self._evaluator(fn, env),
                    lambda v: self.backend.batched_rank(v) is not None,
                )
            if (
                python_builtins.mentions(text)
                or ragged
                or any(T.is_optional(t) for t in inputs)
                or python_builtins.joins_lists(text, self._list_names(fn))
            ):
                # first: `list(v)[1]` is a subscript of v
                text = python_builtins.rewrite(text, self._values(fn, env, subscripted=True))
            if subscripts.mentions(text):
                text = subscripts.rewrite(text, self._values(fn, env))
            if ragged or "ragged_" in text:
                subscripts.check_ragged_uses(text, self._values(fn, env))
            if force or ranks - {0} or _reads_beyond(expr, vars_in) or broadcast.needed(text):
                text = broadcast.align(text, lambda sub: self._describe(fn, sub, env))
            self.cache[key] = text
        return self.cache[key]

    def _values(self, fn, env, subscripted=False):
        """Subexpressions' values and per-example shapes, for passes/subscripts.py
        (and, `subscripted`: each subexpression's subscripts given their
        per-example meaning first, for passes/python_builtins.py, which runs
        before them: `min(v[i], x)` is the min of one element per example)."""
        evaluate = self._evaluator(fn, env)

        def event_shape(value):
            if self.backend.batched_rank(value) is None:
                return None
            return B.type_of(self.backend, value).shape

        plain = subscripts.Values(evaluate, event_shape, lambda text: align(text, False))

        def align(text, subscripted=subscripted):
            if subscripted and subscripts.mentions(text):
                text = subscripts.rewrite(text, plain)
            return broadcast.align(text, lambda sub: self._describe(fn, sub, env))

        values = subscripts.Values(evaluate, event_shape, align)
        values.list_names = self._list_names(fn)
        return values

    def _list_names(self, fn) -> frozenset:
        """The locals of `fn` that some assignment makes a Python list
        (`[0] * n`, a list display or comprehension, `list(v)`, `sorted(v)`):
        a float stored into one of ints is refused (passes/subscripts.py),
        where NumPy's own int arrays (a parameter) cut it, as on one example."""
        key = ("list_names", fn)
        if key not in self.cache:
            names, copies, arrays = set(), [], set()
            for block in self.program.function(fn).blocks:
                for ins in block.instructions:
                    if isinstance(ins, ir.PrimOp) and isinstance(ins.vars_out, str) and isinstance(ins.expr, str):
                        if _makes_list(ins.expr):
                            names.add(ins.vars_out)
                        elif ins.expr.isidentifier():
                            copies.append((ins.vars_out, ins.expr))
                        elif not _keeps_a_list(ins.expr, ins.vars_out):
                            arrays.add(ins.vars_out)  # `a = np.array(a) * 2`: an array now
            # `m = items_1`: a nested comprehension's list, given its name
            grown = True
            while grown:
                grown = False
                for target, source in copies:
                    if source in names and target not in names:
                        names.add(target)
                        grown = True
            # a name that is a list on one path and an array on another is
            # neither: `+` on it is refused rather than guessed
            self.cache[key] = frozenset(names - arrays)
        return self.cache[key]

    def check_batch_axis(self, fn, op, exprs, inputs):
        """Refuses a library call that moves or drops the batch axis
        (passes/batch_axis.py): `np.sum(v)` would add up the whole batch."""
        # Concrete placeholders: batch_axis.check calls the library function itself.
        env = self._placeholder_env(op.vars_in, _promote_weak(inputs), functools.partial(B.placeholder, self.backend))
        evaluate = self._evaluator(fn, env)
        for expr in exprs:
            text = self.aligned(fn, expr, op.vars_in, inputs)
            problem = batch_axis.check(text, evaluate, self.backend.batched_rank)
            if problem is None:
                problem = self._check_mixing(fn, text, op.vars_in, inputs)
            if problem is not None:
                raise BatchTypeError(where(op.origin) + problem)

    def _check_mixing(self, fn, text, vars_in, inputs):
        """passes/batch_axis.check_values on a probe of random examples
        (the same random numbers every build: the verdict is reproducible)."""
        if not batch_axis.may_mix(text):
            return None
        rng = np.random.default_rng(0)
        with B.probe_scope(self.backend), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                env = self._placeholder_env(vars_in, _promote_weak(inputs), lambda t: B.probe(self.backend, t, rng))
                return batch_axis.check_values(text, self._evaluator(fn, env), B.NumpyBackend().batched_rank)
            except Exception:  # noqa: BLE001 - a probe that cannot run refuses nothing
                return None

    def spread(self, fn, expr, vars_in, inputs, arrays_only=False):
        """`expr`, as aligned, with its leaves that are the same for every
        example (`0`, `np.ones(3)`, a table) given the batch axis:
        `spread(active, ...)`.

        Type inference gives a variable a per-example type, and every later
        expression treats it as [batch, ...]: `w[d] = 0` scatters into
        example b's row, `v - x` expands `x` after the batch axis, a side of
        a choice is picked per example.  A value without the batch axis would
        be read as its own elements there (a silent wrong answer, or a shape
        error), so each variable holds its batch axis from its first
        assignment on.  `arrays_only`: numbers stay as they are.
        """
        value_type, _, _ = self.evaluate(fn, expr, vars_in, inputs)
        leaf_info = self.cache.get(("leaves", fn, expr, vars_in, inputs))
        text = self.aligned(fn, expr, vars_in, inputs)
        if leaf_info is None or value_type is None:
            return text
        flags = [constant and not (arrays_only and rank == 0) for constant, rank in leaf_info]
        return _spread_leaves(ast.parse(text, mode="eval").body, value_type, flags)

    def _placeholder_env(self, vars_in, inputs, value_of=None):
        """The names an expression sees in inference: the runtime helpers
        that passes insert, and a placeholder batch per input (or
        `value_of(input type)`: a probe with values)."""
        if value_of is None:
            value_of = functools.partial(B.abstract_placeholder, self.backend)
        env = dict(B.helpers(self.backend))
        env.update(T.active_sizes())  # size_n: a symbolic size's probe value (transpiler/sizes.py)
        env.update((n, value_of(t)) for n, t in zip(vars_in, inputs))
        return env

    def _evaluator(self, fn, env):
        """`evaluate(text)`: a subexpression's value in `env` (a copy each
        time: an expression may not change the environment)."""

        def evaluate(text):
            return self._eval(fn, text, env)

        return evaluate

    def _eval(self, fn, text, env):
        """`text`'s value in `env` (a copy: an expression may not change it).

        Where the backend evaluates abstractly (JAX: shapes and dtypes, no
        operation compiled or run), leaves come back as shape-and-dtype
        descriptions (B.abstract_evaluate)."""
        namespace = self.namespaces[fn]
        return B.abstract_evaluate(
            self.backend, lambda values: eval(text, namespace, values), env  # noqa: S307
        )

    def _describe(self, fn, expr, env):
        """A subexpression's `broadcast.Operand`, or None if it fails."""
        try:
            value = self._eval(fn, expr, env)
        except Exception:  # noqa: BLE001 - the whole expression reports it
            return None
        if isinstance(value, (bool, int, float)):
            return broadcast.Operand(0, np.asarray(value).dtype, False, True)
        rank = self.backend.batched_rank(value)
        dtype = None if isinstance(value, type) else getattr(value, "dtype", None)
        if dtype is None:
            return None  # a tuple, a string, a function, a class (`np.float64`): not an operand
        tensorflow = hasattr(dtype, "as_numpy_dtype")  # a tensor: TensorFlow's operators
        dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        if rank is None:
            return broadcast.Operand(_rank(value), dtype, False, tensorflow=tensorflow)
        return broadcast.Operand(rank, dtype, True, tensorflow=tensorflow)

    def _try(self, fn, expr, vars_in, inputs):
        env = self._placeholder_env(vars_in, inputs)  # helpers: inserted by broadcast.align, subscripts.rewrite
        try:
            value = self._eval(fn, expr, env)
            # Code written for the predecessor (it declares `type_inference=`)
            # keeps the predecessor's batch-of-one constants: see B.type_of.
            result = B.type_of(self.backend, value, batch_of_one=fn in self.overrides)
            for leaf in B.value_leaves(value) if hasattr(self.backend, "check_leaf") else ():
                self.backend.check_leaf(leaf)  # JAX: a NumPy or TensorFlow value is refused
        except Exception as e:  # noqa: BLE001 - reported once types settle
            return None, e, None
        # Per leaf: (lacks the batch axis, rank), for `spread`.  A batch of
        # one (the predecessor's constants, above) broadcasts as a batch.
        leaf_info = tuple(
            (
                self.backend.batched_rank(leaf) is None
                and not (fn in self.overrides and _rank(leaf) and _shape(leaf)[0] == 1),
                _rank(leaf),
            )
            for leaf in B.value_leaves(value)
        )
        # Only literals went in (`n = n + 1` with a literal `n`): the result
        # stays weak, as a Python number would; so does each element of a
        # tuple display made of literals only (`(0, x)`).
        strong = {name for name, t in zip(vars_in, inputs) if any(not leaf.weak for leaf in T.leaves(t))}
        return _weaken_literal_parts(ast.parse(expr, mode="eval").body, strong, result), None, leaf_info


@functools.lru_cache(maxsize=None)
def _reads_beyond(expr: str, vars_in: tuple) -> bool:
    """Whether `expr` calls something or reads a name other than `vars_in`."""
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if isinstance(node, (ast.Call, ast.Attribute)):
            return True
        if isinstance(node, ast.Name) and node.id not in vars_in:
            return True
    return False


def _spread_leaves(node, pattern, flags) -> str:
    """The text of `node` with the leaves marked in `flags` (depth first)
    wrapped in `spread(active, ...)`: element by element in a tuple display,
    else the whole value (naming its constant leaves if not all are)."""
    text = ast.unparse(node)
    if not any(flags):
        return text
    if isinstance(node, ast.Tuple) and isinstance(pattern, T.TupleType) and len(node.elts) == len(pattern.elements):
        parts, k = [], 0
        for element, element_type in zip(node.elts, pattern.elements):
            n = len(T.leaves(element_type))
            parts.append(_spread_leaves(element, element_type, flags[k : k + n]))
            k += n
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if all(flags):
        return f"spread(active, {text})"
    return f"spread(active, {text}, {tuple(flags)!r})"


def _shape(value) -> tuple:
    shape = getattr(value, "shape", None)
    return np.shape(value) if shape is None else tuple(shape)


def _rank(value) -> int:
    shape = getattr(value, "shape", None)
    return np.ndim(value) if shape is None else len(shape)


def _weaken(pattern):
    if isinstance(pattern, T.TensorType):
        return T.TensorType(pattern.dtype, pattern.shape, weak=True)
    if isinstance(pattern, T.TupleType):
        return T.TupleType(tuple(_weaken(e) for e in pattern.elements), pattern.cls)
    return pattern


def _weaken_literal_parts(node, strong, result):
    """`result` weakened where the part of `node` giving it reads no `strong` name."""
    if isinstance(node, ast.Tuple) and isinstance(result, T.TupleType) and len(node.elts) == len(result.elements):
        parts = zip(node.elts, result.elements)
        return T.TupleType(tuple(_weaken_literal_parts(n, strong, r) for n, r in parts), result.cls)
    if any(isinstance(n, ast.Name) and n.id in strong for n in ast.walk(node)):
        return result
    return _weaken(result)


@functools.lru_cache(maxsize=None)
def _names(expr: str) -> frozenset:
    return frozenset(n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name))


def _groups(node) -> list:
    """The names of each element of a tuple display (nested ones flattened):
    elements never meet, so a weak `n` in `(n, x)` does not become a float."""
    if isinstance(node, ast.Tuple):
        return [g for element in node.elts for g in _groups(element)]
    return [frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))]


def _promote_by_groups(expr, names, inputs):
    """`_promote_weak` within each group of `_groups`; where two groups promote
    one name differently, the promotion that keeps its kind (int, float) wins."""
    out = list(inputs)
    for group in _groups(ast.parse(expr, mode="eval").body):
        members = [k for k, name in enumerate(names) if name in group]
        for k, t in zip(members, _promote_weak(tuple(inputs[k] for k in members))):
            if t != inputs[k] and (out[k] == inputs[k] or _kinds(t) == _kinds(inputs[k])):
                out[k] = t
    return tuple(out)


def _promote_weak(inputs):
    """`inputs` with weak scalar leaves given the dtype of the strong ones."""
    # Tuples do not count: which of their leaves an expression meets is not
    # known here, and promoting by an unrelated leaf made a weak int a float
    # (a fuzzer finding, test `weak_int_beside_a_tuple_with_a_float`).
    strong = [t for t in inputs if isinstance(t, T.TensorType) and not t.weak]
    ints = sorted({t.dtype for t in strong if t.dtype.kind in "iu"}, key=str)
    floats = sorted({t.dtype for t in strong if t.dtype.kind == "f"}, key=str)

    def promote(t):
        if not (isinstance(t, T.TensorType) and t.weak):
            return t
        if t.dtype.kind in "iu" and len(ints) == 1:
            return T.TensorType(ints[0], t.shape)
        # A weak int stays an int beside floats, as `i = 0` does in Python;
        # the operator converts it (passes/broadcast.py).
        if t.dtype.kind == "f" and len(floats) == 1:
            return T.TensorType(floats[0], t.shape)
        return t

    return tuple(promote(t) for t in inputs)


def _kinds(t):
    return tuple(leaf.dtype.kind for leaf in T.leaves(t))


def _keeps_a_list(expr: str, name: str) -> bool:
    """Whether assigning `expr` to `name` leaves a list a list: its own item
    assignment (`a[i] = x`), or a join with a list (`a = a + [x]`)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__setitem__":
        return bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == name
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
        makes_list(node.left) or makes_list(node.right)
    )


def _makes_list(expr: str) -> bool:
    """Whether `expr` is written to make a Python list (see _list_names)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    return makes_list(node)