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

import dataclasses
from typing import Callable, Dict, Optional

from transpiler import types as T
from transpiler.errors import BatchTypeError, where
from transpiler.ir import instructions as ir
from transpiler.passes.placeholder_evaluation import PlaceholderEvaluation
from transpiler.passes.type_settling import Settling, rows_as_tuple


def infer(
    program: ir.Program,
    signature,
    backend,
    namespaces: Dict[str, dict],
    overrides: Optional[Dict[str, Callable]] = None,
) -> ir.Program:
    """Returns `program` with `types` and `returns` filled in (all strong)."""
    return _Inference(program, signature, backend, namespaces, overrides or {}).run()


class _Inference(PlaceholderEvaluation, Settling):
    """The fixpoint over a program's types.  Evaluating an expression on
    placeholders is PlaceholderEvaluation's (passes/placeholder_evaluation.py);
    the checks and conversions once types settle are Settling's
    (passes/type_settling.py)."""

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
                where(origin) + f"variable {name.split('.', 1)[1]!r} gets "
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
                where(origin) + f"cannot unpack a vector whose length differs per example "
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
                where(origin)
                + f"cannot unpack a value of type {value_type} into {len(pattern)} names "
                "(tuples, lists and namedtuples of a fixed length unpack per example, and arrays of as many rows)"
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
            self.bind(fn, op.vars_out, rows_as_tuple(op.vars_out, result), op.origin)

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
                where(op.origin) + f"the two sides of a per-example choice differ: {e}"
            ) from None
        self.bind(fn, op.vars_out, joined, op.origin)

    def visit_call(self, fn, call):
        callee = self.program.function(call.function)
        if len(call.vars_in) != len(callee.params):
            raise BatchTypeError(
                where(call.origin) + f"{callee.name!r} takes {len(callee.params)} "
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
                    where(origin) + f"{fn!r} returns None on some path (a bare `return`, "
                    f"or falling off the end of the function after this line) and "
                    f"{T.strong(value)} on another: return a value on every path"
                ) from None
            raise BatchTypeError(
                where(origin) + f"{fn!r} returns values of incompatible types: {e}"
            ) from None
        if new != old:
            self.returns[fn] = new
            self.changed = True
