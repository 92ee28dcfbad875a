"""Type inference's last step, once every type has settled.

The fixpoint (passes/type_inference.py) only joins types; what the settled
types imply is written here: each instruction is checked to have its types,
a cast is recorded where a value is stored into a wider variable, an
Optional or a Ragged conversion is inserted where a value meets a variable
held as one (`as_optional`, `ragged_of`), and the errors that could not be
raised while types were provisional are raised, naming the user's line.
`Settling` is a part of `_Inference`, whose state it reads.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from transpiler import types as T
from transpiler.errors import BatchTypeError, where
from transpiler.ir import instructions as ir
from transpiler.passes import subscripts


class Settling:
    """Checks and conversions once types settle (a part of
    `type_inference._Inference`; see the module docstring)."""

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
                where(fn.origin) + f"cannot infer what {fn.name!r} returns: "
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
                raise BatchTypeError(where(origin) + f"a value of type {T.strong(have)} meets a vector {T.strong(want)}")
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
                    where(origin) + f"`{pattern}` holds a vector whose length differs per example "
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
                where(origin) + f"None meets a tuple ({inner}) here; an optional tuple is not "
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
            if isinstance(tested, T.TensorType) and tested.shape != ():
                # `if a == b:` of two vectors: NumPy refuses the truth of an
                # array of several elements (two lists' `==` is one bool)
                raise BatchTypeError(
                    where(terminator.origin) + f"a condition must be one value per example; "
                    f"`{terminator.condition}` has type {tested}: the truth of an array of several "
                    "elements is ambiguous (NumPy raises); to compare whole vectors write "
                    "`np.all(a == b, axis=-1)`, and `np.any(..., axis=-1)` for any element"
                )
            if T.is_ragged(tested):
                # NumPy refuses the truth of an array of several elements
                # (a list's is its non-emptiness): ask for the test meant
                raise BatchTypeError(
                    where(terminator.origin) + f"the truth of `{terminator.condition}`, a vector whose "
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
                where(terminator.origin) + f"{fn!r} returns a tuple holding a vector whose length "
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
                where(origin) + f"cannot infer the type of {name!r}: the code that "
                "assigns it is never reached with known types"
            )

    def finish_select(self, fn, op):
        inputs = self.input_types(fn, op.vars_in)
        if inputs is None:
            missing = [n for n in op.vars_in if ir.qualify(fn, n) not in self.types]
            raise BatchTypeError(
                where(op.origin) + f"{missing[0]!r} may be used before it is assigned"
            )
        sides, failure = self.select_sides(fn, op, inputs)
        if failure is None and T.is_optional(sides[0]):
            # `r or -1`, `not r` of an optional: None is false, a value its own truth
            truth = f"{op.condition}.present & py_bool({op.condition}.value)"
            return self.finish_select(fn, dataclasses.replace(op, condition=truth))
        if failure is not None:
            expr, error = failure
            if isinstance(error, subscripts.SubscriptError):
                raise BatchTypeError(where(op.origin) + str(error)) from None
            self.check_batch_axis(fn, op, [expr], inputs)
            raise BatchTypeError(
                where(op.origin) + f"evaluating `{expr}` on a batch of placeholders "
                f"raised {type(error).__name__}: {error}"
            ) from error
        condition = sides[0]
        if not (isinstance(condition, T.TensorType) and condition.shape == ()):
            raise BatchTypeError(
                where(op.origin) + f"a condition must be one value per example; "
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
                where(op.origin) + f"{missing[0]!r} may be used before it is "
                "assigned (or only in code that is never reached)"
            )
        result, error, _ = self.evaluate(fn, op.expr, op.vars_in, inputs)
        if isinstance(error, subscripts.SubscriptError):
            raise BatchTypeError(where(op.origin) + str(error)) from None
        if error is not None:
            # `tf.stack([x, y])`: the batch axis moved, so no per-example type;
            # say that rather than what the placeholders raised.
            self.check_batch_axis(fn, op, [op.expr], inputs)
            described = ", ".join(
                f"{n}: {T.strong(t)}" for n, t in zip(op.vars_in, inputs)
            )
            raise BatchTypeError(
                where(op.origin) + f"evaluating `{op.expr}` on a batch of "
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
            spec = unpacking(op.vars_out, result)
            if spec is not None:  # `a, b = edge`: [batch, 2] -> ([batch], [batch])
                return dataclasses.replace(op, expr=f"unpack_rows({expr}, {spec!r})")
            self.check_unconverted(fn, op.vars_out, result, op.origin)
        return op


def rows_as_tuple(pattern, value_type):
    """The type a PrimOp's value unpacks as: `a, b = edge` (`for a, b in
    edges:`, `for k, (a, b) in enumerate(edges):`) of an array of 2 rows
    per example unpacks its rows, as Python does; anything else as it is."""
    return _unpacked(pattern, value_type)[0]


def unpacking(pattern, value_type):
    """What `unpack_rows` is given to unpack `value_type` as `pattern`: an
    int n (the value's n rows), a tuple (each element's), None (as it is)."""
    return _unpacked(pattern, value_type)[1]


def _unpacked(pattern, value_type):
    if not isinstance(pattern, tuple) or any(isinstance(p, str) and p.startswith("*") for p in pattern):
        return value_type, None
    if (
        isinstance(value_type, T.TensorType)
        and len(value_type.shape) >= 1
        and isinstance(value_type.shape[0], int)
        and value_type.shape[0] == len(pattern)
        and not T.is_ragged(value_type)
    ):
        row = dataclasses.replace(value_type, shape=tuple(value_type.shape[1:]))
        rows = [_unpacked(p, row) for p in pattern]
        if all(spec is None for _, spec in rows):
            return T.TupleType(tuple(t for t, _ in rows)), len(pattern)
        return value_type, None  # (rows unpacked again: not yet)
    if isinstance(value_type, T.TupleType) and len(value_type.elements) == len(pattern):
        parts = [_unpacked(p, t) for p, t in zip(pattern, value_type.elements)]
        if all(spec is None for _, spec in parts):
            return value_type, None
        return (
            dataclasses.replace(value_type, elements=tuple(t for t, _ in parts)),
            tuple(spec for _, spec in parts),
        )
    return value_type, None
