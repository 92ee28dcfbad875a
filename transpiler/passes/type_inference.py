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

from transpiler import backends as B
from transpiler import types as T
from transpiler.errors import BatchTypeError
from transpiler.ir import instructions as ir


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
        if not isinstance(value_type, T.TupleType) or len(value_type.elements) != len(
            pattern
        ):
            raise BatchTypeError(
                _where(origin)
                + f"cannot unpack a value of type {value_type} into {len(pattern)} names"
            )
        for p, t in zip(pattern, value_type.elements):
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
                elif isinstance(instruction, ir.Call):
                    self.visit_call(fn.name, instruction)
            t = block.terminator
            if isinstance(t, ir.Return):
                self.visit_return(fn.name, t)

    def input_types(self, fn, names):
        types = [self.types.get(ir.qualify(fn, n)) for n in names]
        return None if any(t is None for t in types) else tuple(types)

    def evaluate(self, fn, op: ir.PrimOp, inputs):
        key = (fn, op.expr, inputs)
        if key not in self.cache:
            env = {
                name: B.placeholder(self.backend, t) for name, t in zip(op.vars_in, inputs)
            }
            try:
                value = eval(op.expr, self.namespaces[fn], env)  # noqa: S307
                self.cache[key] = (B.type_of(self.backend, value), None)
            except Exception as e:  # noqa: BLE001 - reported once types settle
                self.cache[key] = (None, e)
        return self.cache[key]

    def visit_primop(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            return
        result, _ = self.evaluate(fn, op, inputs)
        if result is not None:
            self.bind(fn, op.vars_out, result, op.origin)

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
        given = self.overrides[name]([T.Type(a) for a in args])
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
        if fn.name not in self.returns:
            raise BatchTypeError(
                _where(fn.origin) + f"cannot infer what {fn.name!r} returns: "
                "every path recurses without reaching a `return`"
            )
        blocks = []
        for block in fn.blocks:
            instructions = []
            for op in block.instructions:
                if isinstance(op, ir.PrimOp):
                    op = self.finish_primop(fn.name, op)
                elif isinstance(op, ir.Call):
                    for name in ir.pattern_names(op.vars_out):
                        self.require(fn.name, name, op.origin)
                instructions.append(op)
            blocks.append(dataclasses.replace(block, instructions=tuple(instructions)))
        return dataclasses.replace(fn, blocks=tuple(blocks))

    def require(self, fn, name, origin):
        if ir.qualify(fn, name) not in self.types:
            raise BatchTypeError(
                _where(origin) + f"cannot infer the type of {name!r}: the code that "
                "assigns it is never reached with known types"
            )

    def finish_primop(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            missing = [n for n in op.vars_in if ir.qualify(fn, n) not in self.types]
            raise BatchTypeError(
                _where(op.origin) + f"{missing[0]!r} may be used before it is "
                "assigned (or only in code that is never reached)"
            )
        result, error = self.evaluate(fn, op, inputs)
        if error is not None:
            described = ", ".join(
                f"{n}: {T.strong(t)}" for n, t in zip(op.vars_in, inputs)
            )
            raise BatchTypeError(
                _where(op.origin) + f"evaluating `{op.expr}` on a batch of "
                f"placeholders ({described or 'no inputs'}) raised "
                f"{type(error).__name__}: {error}"
            ) from error
        if isinstance(op.vars_out, str):
            stored = T.strong(self.types[ir.qualify(fn, op.vars_out)])
            if isinstance(result, T.TensorType) and isinstance(stored, T.TensorType):
                if result.dtype != stored.dtype:
                    return dataclasses.replace(op, cast_to=stored.dtype.name)
        return op


def _where(origin) -> str:
    if origin is None:
        return ""
    return f"{origin.filename}:{origin.line}: in `{origin.text}`: "

