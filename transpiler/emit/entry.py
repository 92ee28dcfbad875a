"""The program function and the entry of one program.

`ProgramAndEntry` is a part of the program emitter
(transpiler/emit/program.py): the function that starts the loop state
from the arguments and runs the blocks (`rt.run`, or a stackless
function's own loop), and the entry that a call reaches through
`PROGRAMS`, with its docstring and the table of its argument leaves.
"""

from __future__ import annotations

import ast

from templates import program as program_templates
from transpiler import types as T
from transpiler.emit.syntax import (  # the emitters' shared builders
    _attr,
    _call,
    _index,
    _name,
    _safe,
    _short,
    _zeros,
)
from transpiler.emit.template import expand


class ProgramAndEntry:
    """The program function and the entry (a part of `_ProgramEmitter`)."""

    def param_leaves(self):
        """[(param var, leaf path, leaf type, field, argument name)] of main's params."""
        out, taken = [], set()
        for var in self.p.params:
            for path, leaf, field in self.fields[var]:
                name = _safe(_short(var) + field[len(var.replace(".", "_")):], taken)
                taken.add(name)
                out.append((var, path, leaf, field, name))
        return out

    def initial_state(self, pc):
        """Keywords of the loop state at the start: arguments in, zeros elsewhere."""
        by_field = {field: name for _, _, _, field, name in self.param_leaves()}
        initial = [
            ast.keyword("pc", pc),
            ast.keyword("return_sp", _zeros(["batch"], (), "int32")),
        ]
        for var in self.p.registers:
            for path, leaf, field in self.fields[var]:
                if field in by_field:
                    value = _name(by_field[field])
                else:
                    value = _zeros(["batch"], leaf.shape, leaf.dtype.name)
                initial.append(ast.keyword(field, value))
        minus_one = ast.BinOp(_zeros(["batch"], (), "int32"), ast.Sub(), ast.Constant(1))
        initial.append(ast.keyword("overflow_at", minus_one))
        if self.checks_indices:
            initial.append(ast.keyword("index_error_at", minus_one))
        return initial

    def error_lines(self):
        """What `errors()` values mean: block lines[, subscript lines]."""
        names = ["BLOCK_LINES"] + (["INDEX_LINES"] if self.checks_indices else [])
        return ast.Tuple([_name(self.const(n)) for n in names], ast.Load())

    def errors(self):
        """`(state.overflow_at, state.index_error_at)`: what stopped examples."""
        fields = ["overflow_at"] + (["index_error_at"] if self.checks_indices else [])
        return ast.Tuple([_attr("state", f) for f in fields], ast.Load())

    def result_leaves(self):
        return ast.Tuple(
            [_attr("state", field) for _, _, field in self.fields[self.p.result]], ast.Load()
        )

    def program_function(self):
        stacks = [
            ast.keyword(
                field,
                _zeros(
                    "stack_shape",
                    () if leaf is None else leaf.shape,
                    "int32" if leaf is None else leaf.dtype.name,
                ),
            )
            for field, leaf in self.stack_fields()
        ]
        return expand(
            program_templates.program_function,
            PROGRAM=f"{self.prefix}_program",
            LEAVES=[ast.arg(name) for *_, name in self.param_leaves()],
            FIRST=[_name(name) for *_, name in self.param_leaves()[:1]],
            STATE_TYPE=self.state_type,
            INITIAL=self.initial_state(_zeros(["batch"], (), "int32")),
            STACKS_TYPE=self.stacks_type,
            STACKS=stacks,
            BLOCKS=self.const("BLOCKS"),
            # rt.run's `looping`: () when no block loops on itself
            LOOPING=self.const("LOOPING_BLOCKS") if self.looping_blocks() else ast.Tuple([], ast.Load()),
            WRITES=self.const("WRITES"),
            RESULT=self.result_leaves(),
            ERRORS=self.errors(),
        )

    def stackless_program_function(self):
        # Examples not making this call start halted.
        start = _call("where", _name("active"), 0, _name(self.const("HALT")))
        return expand(
            program_templates.stackless_program_function,
            PROGRAM=f"{self.prefix}_program",
            LEAVES=[ast.arg(name) for *_, name in self.param_leaves()],
            FIRST=[_name(name) for *_, name in self.param_leaves()[:1]],
            STATE_TYPE=self.state_type,
            INITIAL=self.initial_state(_call("cast", start, "int32")),
            STACKS_TYPE=self.stacks_type,
            STACKS=[ast.keyword("returns", _zeros([1, "batch"], (), "int32"))],
            BLOCKS=self.const("BLOCKS"),
            RESULT=self.result_leaves(),
            ERRORS=self.errors(),
            NAME=ast.Constant(self.entry),
            ERROR_LINES=self.error_lines(),
            RECURSIVE=ast.Constant(self.stackless[1]),
        )

    def argument(self, var):
        """An entry's parameter as the program takes it: a parameter that is
        None in some examples is an Optional (`rt.optional_argument`)."""
        pattern = T.strong(self.types[var])
        if T.is_optional(pattern) and isinstance(pattern.elements[1], T.TensorType):
            return _call("optional_argument", _name(_short(var)), pattern.elements[1].dtype.name)
        if T.is_ragged(pattern):
            # a vector the recursion shortens: the caller's array, all of it,
            # in a capacity that holds every length the program meets
            capacity = T.capacity(pattern)
            return _call("ragged_argument", _name(_short(var)), None if isinstance(capacity, T.Size) else int(capacity))
        return _name(_short(var))

    def entry_function(self, stackless=False):
        leaves = self.param_leaves()
        main_params = [_short(v) for v in self.p.params]
        leaf_names = ast.Tuple(
            [
                ast.Constant(_short(var) + "".join(f"[{i}]" for i in path))
                for var, path, *_ in leaves
            ],
            ast.Load(),
        )
        leaf_values = ast.Tuple([_index(self.argument(var), path) for var, path, *_ in leaves], ast.Load())
        leaf_types = ast.Tuple(
            [
                ast.Tuple(
                    [
                        ast.Constant(leaf.dtype.name),
                        ast.Tuple(
                            [ast.Constant(d.symbol if isinstance(d, T.Size) else int(d)) for d in leaf.shape],
                            ast.Load(),
                        ),
                    ],
                    ast.Load(),
                )
                for _, _, leaf, _, _ in leaves
            ],
            ast.Load(),
        )
        result_pattern = self.types[self.p.result]
        n = len(self.fields[self.p.result])
        out = self.rebuild(
            result_pattern,
            [ast.Subscript(_name("result"), ast.Constant(k), ast.Load()) for k in range(n)],
        )
        signature = ", ".join(f"{_short(p)}: {T.strong(self.types[p])}" for p in self.p.params)
        entry = self.stackless[2] if stackless else self.prefix
        table = f"{entry.upper()}_ENTRY"
        mode = [ast.keyword("stackless", ast.Constant(True))]
        if stackless:
            doc = (
                f"Stackless batched `{self.entry}`: each function runs its own masked loop\n"
                "and calls its callees directly (the host's recursion is the stack).\n\n"
                f"Per example: {self.entry}({signature}) -> {self.types[self.p.result]}.\n"
                "`options`: those of rt.call; recursive programs run eagerly only.\n"
            )
        else:
            doc = (
                f"Batched `{self.entry}`: every argument has a leading batch dimension.\n\n"
                f"Per example: {self.entry}({signature}) -> {self.types[self.p.result]}.\n"
                "`options`: rt.call's keywords (max_stack_depth=15, xla=False, ...).\n"
            )
            mode = [ast.keyword("stack_bytes", _name(self.stack_bytes_name))]
            if self.checks_indices:
                mode.append(ast.keyword("index_lines", _name(self.const("INDEX_LINES"))))
        statements = expand(
            program_templates.entry_table,
            TABLE=table,
            NAME=ast.Constant(self.entry),
            LEAF_NAMES=leaf_names,
            LEAF_TYPES=leaf_types,
            PROGRAM=f"{self.prefix}_program",
            LINES=self.const("BLOCK_LINES"),
            MODE=mode,
        )
        return statements + expand(
            program_templates.entry_function,
            ENTRY=entry,
            TABLE=table,
            PARAMS=[ast.arg(p) for p in main_params],
            DOC=[ast.Expr(ast.Constant(doc))],
            LEAF_VALUES=leaf_values,
            OUT=out,
        )
