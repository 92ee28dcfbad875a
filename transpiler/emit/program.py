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

The emitter's parts: transpiler/emit/syntax.py (names and AST builders),
state.py (the state and stacks classes, sizes), entry.py (the program
function and the entry), block.py and block_end.py (one block function).
"""

from __future__ import annotations

import ast
import dataclasses
import keyword
from typing import Dict, List, Optional

from templates import program as program_templates
from transpiler import types as T
from transpiler.emit.block import _BlockBody
from transpiler.emit.entry import ProgramAndEntry
from transpiler.emit.state import StateDeclarations
from transpiler.emit.syntax import RESERVED, RUNTIME  # noqa: F401 (module.py names them here)
from transpiler.emit.syntax import (  # the emitters' shared builders
    _call,
    _field_name,
    _index_checks,
    _leaf_paths,
    _name,
    _safe,
    _short,
    _writes_table,
)
from transpiler.emit.template import comment, expand
from transpiler.ir import instructions as ir
from transpiler.passes import liveness


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


class _ProgramEmitter(StateDeclarations, ProgramAndEntry):
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
            statements.append(
                comment("per checked site (a subscript, an operation that can raise): its line (index_error_at)")
            )
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

    def looping_blocks(self):
        """Blocks that can jump to themselves and push nothing (no stack
        writes): the runtime may run one again at once while any example
        waits at it (a rotated loop body, repeated without a dispatch per
        trip).  Any order of blocks gives every example the same results;
        the exits may go back (a threaded outer test,
        passes/branch_threading.py: those examples wait, as they waited at
        the test's own block before)."""
        out = []
        for i, b in enumerate(self.p.blocks):
            t = b.terminator
            targets = liveness.successors(t) if isinstance(t, (ir.Goto, ir.Branch)) else ()
            pushes = any(isinstance(ins, ir.Push) for ins in b.instructions)
            if b.name in targets and not pushes:
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
