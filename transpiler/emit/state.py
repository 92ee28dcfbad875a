"""The declarations of one program's loop state: its classes, stack bytes and sizes.

`StateDeclarations` is a part of the program emitter
(transpiler/emit/program.py): the `...State` and `...Stacks` named tuples,
one field a line with its shape and meaning, what one example stacks per
level of recursion (checked before the stacks are allocated), and the
`size_n = rt.event_size(...)` lines that bind symbolic sizes.
"""

from __future__ import annotations

import ast
from typing import Dict

from transpiler import types as T
from transpiler.emit.syntax import (  # the emitters' shared builders
    _SizeNames,
    _attr,
    _bytes,
    _call,
    _function_of,
    _is_docstring,
    _name,
    _short,
)
from transpiler.emit.template import comment, trailing_comment


class StateDeclarations:
    """The state, its stacks and its sizes (a part of `_ProgramEmitter`)."""

    def stack_bytes(self):
        """`FIB_STACK_BYTES = 12`: what one example stacks per level, explained.

        The entry multiplies it by max_stack_depth and the batch size to
        refuse, before allocating, stacks larger than `max_stack_bytes`.
        """
        parts = [
            ("return address", 4, ()) if leaf is None else (field, *_bytes(leaf))
            for field, leaf in self.stack_fields()
        ]
        described = ", ".join(
            f"{what} {size}" + "".join(f" x {s}" for s in symbols) for what, size, symbols in parts
        )
        explained = comment(
            f"bytes one example stacks per level of recursion ({described}): the stacks "
            "take max_stack_depth x batch x this"
        )
        if not any(symbols for _, _, symbols in parts):
            total = sum(size for _, size, _ in parts)
            return [explained, ast.Assign([_name(self.const("STACK_BYTES"), True)], ast.Constant(total))]
        # Stacks of vectors of symbolic size: a function of the call's sizes.
        terms: Dict[tuple, int] = {}
        for _, size, symbols in parts:
            terms[symbols] = terms.get(symbols, 0) + size
        total = None
        for symbols, size in sorted(terms.items(), key=lambda item: (len(item[0]), item[0])):
            term = ast.Constant(size)
            for symbol in symbols:
                term = ast.BinOp(term, ast.Mult(), _name(T.size_variable(symbol)))
            total = term if total is None else ast.BinOp(total, ast.Add(), term)
        function = ast.FunctionDef(
            name=self.stack_bytes_name,
            args=ast.arguments(
                posonlyargs=[],
                args=[],
                vararg=None,
                kwonlyargs=[ast.arg(s.variable) for s in self.sizes],
                kw_defaults=[None for _ in self.sizes],
                kwarg=None,
                defaults=[],
            ),
            body=[ast.Return(total)],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        return [explained, function]

    @property
    def sizes(self):
        """The symbolic sizes of main's parameters, in order of appearance."""
        out = {}
        for var in self.p.params:
            for leaf in T.leaves(self.types[var]):
                for d in leaf.shape:
                    if isinstance(d, T.Size):
                        out.setdefault(d.symbol, d)
        return list(out.values())

    @property
    def stack_bytes_name(self):
        if any(_bytes(leaf)[1] for _, leaf in self.stack_fields() if leaf is not None):
            return f"{self.prefix}_stack_bytes"
        return self.const("STACK_BYTES")

    def define_sizes(self, statements):
        """Puts `size_n = rt.event_size(...)` at the top of every function
        that reads a symbolic size: a block reads it off a state register
        of that size, the program function off an argument."""
        wanted = {s.variable for s in self.sizes}
        if not wanted:
            return statements
        from_state = {}  # variable -> (field, axis)
        for var in sorted(self.p.registers):
            for _, leaf, field in self.fields[var]:
                for axis, d in enumerate(leaf.shape):
                    if isinstance(d, T.Size):
                        from_state.setdefault(d.variable, (field, axis))
        from_args = {}
        for _, _, leaf, _, name in self.param_leaves():
            for axis, d in enumerate(leaf.shape):
                if isinstance(d, T.Size):
                    from_args.setdefault(d.variable, (name, axis))
        statements = [_SizeNames().visit(node) for node in statements]
        for node in statements:
            if not isinstance(node, ast.FunctionDef):
                continue
            params = {a.arg for a in node.args.args + node.args.kwonlyargs}
            used = sorted(
                {
                    n.id
                    for n in ast.walk(node)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in wanted
                }
                - params
            )
            prologue = []
            for variable in used:
                if "state" in params and variable in from_state:
                    field, axis = from_state[variable]
                    source = _attr("state", field)
                elif variable in from_args and from_args[variable][0] in params:
                    field, axis = from_args[variable]
                    source = _name(field)
                else:
                    raise AssertionError(f"{node.name} reads {variable} but has nowhere to read it from")
                prologue.append(ast.Assign([_name(variable, True)], _call("event_size", source, axis)))
            first = 1 if node.body and _is_docstring(node.body[0]) else 0
            node.body[first:first] = prologue
        return statements

    def state_class(self):
        body = [
            ast.Expr(
                ast.Constant(
                    f"Loop state of `{self.entry}` (the stacks aside): one [batch, ...] "
                    "array per register."
                )
            ),
            *self.field(
                "pc",
                "[batch] int32: the block each example runs next "
                f"({self.const('HALT')} once it has returned)",
            ),
            *self.field(
                "return_sp",
                "[batch] int32: how many return addresses each example has stacked; "
                "also the level at which its current call saves variables",
            ),
        ]
        for var in self.p.registers:
            for path, leaf, field in self.fields[var]:
                where = f"{_short(var)} of {_function_of(var)}"
                if _short(var) == "return":
                    where = f"the value {_function_of(var)} returns"
                body.extend(self.field(field, f"[batch{self.dims(leaf)}] {leaf.dtype.name}: {where}"))
        body.extend(self.field("overflow_at", "[batch] int32: block where an example overflowed a stack, or -1"))
        if self.checks_indices:
            body.extend(
                self.field(
                    "index_error_at",
                    "[batch] int32: the INDEX_LINES entry where an example indexed out of range or raised, or -1",
                )
            )
        state = self.named_tuple(self.state_type, body)
        if self.properties:
            state.body.append(comment("tuple-valued registers that blocks read, rebuilt from their fields"))
        for var, name in self.properties.items():
            prop = ast.parse(f"@property\ndef {name}(self):\n    return None").body[0]
            leaves = [_attr("self", field) for _, _, field in self.fields[var]]
            prop.body[0].value = self.rebuild(self.types[var], leaves)
            state.body.append(prop)
        return state

    def stacks_class(self):
        body = [
            ast.Expr(
                ast.Constant(
                    f"Stacks of `{self.entry}`: [depth, batch, ...] arrays, read by blocks "
                    "and written by the driver."
                )
            )
        ]
        for field, leaf in self.stack_fields():
            if leaf is None:
                body.extend(self.field(field, "[depth, batch] int32: return addresses (block indices)"))
            else:
                body.extend(self.field(field, f"[depth, batch{self.dims(leaf)}] {leaf.dtype.name}: saved {field}"))
        return self.named_tuple(self.stacks_type, body)

    @staticmethod
    def named_tuple(name, body):
        # black would wrap a field whose line is long into `name: (object  # doc)`
        body = [body[0], comment("fmt: off"), *body[1:], comment("fmt: on")]
        return ast.ClassDef(
            name=name,
            bases=[ast.Attribute(_name("typing"), "NamedTuple", ast.Load())],
            keywords=[],
            body=body,
            decorator_list=[],
            type_params=[],
        )

    @staticmethod
    def dims(leaf):
        return "".join(f", {d}" for d in leaf.shape)

    @staticmethod
    def field(name, doc):
        """`name: object  # doc`: a NamedTuple field, its shape and meaning on its line."""
        return [ast.AnnAssign(_name(name, True), _name("object"), None, 1), trailing_comment(doc)]
