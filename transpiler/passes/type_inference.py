"""Type inference: the per-example type of every variable, without annotations.

Each primitive is evaluated on placeholders (TensorFlow: symbolic tensors with
an unknown batch dimension; NumPy: arrays with an odd batch size) of its input
types, and the result's type flows into its outputs.  Calls carry argument
types into the callee's parameters and the callee's return type back; a
fixpoint over the whole program handles recursion.  Types only grow (see
`types.join`), so the fixpoint ends.

Evaluations are cached on their input types, so each primitive runs once per
distinct typing of its inputs: usually once, twice when a literal's weak type
is later strengthened.  An evaluation that fails is not an error until the
fixpoint settles: it may have seen a provisional type.

`type_inference=` callables (the predecessor's hand annotations) give a
function's return types from its argument types and take precedence over what
the body would give.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import warnings
from typing import Callable, Dict, Optional

import numpy as np

from transpiler import backends as B
from transpiler import types as T
from transpiler.errors import BatchTypeError
from transpiler.ir import instructions as ir
from transpiler.passes import batch_axis, broadcast, python_builtins, subscripts


def infer(
    program: ir.Program,
    signature,
    backend,
    namespaces: Dict[str, dict],
    overrides: Optional[Dict[str, Callable]] = None,
) -> ir.Program:
    """Returns `program` with `types` and `returns` filled in (all strong)."""
    return _Inference(program, signature, backend, namespaces, overrides or {}).run()


class _Inference:
    def __init__(self, program, signature, backend, namespaces, overrides):
        self.program = program
        self.backend = backend
        self.namespaces = namespaces
        self.overrides = overrides
        self.types: Dict[str, object] = {}
        self.returns: Dict[str, object] = {}
        self.cache: Dict[tuple, tuple] = {}  # (expr, fn, input types) -> (type|None, error|None)
        main = program.function(program.main)
        if len(signature) != len(main.params):
            raise TypeError(
                f"{main.name} takes {len(main.params)} argument(s), "
                f"the signature has {len(signature)}"
            )
        for param, pattern in zip(main.params, signature):
            self.types[ir.qualify(main.name, param)] = pattern
        self.changed = False
        self.explaining = set()  # callees being checked for a caller's error
        self.pending = []  # instructions `finish` places after the current one

    # ---- lattice updates -------------------------------------------------

    def join_into(self, name, pattern, origin):
        old = self.types.get(name)
        try:
            new = T.join(old, pattern)
        except T.TypeJoinError as e:
            raise BatchTypeError(
                _where(origin) + f"variable {name.split('.', 1)[1]!r} gets "
                f"values of incompatible types: {e}"
            ) from None
        if new != old or (old is not None and new.__class__ is not old.__class__):
            self.types[name] = new
            self.changed = True

    def bind(self, fn, pattern, value_type, origin):
        if pattern is None:
            return
        if isinstance(pattern, str):
            self.join_into(ir.qualify(fn, pattern), value_type, origin)
            return
        if T.is_ragged(value_type):
            raise BatchTypeError(
                _where(origin) + f"cannot unpack a vector whose length differs per example "
                f"({T.strong(value_type)}) into {len(pattern)} names: its length is not known "
                "when the program is built; index its elements (`v[0]`, `v[1]`)"
            )
        elements = value_type.elements if isinstance(value_type, T.TupleType) else None
        starred = [i for i, p in enumerate(pattern) if isinstance(p, str) and p[0] == "*"]
        if elements is not None and starred:
            k, tail = starred[0], len(pattern) - starred[0] - 1
            if len(elements) >= len(pattern) - 1:
                rest = T.TupleType(elements[k : len(elements) - tail])
                elements = elements[:k] + (rest,) + elements[len(elements) - tail :]
                pattern = pattern[:k] + (pattern[k][1:],) + pattern[k + 1 :]
        if elements is None or len(elements) != len(pattern):
            raise BatchTypeError(
                _where(origin)
                + f"cannot unpack a value of type {value_type} into {len(pattern)} names "
                "(only tuples, lists and namedtuples of a fixed length unpack per example)"
            )
        for p, t in zip(pattern, elements):
            self.bind(fn, p, t, origin)

    # ---- the fixpoint ----------------------------------------------------

    def run(self) -> ir.Program:
        with self.backend.inference_scope():
            self.changed = True
            while self.changed:
                self.changed = False
                for fn in self.program.functions:
                    if all(ir.qualify(fn.name, p) in self.types for p in fn.params):
                        self.visit_function(fn)
            functions = tuple(self.finish(fn) for fn in self.program.functions)
        types = tuple(sorted((k, T.strong(v)) for k, v in self.types.items()))
        returns = tuple(sorted((k, T.strong(v)) for k, v in self.returns.items()))
        return dataclasses.replace(
            self.program, functions=functions, types=types, returns=returns
        )

    def visit_function(self, fn):
        if fn.name in self.overrides:
            params = tuple(self.types[ir.qualify(fn.name, p)] for p in fn.params)
            self.join_return(fn.name, self.override(fn.name, params), fn.origin)
        for block in fn.blocks:
            for instruction in block.instructions:
                if isinstance(instruction, ir.PrimOp):
                    self.visit_primop(fn.name, instruction)
                elif isinstance(instruction, ir.Select):
                    self.visit_select(fn.name, instruction)
                elif isinstance(instruction, ir.Call):
                    self.visit_call(fn.name, instruction)
            t = block.terminator
            if isinstance(t, ir.Return):
                self.visit_return(fn.name, t)

    def input_types(self, fn, names):
        types = [self.types.get(ir.qualify(fn, n)) for n in names]
        return None if any(t is None for t in types) else tuple(types)

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
            if python_builtins.mentions(text) or ragged or any(T.is_optional(t) for t in inputs):
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

        return subscripts.Values(evaluate, event_shape, align)

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
                raise BatchTypeError(_where(op.origin) + problem)

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
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            return None  # a tuple, a string, a function: not an operand
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

    def strengthen(self, fn, vars_in, promoted, origin):
        if promoted is not None:
            for name, t in zip(vars_in, promoted):
                self.join_into(ir.qualify(fn, name), t, origin)

    def visit_primop(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            return
        result, _, promoted = self.evaluate(fn, op.expr, op.vars_in, inputs)
        self.strengthen(fn, op.vars_in, promoted, op.origin)
        if result is not None:
            self.bind(fn, op.vars_out, result, op.origin)

    def select_sides(self, fn, op, inputs):
        """The types of a Select's condition and sides, or the first error."""
        results = []
        for expr in (op.condition, op.if_true, op.if_false):
            result, error, promoted = self.evaluate(fn, expr, op.vars_in, inputs)
            self.strengthen(fn, op.vars_in, promoted, op.origin)
            if error is not None:
                return None, (expr, error)
            results.append(result)
        return results, None

    def visit_select(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            return
        sides, _ = self.select_sides(fn, op, inputs)
        if sides is None:
            return
        try:
            joined = T.join(sides[1], sides[2])
        except T.TypeJoinError as e:
            raise BatchTypeError(
                _where(op.origin) + f"the two sides of a per-example choice differ: {e}"
            ) from None
        self.bind(fn, op.vars_out, joined, op.origin)

    def visit_call(self, fn, call):
        callee = self.program.function(call.function)
        if len(call.vars_in) != len(callee.params):
            raise BatchTypeError(
                _where(call.origin) + f"{callee.name!r} takes {len(callee.params)} "
                f"argument(s), this call passes {len(call.vars_in)}"
            )
        args = self.input_types(fn, call.vars_in)
        if args is None:
            return
        for param, t in zip(callee.params, args):
            self.join_into(ir.qualify(callee.name, param), t, call.origin)
        if callee.name in self.overrides:
            self.join_return(callee.name, self.override(callee.name, args), call.origin)
        result = self.returns.get(callee.name)
        if result is not None:
            self.bind(fn, call.vars_out, result, call.origin)

    def override(self, name, args):
        given = self.overrides[name](list(args))  # TensorTypes (with .dtype), as before
        if isinstance(given, (list, tuple)) and not isinstance(given, T.Type):
            given = list(given)
            given = given[0] if len(given) == 1 else tuple(given)
        return T.from_user(given)

    def visit_return(self, fn, ret):
        if fn in self.overrides:
            return
        if ret.value is None:
            self.join_return(fn, T.NONE, ret.origin)
            return
        value = self.value_type(fn, ret.value)
        if value is not None:
            self.join_return(fn, value, ret.origin)

    def value_type(self, fn, pattern):
        if isinstance(pattern, str):
            return self.types.get(ir.qualify(fn, pattern))
        elements = [self.value_type(fn, p) for p in pattern]
        return None if any(e is None for e in elements) else T.TupleType(tuple(elements))

    def join_return(self, fn, pattern, origin):
        old = self.returns.get(fn)
        try:
            new = T.join(old, pattern)
        except T.TypeJoinError as e:
            if T.NONE in (old, pattern):
                value = old if pattern is T.NONE else pattern
                raise BatchTypeError(
                    _where(origin) + f"{fn!r} returns None on some path (a bare `return`, "
                    f"or falling off the end of the function after this line) and "
                    f"{T.strong(value)} on another: return a value on every path"
                ) from None
            raise BatchTypeError(
                _where(origin) + f"{fn!r} returns values of incompatible types: {e}"
            ) from None
        if new != old:
            self.returns[fn] = new
            self.changed = True

    # ---- checks and casts once settled -----------------------------------

    def finish(self, fn: ir.Function) -> ir.Function:
        """Checks every instruction got types; records needed casts on PrimOps."""
        if not all(ir.qualify(fn.name, p) in self.types for p in fn.params):
            return fn  # never called with typed arguments: dropped by lowering
        blocks = []
        for block in fn.blocks:
            instructions = []
            for op in block.instructions:
                if isinstance(op, ir.PrimOp):
                    op = self.finish_primop(fn.name, op)
                elif isinstance(op, ir.Select):
                    op = self.finish_select(fn.name, op)
                elif isinstance(op, ir.Call):
                    self.explain_untyped_callee(fn.name, op)
                    for name in ir.pattern_names(op.vars_out):
                        self.require(fn.name, name, op.origin)
                    op = self.optional_call(fn.name, op, instructions)
                instructions.append(op)
                instructions.extend(self.pending)
                self.pending = []
            terminator = self.optional_return(fn.name, block.terminator, instructions)
            blocks.append(dataclasses.replace(block, instructions=tuple(instructions), terminator=terminator))
        if fn.name not in self.returns:
            raise BatchTypeError(
                _where(fn.origin) + f"cannot infer what {fn.name!r} returns: "
                "every path recurses without reaching a `return`"
            )
        return dataclasses.replace(fn, blocks=tuple(blocks))

    # ---- optionals: None meeting a value (types.optional) -----------------

    def as_stored(self, text, have, want, origin):
        """`text`, a value of type `have`, as the variable of type `want`
        holds it: a vector (or a Ragged of a smaller capacity) as the Ragged
        `want` (`ragged_of`), a value as an optional (`as_optional`)."""
        if T.is_ragged(want):
            if T.strong(have) == T.strong(want):
                return text
            if not (T.is_ragged(have) or isinstance(have, T.TensorType)):
                raise BatchTypeError(_where(origin) + f"a value of type {T.strong(have)} meets a vector {T.strong(want)}")
            dtype = want.elements[0].dtype.name
            return f"ragged_of({text}, {T.capacity(want)!r}, {dtype!r})"
        return self.as_optional(text, have, want, origin)

    def check_unconverted(self, fn, pattern, value_type, origin):
        """A tuple assigned or returned whole (`a, b = v[1:], 0`, `return
        (s, n)`) whose vector part is held as a Ragged elsewhere cannot be
        converted element by element here: refused, naming the line."""
        if isinstance(pattern, str):
            stored = self.types.get(ir.qualify(fn, pattern))
            if stored is not None and T.is_ragged(stored) and T.strong(stored) != T.strong(value_type):
                raise BatchTypeError(
                    _where(origin) + f"`{pattern}` holds a vector whose length differs per example "
                    f"({T.strong(stored)}) and gets {T.strong(value_type)} from a tuple here; "
                    "assign it on its own (`x = ...`), not by unpacking a tuple"
                )
            return
        if isinstance(value_type, T.TupleType) and pattern is not None and len(pattern) == len(value_type.elements):
            for p, t in zip(pattern, value_type.elements):
                self.check_unconverted(fn, p, t, origin)

    def as_optional(self, text, have, want, origin):
        """`text`, a value of type `have`, as the optional `want` it is
        stored in: `py_some(text)`, or None as an absent value."""
        if not T.is_optional(want) or T.is_optional(have):
            return text
        inner = T.strong(want.elements[1])
        if not isinstance(inner, T.TensorType):
            raise BatchTypeError(
                _where(origin) + f"None meets a tuple ({inner}) here; an optional tuple is not "
                "supported: return a flag beside the tuple"
            )
        if have is T.NONE:
            return f"spread(active, py_none({inner.dtype.name!r}, {inner.shape!r}))"
        if isinstance(have, T.TensorType) and have.dtype != inner.dtype:
            text = f"cast({text}, {inner.dtype.name!r})"
        return f"py_some({text})"

    def converted(self, fn, name, have, want, origin, instructions):
        """A fresh variable holding `name` (of type `have`) as the optional
        `want`: a PrimOp appended to `instructions`."""
        k = 1
        kind = "ragged" if T.is_ragged(want) else "optional"  # the name says what it holds
        while ir.qualify(fn, f"{name}_{kind}_{k}") in self.types:
            k += 1
        fresh = f"{name}_{kind}_{k}"
        self.types[ir.qualify(fn, fresh)] = want
        vars_in = () if name is None else (name,)
        text = self.as_stored(name or "None", have, want, origin)
        instructions.append(ir.PrimOp(vars_in, fresh, text, origin=origin, namespace=self.namespaces[fn]))
        return fresh

    def optional_call(self, fn, call, instructions):
        """A call passing a value where the callee's parameter is optional
        (another call passes None), or returning a value into an optional
        variable: the conversions around it."""
        callee = self.program.function(call.function)
        args = []
        for arg, param in zip(call.vars_in, callee.params):
            have = T.strong(self.types[ir.qualify(fn, arg)])
            want = T.strong(self.types.get(ir.qualify(callee.name, param)))
            if (T.is_optional(want) and not T.is_optional(have)) or (T.is_ragged(want) and have != want):
                arg = self.converted(fn, arg, have, want, call.origin, instructions)
            args.append(arg)
        call = dataclasses.replace(call, vars_in=tuple(args))
        returned = self.returns.get(callee.name)
        if returned is not None and not isinstance(call.vars_out, str):
            self.check_unconverted(fn, call.vars_out, returned, call.origin)
        if isinstance(call.vars_out, str) and returned is not None:
            want = T.strong(self.types[ir.qualify(fn, call.vars_out)])
            if (T.is_optional(want) and not T.is_optional(returned)) or (T.is_ragged(want) and T.strong(returned) != want):
                raw = f"{call.vars_out}_returned"
                self.types[ir.qualify(fn, raw)] = T.strong(returned)
                text = self.as_stored(raw, T.strong(returned), want, call.origin)
                self.pending.append(
                    ir.PrimOp((raw,), call.vars_out, text, origin=call.origin, namespace=self.namespaces[fn])
                )
                call = dataclasses.replace(call, vars_out=raw)
        return call

    def optional_return(self, fn, terminator, instructions):
        """`return x` or `return None` in a function that returns an optional;
        `if r:` of an optional (None is false, a value its own truth)."""
        if isinstance(terminator, ir.Branch):
            tested = self.types.get(ir.qualify(fn, terminator.condition))
            if T.is_optional(tested):
                truth = f"{terminator.condition}_truth"
                self.types[ir.qualify(fn, truth)] = T.TensorType(np.bool_)
                text = f"{terminator.condition}.present & py_bool({terminator.condition}.value)"
                instructions.append(
                    ir.PrimOp((terminator.condition,), truth, text, origin=terminator.origin, namespace=self.namespaces[fn])
                )
                return dataclasses.replace(terminator, condition=truth)
            if T.is_ragged(tested):
                # NumPy refuses the truth of an array of several elements
                # (a list's is its non-emptiness): ask for the test meant
                raise BatchTypeError(
                    _where(terminator.origin) + f"the truth of `{terminator.condition}`, a vector whose "
                    "length differs per example, is ambiguous (NumPy raises for an array of several "
                    "elements); test its length: `if len(v) > 0:`"
                )
        want = T.strong(self.returns.get(fn)) if fn in self.returns else None
        if isinstance(terminator, ir.Return) and T.is_ragged(want):
            if isinstance(terminator.value, str):
                have = T.strong(self.types[ir.qualify(fn, terminator.value)])
                if have != want:
                    value = self.converted(fn, terminator.value, have, want, terminator.origin, instructions)
                    return dataclasses.replace(terminator, value=value)
            return terminator
        if isinstance(terminator, ir.Return) and terminator.value is not None and not isinstance(terminator.value, str) and want is not None:
            self.check_returned_tuple(fn, terminator, want)
        if not isinstance(terminator, ir.Return) or not T.is_optional(want):
            return terminator
        if terminator.value is None:
            value = self.converted(fn, None, T.NONE, want, terminator.origin, instructions)
            return dataclasses.replace(terminator, value=value)
        if isinstance(terminator.value, str):
            have = T.strong(self.types[ir.qualify(fn, terminator.value)])
            if not T.is_optional(have):
                value = self.converted(fn, terminator.value, have, want, terminator.origin, instructions)
                return dataclasses.replace(terminator, value=value)
        return terminator

    def check_returned_tuple(self, fn, terminator, want):
        """`return (s, n)` where `s` is a vector here and a Ragged on another
        path: the leaves differ, so it is refused (naming the line)."""
        have = self.value_type(fn, terminator.value)
        if have is None or T.strong(have) == T.strong(want):
            return

        def involves_ragged(a, b):
            if T.is_ragged(a) or T.is_ragged(b):
                return T.strong(a) != T.strong(b)
            if isinstance(a, T.TupleType) and isinstance(b, T.TupleType):
                return any(involves_ragged(x, y) for x, y in zip(a.elements, b.elements))
            return False

        if involves_ragged(have, want):
            raise BatchTypeError(
                _where(terminator.origin) + f"{fn!r} returns a tuple holding a vector whose length "
                f"differs per example ({T.strong(want)}), and {T.strong(have)} here; assign the "
                "vector to a variable that every return uses (`r = s`), or return it alone"
            )

    def explain_untyped_callee(self, fn, call):
        """A call whose result never got a type: report the callee's own error.

        Checking the callee first names the primitive that failed (its line
        and its placeholder error) rather than the call that waited on it.
        """
        if call.function in self.returns or call.function == fn:
            return
        if call.function in self.explaining:
            return
        self.explaining.add(call.function)
        self.finish(self.program.function(call.function))

    def require(self, fn, name, origin):
        if ir.qualify(fn, name) not in self.types:
            raise BatchTypeError(
                _where(origin) + f"cannot infer the type of {name!r}: the code that "
                "assigns it is never reached with known types"
            )

    def finish_select(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            missing = [n for n in op.vars_in if ir.qualify(fn, n) not in self.types]
            raise BatchTypeError(
                _where(op.origin) + f"{missing[0]!r} may be used before it is assigned"
            )
        sides, failure = self.select_sides(fn, op, inputs)
        if failure is None and T.is_optional(sides[0]):
            # `r or -1`, `not r` of an optional: None is false, a value its own truth
            truth = f"{op.condition}.present & py_bool({op.condition}.value)"
            return self.finish_select(fn, dataclasses.replace(op, condition=truth))
        if failure is not None:
            expr, error = failure
            if isinstance(error, subscripts.SubscriptError):
                raise BatchTypeError(_where(op.origin) + str(error)) from None
            self.check_batch_axis(fn, op, [expr], inputs)
            raise BatchTypeError(
                _where(op.origin) + f"evaluating `{expr}` on a batch of placeholders "
                f"raised {type(error).__name__}: {error}"
            ) from error
        condition = sides[0]
        if not (isinstance(condition, T.TensorType) and condition.shape == ()):
            raise BatchTypeError(
                _where(op.origin) + f"a condition must be one value per example; "
                f"`{op.condition}` has type {condition}"
            )
        self.check_batch_axis(fn, op, [op.condition, op.if_true, op.if_false], inputs)
        # A constant condition picks for no one: give it the batch axis.  A
        # constant side then needs it only for its arrays (`np.ones(3) if d
        # else np.zeros(3)` would pick element by element); numbers
        # broadcast against the condition as they are.
        condition = self.spread(fn, op.condition, op.vars_in, inputs)
        arrays_only = condition == self.aligned(fn, op.condition, op.vars_in, inputs)
        op = dataclasses.replace(
            op,
            condition=condition,
            if_true=self.spread(fn, op.if_true, op.vars_in, inputs, arrays_only),
            if_false=self.spread(fn, op.if_false, op.vars_in, inputs, arrays_only),
        )
        stored = T.strong(self.types[ir.qualify(fn, op.vars_out)])
        if isinstance(stored, T.TensorType):
            if any(
                not isinstance(side, T.TensorType) or side.dtype != stored.dtype
                for side in sides[1:]
            ):
                return dataclasses.replace(op, cast_to=stored.dtype.name)
        if T.is_optional(stored) or T.is_ragged(stored):  # `i if found else None`, `s if c else s[1:]`
            return dataclasses.replace(
                op,
                if_true=self.as_stored(op.if_true, sides[1], stored, op.origin),
                if_false=self.as_stored(op.if_false, sides[2], stored, op.origin),
            )
        if not isinstance(op.vars_out, str):
            self.check_unconverted(fn, op.vars_out, T.join(sides[1], sides[2]), op.origin)
        return op

    def finish_primop(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            missing = [n for n in op.vars_in if ir.qualify(fn, n) not in self.types]
            raise BatchTypeError(
                _where(op.origin) + f"{missing[0]!r} may be used before it is "
                "assigned (or only in code that is never reached)"
            )
        result, error, _ = self.evaluate(fn, op.expr, op.vars_in, inputs)
        if isinstance(error, subscripts.SubscriptError):
            raise BatchTypeError(_where(op.origin) + str(error)) from None
        if error is not None:
            # `tf.stack([x, y])`: the batch axis moved, so no per-example type;
            # say that rather than what the placeholders raised.
            self.check_batch_axis(fn, op, [op.expr], inputs)
            described = ", ".join(
                f"{n}: {T.strong(t)}" for n, t in zip(op.vars_in, inputs)
            )
            raise BatchTypeError(
                _where(op.origin) + f"evaluating `{op.expr}` on a batch of "
                f"placeholders ({described or 'no inputs'}) raised "
                f"{type(error).__name__}: {error}"
            ) from error
        self.check_batch_axis(fn, op, [op.expr], inputs)
        if op.vars_out is None:
            expr = self.aligned(fn, op.expr, op.vars_in, inputs)
        else:
            expr = self.spread(fn, op.expr, op.vars_in, inputs)
        op = dataclasses.replace(op, expr=expr)
        if isinstance(op.vars_out, str):
            stored = T.strong(self.types[ir.qualify(fn, op.vars_out)])
            if T.is_optional(stored) and not T.is_optional(result):
                return dataclasses.replace(op, expr=self.as_optional(expr, result, stored, op.origin))
            if T.is_ragged(stored) and T.strong(result) != stored:
                return dataclasses.replace(op, expr=self.as_stored(expr, result, stored, op.origin))
            if isinstance(result, T.TensorType) and isinstance(stored, T.TensorType):
                if result.dtype != stored.dtype:
                    return dataclasses.replace(op, cast_to=stored.dtype.name)
        elif op.vars_out is not None:
            self.check_unconverted(fn, op.vars_out, result, op.origin)
        return op


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


def _where(origin) -> str:
    if origin is None:
        return ""
    return f"{origin.filename}:{origin.line}: in `{origin.text}`: "

