"""Emits one lowered program as Python statements (backend-neutral).

The statements call only the runtime helpers (`rt.select`, `rt.push`,
`rt.run`, ...) of autobatch_runtime's numpy_backend or tensorflow_backend,
which the module imports as `rt`, so the same code serves TensorFlow and
NumPy.  Names:

- state fields: `fib_n` for variable `n` of `fib`, `fib_return` for its
  return slot, `p_x` style suffixes for the leaves of tuple-valued
  variables; `return_sp`, the depth of each example's return stack, is
  also its *frame*: a call saves its live variables at that level of their
  stacks and its return block reads them back from there (a callee only
  works above it), so saved variables need no pointers of their own;
- the stacks live apart from the state (`stacks.fib_n`, `stacks.returns`):
  block functions only read them and return *writes* (one per stack at
  most), which the driver (`run`) applies after the block: under XLA, a
  scatter into the stack, in place in the loop that runs the block;
- inside a block function, the block's own variables keep their source names
  (`n`, `fib_1`), other functions' registers use their field names.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import keyword
from typing import Dict, List, Optional

from templates import program as program_templates
from transpiler import expression_helpers
from transpiler import types as T
from transpiler.emit.template import comment, expand, trailing_comment
from transpiler.ir import instructions as ir
from transpiler.passes import liveness, subscripts


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


def _index_checks(expr: str) -> bool:
    return any(_index_check(node) or _ragged_take(node) for node in ast.walk(ast.parse(expr, mode="eval")))


@dataclasses.dataclass
class EmittedProgram:
    statements: List[ast.stmt]
    block_listing: List[str]  # docstring lines: "block 3  examples/fib.py:11  ..."
    class_imports: List[type]  # namedtuple classes the code rebuilds


def emit(lowered: ir.LoweredProgram, prefix: str, entry: str, free_names: Dict[str, str]):
    return _ProgramEmitter(lowered, prefix, entry, free_names).emit()


@dataclasses.dataclass
class StacklessCallee:
    """How a stackless block calls another function's program directly."""

    program: str  # the callee's program function
    params: tuple  # its parameters' patterns
    result: object  # its return pattern


def emit_stackless(
    lowered: ir.LoweredProgram,
    prefix: str,
    entry: str,
    free_names: Dict[str, str],
    callees: Dict[str, StacklessCallee],
    recursive: bool,
    entry_name: Optional[str],
):
    """One function's stackless program (and, given `entry_name`, the entry)."""
    emitter = _ProgramEmitter(lowered, prefix, entry, free_names)
    emitter.stackless = (callees, recursive, entry_name)
    return emitter.emit()


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


class _ProgramEmitter:
    stackless = None  # (callees, recursive, with_entry) for a stackless program

    def __init__(self, lowered, prefix, entry, free_names):
        self.p = lowered
        self.prefix = prefix
        self.entry = entry
        self.free_names = free_names  # user free name -> module-level name
        self.types = dict(lowered.types)
        self.halt = len(lowered.blocks)
        self.index = {b.name: i for i, b in enumerate(lowered.blocks)}
        self.classes: List[type] = []
        self.fields: Dict[str, List[tuple]] = {}  # var -> [(path, leaf, field)]
        self.live_out = liveness.block_liveness(lowered)[1]  # block name -> registers
        self.block_writes: List[tuple] = []  # per block: (state fields, stacks) it writes
        taken = {"pc", "return_sp", "overflow_at", "index_error_at"}
        # Whether some block indexes by a per-example value (take, lookup,
        # put): then examples that index out of range stop and are reported.
        self.index_lines: List[str] = []  # the source line of each checked subscript
        self.checks_indices = any(
            _index_checks(ins.expr)
            for b in lowered.blocks
            for ins in b.instructions
            if isinstance(ins, ir.PrimOp)
        )
        for var in lowered.registers:
            base = var.replace(".", "_")
            leaves = []
            for path, leaf, suffix in _leaf_paths(self.types[var]):
                field = _safe(_field_name(base + suffix), taken)
                taken.add(field)
                leaves.append((path, leaf, field))
            self.fields[var] = leaves
            self.note_classes(self.types[var])
        # A block's own temporaries rebuild their classes too (a per-example
        # choice of two Ragged values: `t = v[i:] if c else v`).
        for var in sorted(self.types):
            if var not in lowered.registers and T.is_ragged(self.types[var]):
                self.note_classes(self.types[var])
        self.properties = self.rebuilt_registers(taken)  # var -> its State property

    def rebuilt_registers(self, taken):
        """The tuple-valued registers that two blocks or more read, each
        with the name of the State property that rebuilds it from its
        fields (`state.build_tree_return`: a Tree), so that those blocks
        read it in a line; other registers are rebuilt where read."""
        readers = {}
        for block in self.p.blocks:
            written, read = set(), set()
            for ins in block.instructions + (block.terminator,):
                read.update(v for v in liveness.uses(ins) if v not in written)
                written.update(liveness.defs(ins))
            for v in read:
                readers[v] = readers.get(v, 0) + 1
        out = {}
        for var in self.p.registers:
            name = var.replace(".", "_")
            if (
                readers.get(var, 0) >= 2
                and isinstance(self.types[var], T.TupleType)
                and name == _field_name(name)
                and name not in taken
                and not hasattr(tuple, name)
                and not keyword.iskeyword(name)
            ):
                out[var] = name
        return out

    def note_classes(self, pattern):
        if isinstance(pattern, T.TupleType):
            if pattern.cls not in (None, list) and pattern.cls not in self.classes:
                self.classes.append(pattern.cls)
            for e in pattern.elements:
                self.note_classes(e)

    # ---- names -----------------------------------------------------------

    @property
    def state_type(self):
        return "".join(part.capitalize() for part in self.prefix.split("_")) + "State"

    @property
    def stacks_type(self):
        return "".join(part.capitalize() for part in self.prefix.split("_")) + "Stacks"

    def stack_fields(self):
        """[(stack field, leaf type or None for return addresses)], in state order."""
        out = [("returns", None)]
        for var in self.p.registers:
            if var in self.p.stacks:
                out.extend((field, leaf) for _, leaf, field in self.fields[var])
        return out

    def const(self, what):
        return f"{self.prefix.upper()}_{what}"

    def rebuild(self, pattern, leaf_exprs):
        """An expression building a value of `pattern` from its leaf expressions."""
        leaf_exprs = list(leaf_exprs)

        def build(p):
            if isinstance(p, T.TensorType):
                return leaf_exprs.pop(0)
            if isinstance(p, T.TupleType):
                elements = [build(e) for e in p.elements]
                if p.cls is None:
                    return ast.Tuple(elements, ast.Load())
                if p.cls is list:
                    return ast.List(elements, ast.Load())
                return ast.Call(_name(p.cls.__name__), elements, [])
            return ast.Constant(None)

        return build(pattern)

    # ---- the module parts ------------------------------------------------

    def emit(self) -> EmittedProgram:
        statements = [comment("-" * 70), comment(self.title())]
        statements.append(self.state_class())
        statements.append(self.stacks_class())
        statements.append(
            ast.Assign([_name(self.const("HALT"), True)], ast.Constant(self.halt))
        )
        if self.stackless is None:
            statements.extend(self.stack_bytes())
        listing = []
        for i, block in enumerate(self.p.blocks):
            statements.extend(self.block_function(i, block))
            origin = block.origin
            where = f"{origin}  {origin.text}" if origin else ""
            listing.append(f"  block {i:<3} {where}")
        statements.append(
            ast.Assign(
                [_name(self.const("BLOCKS"), True)],
                ast.Tuple(
                    [_name(self.block_name(i)) for i in range(self.halt)], ast.Load()
                ),
            )
        )
        if self.stackless is None and self.looping_blocks():
            statements.append(comment("blocks that may run again at once: a loop body that tests itself"))
            statements.append(
                ast.Assign(
                    [_name(self.const("LOOPING_BLOCKS"), True)],
                    ast.Tuple([ast.Constant(i) for i in self.looping_blocks()], ast.Load()),
                )
            )
        if self.stackless is None:
            statements.append(
                comment(
                    "per block: the state fields it writes, then after | the stacks it writes "
                    "(under XLA a block's loop carries only these; it reads the others as they are)"
                )
            )
            statements.append(
                ast.Assign(
                    [_name(self.const("WRITES"), True)],
                    _writes_table(self.block_writes),
                )
            )
        statements.append(
            ast.Assign(
                [_name(self.const("BLOCK_LINES"), True)],
                ast.Tuple(
                    [ast.Constant(self.block_line(b)) for b in self.p.blocks], ast.Load()
                ),
            )
        )
        if self.checks_indices:
            statements.append(comment("per subscript that can be out of range: its line (index_error_at)"))
            statements.append(
                ast.Assign(
                    [_name(self.const("INDEX_LINES"), True)],
                    ast.Tuple([ast.Constant(line) for line in self.index_lines], ast.Load()),
                )
            )
        if self.stackless is None:
            statements.extend(self.program_function())
            statements.extend(self.entry_function())
        else:
            statements.extend(self.stackless_program_function())
            if self.stackless[2]:
                statements.extend(self.entry_function(stackless=True))
        return EmittedProgram(self.define_sizes(statements), listing, list(self.classes))

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

    def looping_blocks(self):
        """Blocks that can jump to themselves, push nothing (no stack writes)
        and otherwise jump forward (so while any example waits at one, it is
        the earliest pending block: the runtime's test of whether to repeat)."""
        out = []
        for i, b in enumerate(self.p.blocks):
            t = b.terminator
            targets = liveness.successors(t) if isinstance(t, (ir.Goto, ir.Branch)) else ()
            pushes = any(isinstance(ins, ir.Push) for ins in b.instructions)
            forward = all(self.index[target] >= i for target in targets)
            if b.name in targets and not pushes and forward:
                out.append(i)
        return out

    def title(self):
        params = ", ".join(
            f"{_short(p)}: {T.strong(self.types[p])}" for p in self.p.params
        )
        return f"{self.entry}({params}) -> {self.types[self.p.result]}"

    def block_name(self, i):
        return f"{self.prefix}_block_{i}"

    def block_line(self, block):
        origin = block.origin
        if origin is None:
            return f"in {block.function}"
        return f"in {block.function} at {origin}: {origin.text}"

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
                self.field("index_error_at", "[batch] int32: block where an example indexed out of range, or -1")
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

    # ---- blocks ----------------------------------------------------------

    def block_function(self, i, block):
        block_body = _BlockBody(self, i, block)
        body = block_body.statements()
        updates = body.pop()
        self.block_writes.append(([k.arg for k, _ in updates], list(block_body.stack_written)))
        masked = {k.arg: k.value for k, is_masked in updates if is_masked}
        if masked:
            # rt.select_fields: one `rt.select(active, new, state.<field>)` per field
            body.append(
                ast.Assign([_name("state", True)], _call("select_fields", _name("active"), _name("state"), **masked))
            )
        updates = [k for k, is_masked in updates if not is_masked]
        writes = block_body.write_keywords
        short = expand(program_templates.block_function, BLOCK="f", BODY=[], UPDATES=updates, WRITES=writes)
        text = ast.unparse(ast.fix_missing_locations(short[0].body[-1]))
        # a return black would split over lines: the state update its own statement
        template = program_templates.block_function if len(text) <= 80 else program_templates.block_function_long
        return expand(template, BLOCK=self.block_name(i), BODY=body, UPDATES=updates, WRITES=writes)

    # ---- program and entry -----------------------------------------------

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


class _BlockBody:
    """The statements of one block function."""

    def __init__(self, emitter: _ProgramEmitter, index: int, block: ir.Block):
        self.e = emitter
        self.index = index
        self.block = block
        self.out: List[ast.stmt] = []
        self.locals: Dict[str, str] = {}
        self.taken = set()
        self.stack_written: List[str] = []  # stacks this block writes (one write each)
        self.write_keywords: List[ast.keyword] = []  # rt.stack_writes's: returns=..., **saved_1
        self.return_moved = False  # whether it pushed or popped a return address
        self.overflows: List[str] = []
        self.overflow_name = "overflow"  # the [batch] bool of examples that overflowed (finish_terminator)
        self.faults: List[tuple] = []  # (local [batch] bool: examples indexing out of range, INDEX_LINES entry)
        self.written: List[str] = []
        self.going_mask = None  # the mask of examples going on, in a ReturnIf block
        self.masked: Dict[str, str] = {}  # written variable -> its field, masked early (early_masks)
        self.row_puts: Dict[int, str] = {}  # position -> variable whose put masks its rows (masked_puts)
        self.position = None  # of the instruction being emitted

    def local(self, var):
        if var not in self.locals:
            own = _function_of(var) == self.block.function and _short(var) != "return"
            base = _short(var) if own else var.replace(".", "_")
            name = _safe(base, self.taken)
            self.taken.add(name)
            self.locals[var] = name
        return self.locals[var]

    def statements(self):
        b = self.block
        if b.origin is not None:
            self.out.append(comment(f"{b.origin}  {b.origin.text}"))
        self.out.append(
            ast.Assign(
                [_name("active", True)],
                ast.Compare(_attr("state", "pc"), [ast.Eq()], [ast.Constant(self.index)]),
            )
        )
        self.load_inputs()
        line = b.origin.line if b.origin else None
        self.row_puts = self.masked_puts()
        early = self.early_masks()
        for position, ins in enumerate(b.instructions + (b.terminator,)):
            self.position = position
            origin = ins.origin
            if origin is not None and origin.line != line and not isinstance(
                ins, (ir.Pop, ir.Peek, ir.Move, ir.Push)
            ):
                # A new source line: quote it, so readers (and error notes) can map back.
                self.out.append(comment(f"{origin}  {origin.text}"))
                line = origin.line
            self.origin = origin or b.origin
            if ins is b.terminator:
                self.terminator(ins)
            else:
                self.instruction(ins)
            for var in early.get(position, ()):
                self.mask(var)
        self.out.append(self.updates())
        return self.out

    def early_masks(self):
        """Written variables that later instructions read, by the position of
        their last definition (instruction index in the block).

        Such a variable is masked where it is last defined rather than in the
        state update: the instructions after it then read the value the state
        will hold, which is the same for the examples at this block.  Masked at
        the end, XLA computed it twice per run, once masked for the state and
        once unmasked for the reader: Collatz's `x != 1` after `x = ...` (its
        loop trip took 1.5x as long).  Copies and constants stay unmasked:
        they cost nothing to read twice, and a constant folds into its reader.
        (Other examples' values are the state's junk, zeros among them: an
        integer divisor that differs per example is `divisor_or_one(d)`,
        passes/broadcast.py.)
        """
        body = self.block.instructions + (self.block.terminator,)
        last_def = {}  # var -> position of its last definition, if that computes it
        for position, ins in enumerate(body):
            computed = isinstance(ins, (ir.PrimOp, ir.Select)) and bool(ins.vars_in)
            for var in liveness.defs(ins):
                if computed:
                    last_def[var] = position
                else:
                    last_def.pop(var, None)  # a copy or a constant: nothing to compute twice
        early: Dict[int, List[str]] = {}
        for var, position in last_def.items():
            if var in self.row_puts.values():
                continue  # masked row by row in its put (masked_puts)
            if self.masked_write(var) is not None and any(
                var in liveness.uses(ins) for ins in body[position + 1 :]
            ):
                early.setdefault(position, []).append(var)
        return early

    def masked_puts(self):
        """Item assignments masked by the row they write: {position: var}.

        `v = put(v, items, x)`, the only definition of `v` in this block (so
        it reads the state's `v` and is what the state keeps), becomes
        `v = put(v, items, select(active, x, take(v, items)))`: an example
        not at this block writes its own row back (its junk index is
        clipped, as every read's), so `v` needs no `select` over the whole
        array.  For a buffer that a chain fills a row at a time
        (`draws[t] = x`, [batch, rows, dims]) the `select` would read and
        write every row of every example each time the block runs; the
        masked put touches [batch, dims].
        """
        body = self.block.instructions + (self.block.terminator,)
        definitions: Dict[str, List[int]] = {}
        for position, ins in enumerate(body):
            for var in liveness.defs(ins):
                definitions.setdefault(var, []).append(position)
        puts = {}
        for var, positions in definitions.items():
            ins = body[positions[0]]
            if (
                len(positions) == 1
                and isinstance(ins, ir.PrimOp)
                and ins.vars_out == var
                and not ins.cast_to
                and self.masked_write(var) is not None
                and _put_of(ins.expr, _short(var))
            ):
                puts[positions[0]] = var
        return puts

    def masked_write(self, var):
        """The state field of a one-leaf variable this block writes with a
        `select`, or None (a temporary, a tuple, a dead vector)."""
        leaves = self.e.fields.get(var, [])
        if len(leaves) != 1 or leaves[0][0] != ():
            return None
        _, leaf, field = leaves[0]
        if var not in self.e.live_out[self.block.name] and leaf.shape:
            return None
        return field

    def mask(self, var):
        """`var = select(active, var, state.<field>)`: from here on it holds its
        new value at this block's examples and the state's elsewhere."""
        field = self.masked_write(var)
        self.out.append(
            ast.Assign(
                [_name(self.local(var), True)],
                _call("select", _name("active"), _name(self.local(var)), _attr("state", field)),
            )
        )
        self.masked[var] = field

    def load_inputs(self):
        written = set()
        for ins in self.block.instructions + (self.block.terminator,):
            for v in liveness.uses(ins):
                if v not in written and v not in self.locals:
                    self.out.append(ast.Assign([_name(self.local(v), True)], self.load(v)))
            written.update(liveness.defs(ins))

    def load(self, var):
        if var in self.e.properties:
            return _attr("state", self.e.properties[var])
        pattern = self.e.types[var]
        leaves = [_attr("state", field) for _, _, field in self.e.fields.get(var, [])]
        return self.e.rebuild(pattern, leaves)

    def defined(self, var):
        if var not in self.written:
            self.written.append(var)

    def target(self, pattern):
        if isinstance(pattern, str) and pattern.startswith("*"):
            return ast.Starred(self.target(pattern[1:]), ast.Store())
        if isinstance(pattern, str):
            self.defined(pattern)
            return _name(self.local(pattern), True)
        return ast.Tuple([self.target(p) for p in pattern], ast.Store())

    def rename(self, expr, vars_in):
        tree = ast.parse(expr, mode="eval").body
        mapping = {_short(v): self.local(v) for v in vars_in}
        free = self.e.free_names

        class Renamer(ast.NodeTransformer):
            def visit_Name(self, node):
                if node.id in mapping:
                    return ast.copy_location(ast.Name(mapping[node.id], node.ctx), node)
                if node.id in free:
                    return ast.copy_location(ast.Name(free[node.id], node.ctx), node)
                if node.id in _EXPRESSION_HELPERS:
                    return ast.copy_location(_runtime(node.id), node)
                return node

        return Renamer().visit(tree)

    def instruction(self, ins):
        if isinstance(ins, ir.PrimOp):
            value = self.rename(ins.expr, ins.vars_in)
            self.check_indices(value)
            if ins.cast_to:
                value = _call("cast", value, ins.cast_to)
            if self.position in self.row_puts:
                array, items, new = value.args
                old = _call("take", copy.deepcopy(array), copy.deepcopy(items))
                value.args[2] = _call("select", _name("active"), new, old)
                self.masked[ins.vars_out] = self.masked_write(ins.vars_out)
            if ins.vars_out is None:
                self.out.append(ast.Expr(value))
            else:
                self.out.append(ast.Assign([self.target(ins.vars_out)], value))
        elif isinstance(ins, ir.Select):
            sides = [self.rename(e, ins.vars_in) for e in (ins.if_true, ins.if_false)]
            if ins.cast_to:
                sides = [_call("cast", side, ins.cast_to) for side in sides]
            condition = self.rename(ins.condition, ins.vars_in)
            pattern = self.e.types.get(ins.vars_out)
            if isinstance(pattern, T.TupleType):
                self.tuple_select(ins.vars_out, pattern, condition, sides)
                return
            self.out.append(
                ast.Assign([self.target(ins.vars_out)], _call("where", condition, *sides))
            )
        elif isinstance(ins, ir.Call):
            self.direct_call(ins)
        elif isinstance(ins, ir.Move):
            values = []
            for out, v in zip(ins.vars_out, ins.vars_in):
                value = _name(self.local(v))
                source, target = self.e.types.get(v), self.e.types.get(out)
                if (
                    isinstance(source, T.TensorType)
                    and isinstance(target, T.TensorType)
                    and source.dtype != target.dtype
                ):  # a literal's type met a stronger one: convert, as Python would
                    value = _call("cast", value, target.dtype.name)
                values.append(value)
            targets = [self.target(p) for p in ins.vars_out]
            pairs = [
                (t, v)
                for t, v in zip(targets, values)
                if not (isinstance(t, ast.Name) and isinstance(v, ast.Name) and t.id == v.id)
            ]
            read_later = [
                {n.id for v in values[k + 1 :] for n in ast.walk(v) if isinstance(n, ast.Name)}
                for k in range(len(values))
            ]
            together = ast.Assign(
                [_target(targets)],
                values[0] if len(values) == 1 else ast.Tuple(values, ast.Load()),
            )
            # black's lines for it: one, or the targets one a line and more
            text = ast.unparse(ast.fix_missing_locations(copy.deepcopy(together)))
            lines = 1 if len(text) <= 80 else len(targets) + 2
            if (
                len(pairs) < lines
                and all(isinstance(t, ast.Name) for t in targets)
                and all(t.id not in read_later[targets.index(t)] for t, _ in pairs)
            ):
                # one assignment a line, in order (none reads a name set before
                # it), less those of a name to itself
                self.out.extend(ast.Assign([t], v) for t, v in pairs)
                return
            self.out.append(together)
        elif isinstance(ins, ir.Push):
            values = {}
            for var in ins.variables:
                value = _name(self.local(var))
                for path, _, field in self.e.fields[var]:
                    values[field] = _index(value, path)
            self.save_all(values, self.going() if ins.going_only else None)
        elif isinstance(ins, (ir.Pop, ir.Peek)):
            for var in ins.variables:
                self.restore(var)
        else:
            raise TypeError(f"unexpected instruction {ins!r}")

    def check_indices(self, value):
        """`fault_1 = index_fault(active, v, (i,))` for each `take`, `lookup`
        and `put` in `value` that indexes by a per-example value: the active
        examples whose index is out of range stop at this block, and the
        entry raises IndexError (as each would on its own).  The index
        expressions are repeated (cheap, pure; XLA computes them once)."""
        for node in ast.walk(value):
            if _ragged_take(node):
                flag = f"fault_{len(self.faults) + 1}"
                self.faults.append((flag, len(self.e.index_lines)))
                origin = self.origin
                self.e.index_lines.append(
                    f"in {self.block.function} at {origin}: {origin.text}" if origin else f"in {self.block.function}"
                )
                arguments = [_name("active"), copy.deepcopy(node.args[0]), copy.deepcopy(node.args[1])]
                self.out.append(ast.Assign([_name(flag, True)], ast.Call(_runtime("ragged_fault"), arguments, [])))
            if _index_check(node):
                flag = f"fault_{len(self.faults) + 1}"
                self.faults.append((flag, len(self.e.index_lines)))
                origin = self.origin
                self.e.index_lines.append(
                    f"in {self.block.function} at {origin}: {origin.text}" if origin else f"in {self.block.function}"
                )
                arguments = [_name("active"), copy.deepcopy(node.args[0]), copy.deepcopy(node.args[1])]
                keywords = [ast.keyword("batched", ast.Constant(False))] if _helper(node.func) == "lookup" else []
                self.out.append(
                    ast.Assign([_name(flag, True)], ast.Call(_runtime("index_fault"), arguments, keywords))
                )

    def tuple_select(self, var, pattern, condition, sides):
        """A per-example choice between two tuples: one `where` per leaf."""
        names = []
        for label, value in zip(("chosen", "when_true", "when_false"), (condition, *sides)):
            if isinstance(value, ast.Name):
                names.append(value)
                continue
            name = _safe(label, self.taken)
            self.taken.add(name)
            self.out.append(ast.Assign([_name(name, True)], value))
            names.append(_name(name))
        chosen, when_true, when_false = names
        leaves = [
            _call("where", chosen, _index(when_true, path), _index(when_false, path))
            for path, _, _ in _leaf_paths(pattern)
        ]
        self.out.append(ast.Assign([self.target(var)], self.e.rebuild(pattern, leaves)))

    def direct_call(self, call):
        """Stackless: run the callee's own loop now, for the examples at this block."""
        callee = self.e.stackless[0][call.function]
        arguments = []
        for var, pattern in zip(call.vars_in, callee.params):
            value = _name(self.local(var))
            arguments += [_index(value, path) for path, _, _ in _leaf_paths(pattern)]
        arguments.append(_name("active"))
        result = _safe(f"{call.function}_result", self.taken)
        self.taken.add(result)
        self.out.append(ast.Assign([_name(result, True)], ast.Call(_name(callee.program), list(arguments), [])))
        if call.vars_out is None:
            return
        leaves = _leaf_paths(callee.result)
        value = self.e.rebuild(
            callee.result,
            [ast.Subscript(_name(result), ast.Constant(k), ast.Load()) for k in range(len(leaves))],
        )
        target_type = self.e.types.get(call.vars_out) if isinstance(call.vars_out, str) else None
        if (
            isinstance(target_type, T.TensorType)
            and isinstance(callee.result, T.TensorType)
            and target_type.dtype != callee.result.dtype
        ):
            value = _call("cast", value, target_type.dtype.name)
        self.out.append(ast.Assign([self.target(call.vars_out)], value))

    def return_pointer(self):
        """The return stack's pointer: a local once this block moved it."""
        return _name("return_sp") if self.return_moved else _attr("state", "return_sp")

    def going(self):
        """The mask of the examples that do not return, in a `ReturnIf` block."""
        t = self.block.terminator
        if self.going_mask is None:
            self.going_mask = self.unless(
                "going", "the examples that go on (the others return)", t.condition, t.returns_when
            )
        return self.going_mask

    def unless(self, name, note, condition, when, mask=None):
        """A new local: `mask` (default: active) where `condition` is not `when`."""
        local = _safe(name, self.taken)
        self.taken.add(local)
        sides = (ast.Constant(False), mask or _name("active"))
        if not when:
            sides = sides[::-1]
        self.out.append(comment(note))
        self.out.append(
            ast.Assign([_name(local, True)], _call("where", _name(self.local(condition)), *sides))
        )
        return _name(local)

    def written_stack(self, field):
        if field in self.stack_written:
            raise AssertionError(f"two pushes on stack {field} in one block")
        self.stack_written.append(field)

    def overflow_flag(self):
        flag = f"overflow_{len(self.overflows) + 1}"
        self.overflows.append(flag)
        return flag

    def push(self, field, value, mask=None):
        """A return address onto `returns`."""
        assert field == "returns", field
        self.written_stack(field)
        flag = self.overflow_flag()
        targets = [_name("return_sp", True), _name("returns_write", True), _name(flag, True)]
        value = _call("push", _attr("stacks", field), self.return_pointer(), value, mask or _name("active"))
        self.return_moved = True
        self.out.append(ast.Assign([_target(targets)], value))
        self.write_keywords.append(ast.keyword("returns", _name("returns_write")))

    def save_all(self, values, mask=None):
        """Saved variables into their frame slots: `saved_1, overflow_1 =
        rt.save_all(stacks, state.return_sp, active, fib_n=n, ...)`, the
        frame being return_sp as the block found it (see the module docstring)."""
        if not values:
            return
        for field in values:
            self.written_stack(field)
        saved = _safe(f"saved_{len(self.overflows) + 1}", self.taken)
        self.taken.add(saved)
        flag = self.overflow_flag()
        value = _call("save_all", _name("stacks"), _attr("state", "return_sp"), mask or _name("active"), **values)
        self.out.append(ast.Assign([_target([_name(saved, True), _name(flag, True)])], value))
        self.write_keywords.append(ast.keyword(None, _name(saved)))

    def restore(self, var):
        """`var` as its call site saved it: its slot in the frame (`return_sp`).

        A pop and a peek read the same slot; a peek's value stays there for
        the block's next call, which saves nothing again.  Only a bare
        tensor is its own leaf: a tuple, one-leaf ones too (`(x,)`,
        `(x, None)`), is rebuilt from one read per leaf.
        """
        frame = _attr("state", "return_sp")
        reads = [_call("read", _attr("stacks", field), frame) for _, _, field in self.e.fields[var]]
        bare = isinstance(self.e.types[var], T.TensorType)
        value = reads[0] if bare else self.e.rebuild(self.e.types[var], reads)
        self.defined(var)
        self.out.append(ast.Assign([_name(self.local(var), True)], value))

    def terminator(self, t):
        if isinstance(t, ir.ReturnIf):
            self.return_if(t)
        else:
            self.transfer(t)
        self.finish_terminator()

    def return_if(self, t):
        """The returning examples pop their return address; the others go on."""
        going = self.going()
        returned = _safe("returned_pc", self.taken)
        self.taken.add(returned)
        self.pop_return(returned, _call("where", going, False, _name("active")))
        self.transfer(t.otherwise, mask=going)
        self.out.append(
            ast.Assign([_name("pc", True)], _call("where", going, _name("pc"), _name(returned)))
        )

    def transfer(self, t, mask=None):
        """`pc = ...` for a plain terminator; `mask` limits its push (default: active)."""
        pc = _name("pc", True)
        if isinstance(t, ir.Goto):
            self.out.append(ast.Assign([pc], ast.Constant(self.e.index[t.target])))
        elif isinstance(t, (ir.Branch, ir.PushBranch)):
            if isinstance(t, ir.PushBranch):
                if t.returned_when is not None:
                    mask = self.calling(t, mask)
                self.push("returns", ast.Constant(self.e.index[t.return_block]), mask)
            self.out.append(
                ast.Assign(
                    [pc],
                    _call(
                        "choose",
                        _name(self.local(t.condition)),
                        self.e.index[t.true_target],
                        self.e.index[t.false_target],
                    ),
                )
            )
        elif isinstance(t, ir.PushGoto):
            self.push("returns", ast.Constant(self.e.index[t.return_block]), mask)
            self.out.append(ast.Assign([pc], ast.Constant(self.e.index[t.target])))
        elif isinstance(t, ir.IndirectGoto):
            self.pop_return("pc", _name("active"))
        else:
            raise TypeError(f"unexpected terminator {t!r}")

    def calling(self, t, mask):
        """The examples that enter the callee of a `PushBranch` whose other
        examples returned at the call site (`returned_when`)."""
        note = "the examples that enter the call (the others returned here)"
        return self.unless("calling", note, t.condition, t.returned_when, mask)

    def pop_return(self, target, mask):
        """`target, return_sp = pop_return(...)`: the return address, for `mask`."""
        self.out.append(
            ast.Assign(
                [_target([_name(target, True), _name("return_sp", True)])],
                _call(
                    "pop_return",
                    _attr("stacks", "returns"),
                    self.return_pointer(),
                    mask,
                    _name(self.e.const("HALT")),
                ),
            )
        )
        self.return_moved = True

    def finish_terminator(self):
        pc = _name("pc", True)
        self.out.append(
            ast.Assign([pc], _call("select", _name("active"), _name("pc"), _attr("state", "pc")))
        )
        stops = (
            ("overflow", self.overflows, "examples whose stack is full stop here; the caller raises"),
            ("fault", [f for f, _ in self.faults], "examples that indexed out of range stop here; the caller raises"),
        )
        for kind, flags, note in stops:
            if not flags:
                continue
            self.out.append(comment(note))
            name = flags[0]  # one flag: as it is, no `overflow = overflow_1`
            if len(flags) > 1:
                name = kind
                any_flag = _name(flags[0])
                for f in flags[1:]:
                    any_flag = ast.BinOp(any_flag, ast.BitOr(), _name(f))
                self.out.append(ast.Assign([_name(name, True)], any_flag))
            if kind == "overflow":
                self.overflow_name = name
            self.out.append(
                ast.Assign([pc], _call("select", _name(name), _name(self.e.const("HALT")), _name("pc")))
            )

    def updates(self):
        """[(keyword of the state update, whether it is masked by `active`)]."""
        keywords = [(ast.keyword("pc", _name("pc")), False)]
        for var in self.written:
            if var not in self.e.fields:
                continue  # a temporary: lives only in this block
            value = _name(self.local(var))
            if var in self.masked:
                keywords.append((ast.keyword(self.masked[var], value), False))
                continue
            dead = var not in self.e.live_out[self.block.name]
            for path, leaf, field in self.e.fields[var]:
                if dead and leaf.shape:
                    # No later block reads it: skip a [batch, *event] select.
                    # Dead scalars keep their writes: dropping those too made
                    # XLA copy the stacks inside the loop (NUTS 15 -> 55 us
                    # per gradient, measured with the switch_case runtime).
                    continue
                keywords.append((ast.keyword(field, _index(value, path)), True))
        if self.return_moved:
            keywords.append((ast.keyword("return_sp", _name("return_sp")), False))
        if self.overflows:
            keywords.append(
                (
                    ast.keyword(
                        "overflow_at",
                        _call("select", _name(self.overflow_name), self.index, _attr("state", "overflow_at")),
                    ),
                    False,
                )
            )
        if self.faults:
            # the first subscript an example failed at (each has its INDEX_LINES entry)
            where = _attr("state", "index_error_at")
            for flag, site in reversed(self.faults):
                where = _call("select", _name(flag), site, where)
            keywords.append((ast.keyword("index_error_at", where), False))
        return keywords
