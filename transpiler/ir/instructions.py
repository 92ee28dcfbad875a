"""The intermediate representation: programs of functions of basic blocks.

Everything is a frozen dataclass, so passes build new programs instead of
mutating old ones, and programs compare and print deterministically
(`program_text`, at the end, is the printed form).

Variable *patterns* name where values go: a string (one variable) or a tuple of
patterns (destructuring, `a, (b, c) = ...`).

Before lowering, a function's blocks hold `PrimOp` and `Call` instructions and
end in `Goto`, `Branch` or `Return`; variable names are the function's own.
Lowering (passes/lowering.py) turns calls and returns into explicit stack
traffic (`Push`, `Pop`, `Peek`, `Move`, `PushGoto`, `PushBranch`, `IndirectGoto`,
`ReturnIf`) over
variables qualified by their function (`fib.n`), and flattens all functions
into one list of blocks that a single program counter walks.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Tuple, Union

Pattern = Union[str, Tuple["Pattern", ...]]  # "*rest" marks a starred target


def pattern_names(pattern) -> Tuple[str, ...]:
    """Every variable name in a pattern, left to right (`*rest` gives `rest`)."""
    if pattern is None:
        return ()
    if isinstance(pattern, str):
        return (pattern.lstrip("*"),)
    return tuple(name for p in pattern for name in pattern_names(p))


def map_pattern(fn, pattern):
    """The pattern with every name replaced by `fn(name)`."""
    if pattern is None:
        return None
    if isinstance(pattern, str):
        if pattern.startswith("*"):
            return "*" + fn(pattern[1:])
        return fn(pattern)
    return tuple(map_pattern(fn, p) for p in pattern)


@dataclasses.dataclass(frozen=True)
class Origin:
    """Where in the user's source an instruction came from."""

    filename: str  # as Python knows it (absolute); used in SyntaxErrors
    path: str  # relative to the project root; used in generated code
    line: int
    col: int
    text: str  # the source line, stripped

    def __str__(self):
        return f"{self.path}:{self.line}"


# ---- instructions (before and after lowering) -----------------------------


@dataclasses.dataclass(frozen=True, init=False)
class PrimOp:
    """An already-batched computation: `vars_out = expr(vars_in)`.

    `expr` is Python source over the names in `vars_in` (and free names of the
    user's module); it sees whole batches and may compute junk in lanes that
    are not at this instruction.  `skip_push_mask` is kept for the
    predecessor's API; this compiler saves variables at call sites instead.

    The constructor takes the predecessor's positional order,
    `PrimOp(vars_in, vars_out, function, skip_push_mask)`, where `function`
    is either a callable (the predecessor's form: code that builds its own
    instructions) or the expression's source (what the builder makes from
    your function).  `op.function` is a callable either way.
    """

    vars_in: Tuple[str, ...]
    vars_out: Pattern
    expr: Any  # source text, or a callable given by hand
    skip_push_mask: frozenset = frozenset()
    origin: Optional[Origin] = None
    cast_to: Optional[str] = None  # dtype name when a literal's weak type was widened
    namespace: Optional[dict] = dataclasses.field(default=None, compare=False, repr=False)

    def __init__(
        self,
        vars_in,
        vars_out,
        function=None,
        skip_push_mask=None,
        origin=None,
        cast_to=None,
        namespace=None,
        *,
        expr=None,
    ):
        if expr is None:
            expr = function
        if expr is None:
            raise TypeError("PrimOp needs a function (a callable or an expression's source)")
        object.__setattr__(self, "vars_in", vars_in)
        object.__setattr__(self, "vars_out", vars_out)
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "skip_push_mask", frozenset(skip_push_mask or ()))
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "cast_to", cast_to)
        object.__setattr__(self, "namespace", namespace)

    def replace(self, vars_out=None) -> "PrimOp":
        return dataclasses.replace(
            self, vars_out=self.vars_out if vars_out is None else vars_out
        )

    @property
    def function(self):
        """The primitive as a callable of `vars_in` (the predecessor's `function`)."""
        if callable(self.expr):
            return self.expr
        names, expr, namespace = self.vars_in, self.expr, self.namespace or {}
        code = compile(expr, self.origin.filename if self.origin else "<primop>", "eval")

        def primitive(*args):
            return eval(code, namespace, dict(zip(names, args)))  # noqa: S307

        primitive.__name__ = f"primop({expr})"
        return primitive


@dataclasses.dataclass(frozen=True)
class Select:
    """Per example: `vars_out = if_true if condition else if_false`.

    The three are Python expressions over `vars_in` (no batched calls);
    batched code computes both sides for the whole batch and picks per
    example (`where`), the reference interpreter evaluates only one side.
    `cast_to` names the dtype both sides are converted to.
    """

    vars_in: Tuple[str, ...]
    vars_out: str
    condition: str
    if_true: str
    if_false: str
    origin: Optional[Origin] = None
    cast_to: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Call:
    """A call of a batched function: `vars_out = function(*vars_in)`."""

    function: str
    vars_in: Tuple[str, ...]
    vars_out: Pattern
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class Move:
    """Simultaneous copy `vars_out = vars_in` (argument passing, results)."""

    vars_out: Tuple[Pattern, ...]
    vars_in: Tuple[str, ...]
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class Push:
    """Save the current values of `variables` on their own stacks.

    `going_only`: in a block ending in `ReturnIf`, only the examples that do
    not return push (the others leave their stacks alone).
    """

    variables: Tuple[str, ...]
    origin: Optional[Origin] = None
    going_only: bool = False


@dataclasses.dataclass(frozen=True)
class Pop:
    """Restore `variables` from the tops of their stacks, shrinking them."""

    variables: Tuple[str, ...]
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class Peek:
    """Read `variables` from the tops of their stacks, leaving them there.

    What a `Pop` followed by a `Push` of the same unchanged values fuses into.
    """

    variables: Tuple[str, ...]
    origin: Optional[Origin] = None


# ---- terminators ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Goto:
    target: str
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class Branch:
    """Per example: go to `true_target` where `condition` holds, else `false_target`.

    A target is a block's name or, once passes/branch_threading.py has run,
    a `Branch` of its own: the test of the block it led to, taken at once.
    """

    condition: str
    true_target: Union[str, "Branch"]
    false_target: Union[str, "Branch"]
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class Return:
    """Return the value of `value` (a pattern; None returns `None`)."""

    value: Optional[Pattern]
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class PushGoto:
    """Call: push `return_block` on the return-address stack, go to `target`."""

    return_block: str
    target: str
    caller: str  # the calling function, for overflow messages
    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class PushBranch:
    """Call with the callee's entry test done at the call site.

    Push `return_block` on the return-address stack, then go to
    `true_target` or `false_target` by `condition`: what `PushGoto` to an
    entry block that only tests its arguments would do one loop iteration
    later (see passes/control.thread_entry_tests).  With `returned_when`
    set, only the examples that do not return at once push.
    """

    return_block: str
    condition: str
    true_target: str
    false_target: str
    caller: str  # the calling function, for overflow messages
    origin: Optional[Origin] = None
    # Set by passes/control.return_at_call_sites: the examples whose
    # `condition` is `returned_when` took an entry arm that only returns, and
    # that arm's instructions already ran at the call site; they push nothing
    # and go straight to `return_block` (their target).  None: all push.
    returned_when: Optional[bool] = None


@dataclasses.dataclass(frozen=True)
class IndirectGoto:
    """Return: pop a block from the return-address stack (halt when empty)."""

    origin: Optional[Origin] = None


@dataclasses.dataclass(frozen=True)
class ReturnIf:
    """Examples whose `condition` is `returns_when` return (as `IndirectGoto`);
    the others go on with `otherwise` (a `Goto`, `Branch`, `PushGoto` or
    `PushBranch`).

    What a branch to a block that only returns and a block that goes on
    would do in two loop iterations (see passes/control.merge_early_returns).
    """

    condition: str
    otherwise: "Terminator"
    returns_when: bool = True
    origin: Optional[Origin] = None


Instruction = Union[PrimOp, Select, Call, Move, Push, Pop, Peek]
Terminator = Union[Goto, Branch, Return, PushGoto, PushBranch, IndirectGoto, ReturnIf]


# ---- containers -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Block:
    name: str
    instructions: Tuple[Instruction, ...]
    terminator: Terminator
    origin: Optional[Origin] = None  # the source line the block starts at
    function: str = ""  # the function the block belongs to


@dataclasses.dataclass(frozen=True)
class Function:
    """One decorated function: parameters and a CFG whose first block is the entry."""

    name: str
    params: Tuple[str, ...]
    blocks: Tuple[Block, ...]
    origin: Optional[Origin] = None
    free_names: Tuple[str, ...] = ()  # globals and closure names its primops read

    @property
    def entry(self) -> str:
        return self.blocks[0].name

    def block(self, name) -> Block:
        for b in self.blocks:
            if b.name == name:
                return b
        raise KeyError(name)


@dataclasses.dataclass(frozen=True)
class Module:
    """All the functions of a Context (the predecessor's `instructions.Module`)."""

    functions: Tuple[Function, ...]

    def program(self, main: str) -> "Program":
        """The functions reachable from `main`, main first, in call order."""
        by_name = {f.name: f for f in self.functions}
        if main not in by_name:
            raise ValueError(f"{main!r} is not a function of this module")
        order, queue = [], [main]
        while queue:
            name = queue.pop(0)
            if name in order:
                continue
            order.append(name)
            for block in by_name[name].blocks:
                for ins in block.instructions:
                    if isinstance(ins, Call) and ins.function not in order:
                        queue.append(ins.function)
        return Program(tuple(by_name[n] for n in order), main)

    def __str__(self):
        return "\n".join(program_text(Program((f,), f.name)) for f in self.functions)


@dataclasses.dataclass(frozen=True)
class Program:
    """Functions reachable from `main`, main first.

    `types` maps qualified variable names (`"fib.n"`) to patterns once type
    inference has run; `returns` maps function names to their return patterns.
    """

    functions: Tuple[Function, ...]
    main: str
    types: Optional[Tuple[Tuple[str, object], ...]] = None
    returns: Optional[Tuple[Tuple[str, object], ...]] = None

    def function(self, name) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def type_of(self, qualified_name):
        return dict(self.types)[qualified_name]

    def __str__(self):
        return program_text(self)


@dataclasses.dataclass(frozen=True)
class LoweredProgram:
    """One flat list of blocks walked by a per-example program counter.

    Variables are qualified (`fib.n`); `registers` are those kept in the loop
    state between blocks, `stacks` those that are also saved on a stack,
    `types` gives every variable's pattern, `entry` the first block of main and
    `result` the variable holding main's return value.
    """

    blocks: Tuple[Block, ...]
    main: str
    params: Tuple[str, ...]
    result: str
    types: Tuple[Tuple[str, object], ...]
    registers: Tuple[str, ...]
    stacks: Tuple[str, ...]
    functions: Tuple[str, ...]

    def __str__(self):
        return program_text(self)

    def index(self, block_name) -> int:
        for i, b in enumerate(self.blocks):
            if b.name == block_name:
                return i
        raise KeyError(block_name)


def qualify(function: str, var: str) -> str:
    return f"{function}.{var}"


def return_slot(function: str) -> str:
    return f"{function}.return"


# The deterministic text form of programs (for tests, review, debugging):
# here with the classes it prints, which use it for __str__.
def _pattern_text(p) -> str:
    if p is None:
        return "_"
    if isinstance(p, str):
        return p
    return "(" + ", ".join(_pattern_text(x) for x in p) + ("," if len(p) == 1 else "") + ")"


def instruction_text(ins) -> str:
    if isinstance(ins, PrimOp):
        cast = f"  # cast to {ins.cast_to}" if ins.cast_to else ""
        return f"{_pattern_text(ins.vars_out)} = {ins.expr}{cast}"
    if isinstance(ins, Select):
        cast = f"  # cast to {ins.cast_to}" if ins.cast_to else ""
        return (
            f"{ins.vars_out} = select {ins.condition} ? {ins.if_true} : {ins.if_false}{cast}"
        )
    if isinstance(ins, Call):
        return f"{_pattern_text(ins.vars_out)} = call {ins.function}({', '.join(ins.vars_in)})"
    if isinstance(ins, Move):
        outs = ", ".join(_pattern_text(p) for p in ins.vars_out)
        return f"{outs} = move {', '.join(ins.vars_in)}"
    if isinstance(ins, Push):
        only = " (examples going on)" if ins.going_only else ""
        return f"push {', '.join(ins.variables)}{only}"
    if isinstance(ins, Pop):
        return f"pop {', '.join(ins.variables)}"
    if isinstance(ins, Peek):
        return f"peek {', '.join(ins.variables)}"
    if isinstance(ins, Goto):
        return f"goto {ins.target}"
    if isinstance(ins, Branch):
        return f"branch {ins.condition} ? {ins.true_target} : {ins.false_target}"
    if isinstance(ins, Return):
        return f"return {_pattern_text(ins.value)}"
    if isinstance(ins, PushGoto):
        return f"push-goto {ins.target} returning to {ins.return_block}"
    if isinstance(ins, PushBranch):
        only = ""
        if ins.returned_when is not None:
            test = f"not {ins.condition}" if ins.returned_when else ins.condition
            only = f" (pushed where {test}; the others returned here)"
        return (
            f"push-branch {ins.condition} ? {ins.true_target} : {ins.false_target}"
            f" returning to {ins.return_block}{only}"
        )
    if isinstance(ins, ReturnIf):
        test = ins.condition if ins.returns_when else f"not {ins.condition}"
        return f"return (indirect goto) if {test}, else {instruction_text(ins.otherwise)}"
    if isinstance(ins, IndirectGoto):
        return "return (indirect goto)"
    raise TypeError(ins)


def block_text(b: Block) -> str:
    where = f"  # {b.origin}  {b.origin.text}" if b.origin else ""
    lines = [f"  {b.name}:{where}"]
    lines += [f"    {instruction_text(i)}" for i in b.instructions]
    lines.append(f"    {instruction_text(b.terminator)}")
    return "\n".join(lines)


def program_text(p) -> str:
    if isinstance(p, LoweredProgram):
        types = dict(p.types)
        head = [f"lowered program {p.main}({', '.join(p.params)}) -> {p.result}"]
        for name in p.registers:
            kind = "stack" if name in p.stacks else "register"
            head.append(f"  {kind} {name}: {types.get(name, '?')}")
        return "\n".join(head + [block_text(b) for b in p.blocks]) + "\n"
    types = dict(p.types or ())
    out = [f"program main={p.main}"]
    for fn in p.functions:
        params = ", ".join(
            f"{x}: {types[qualify(fn.name, x)]}" if types else x for x in fn.params
        )
        ret = dict(p.returns or ()).get(fn.name)
        out.append(f"def {fn.name}({params})" + (f" -> {ret}" if ret else "") + ":")
        out += [block_text(b) for b in fn.blocks]
    return "\n".join(out) + "\n"
