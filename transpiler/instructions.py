"""The IR classes under the predecessor's module name (`auto_batching.instructions`).

    from transpiler import instructions
    op = instructions.PrimOp(["x"], "y", "x + 1")
    op.vars_in, op.vars_out, op.function(3), op.replace(vars_out="z")
"""

from transpiler.ir.instructions import (  # noqa: F401
    Block,
    Branch,
    Call,
    Function,
    Goto,
    IndirectGoto,
    LoweredProgram,
    Module,
    Move,
    Origin,
    Peek,
    Pop,
    PrimOp,
    Program,
    Push,
    PushBranch,
    PushGoto,
    Return,
    Select,
    pattern_names,
)
from transpiler.types import NONE, TensorType, TupleType, Type  # noqa: F401
