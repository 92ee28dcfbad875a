"""The compiler, top to bottom: every stage in order, one call each.

    source -> fence -> canonicalize + build IR       (build_program)
    -> copy-in/copy-out -> type inference               (infer_types)
    -> lowering -> fusion -> allocation                 (lower_program)
    -> emit module text                                 (emit_module)

Ordering constraints: the fence runs before anything else so no user code
runs on unsupported input; copy-in/copy-out (passes/inplace.py) needs the
whole program (whether a callee changes its caller's array is a fixpoint
over the call graph) and runs before type inference, since it changes what
functions return and what calls bind; its refusals that depend on whether a
value is an array or a number (`row = m[i]`) wait for the types, right after
inference; type inference needs the whole program (calls
carry types between functions); lowering needs types (tail calls may only
share a return slot when return types agree); pop/push fusion must follow
block fusion (which puts pops and pushes into the same block); if-conversion
and loop rotation come after the first block fusion (arms must be whole
blocks); allocation comes last because it depends on the final blocks.
"""

from __future__ import annotations

import inspect
from typing import Callable, Dict, Mapping, Optional

from transpiler.emit import module as module_emitter
from transpiler.frontend import fence
from transpiler.frontend import source as frontend
from transpiler.ir import builder
from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir import instructions as ir
from transpiler.passes import allocation, branch_threading, control, fusion, inplace, lowering, type_inference, unbound


def build_function(fn: Callable, batched: Mapping[str, Callable], root=None):
    """Stages 1-4 for one function: (IR function, its source, its namespace)."""
    source = frontend.load(fn, root)
    fence.check(source, batched.keys())
    params = {name: parameters(f) if f is fn else _names_only(f) for name, f in batched.items()}
    function = unbound.check_bound(builder.build(source, params))
    namespace = dict(source.globals)
    namespace.update(source.closure)
    return function, source, namespace


def build_program(main: str, built: Mapping[str, ir.Function]) -> ir.Program:
    """The functions reachable from `main`, main first, in call order."""
    return ir.Module(tuple(built.values())).program(main)


def infer_types(
    program: ir.Program,
    signature,
    backend,
    namespaces: Dict[str, dict],
    overrides: Optional[Dict[str, Callable]] = None,
) -> ir.Program:
    # Callees that assign items of their array parameters hand the arrays
    # back to their callers (Python's effect); this changes return types, so
    # it comes first, and its type-dependent refusals come right after.
    rewritten = inplace.copy_in_copy_out(program)
    typed = type_inference.infer(
        rewritten.program,
        signature,
        backend,
        rewritten.namespaces(namespaces),
        rewritten.overrides(overrides),
    )
    rewritten.check(typed)
    return typed


def lower_program(typed: ir.Program) -> ir.LoweredProgram:
    lowered = lowering.lower(typed)
    lowered = fusion.fuse_blocks(lowered)
    # If-conversion needs arms fused first; rotation works on converted loop
    # bodies; both leave straight-line runs that fuse again.
    lowered = control.if_convert(lowered)
    lowered = fusion.fuse_blocks(lowered)
    lowered = control.rotate_loops(lowered)
    lowered = control.thread_entry_tests(lowered)
    lowered = control.return_at_call_sites(lowered)
    lowered = fusion.fuse_blocks(lowered)
    lowered = fusion.fuse_pop_push(lowered)
    lowered = control.merge_early_returns(lowered)
    lowered = branch_threading.thread_branch_tests(lowered)
    return allocation.allocate(lowered)


def lower_stackless(typed: ir.Program):
    """Stackless mode: each reachable function as its own masked loop."""
    from transpiler.passes import stackless

    types = dict(typed.types)
    return {
        f.name: stackless.lower_function(typed, f.name)
        for f in typed.functions
        if all(ir.qualify(f.name, p) in types for p in f.params)
    }


def emit_module(source_path, backend, specs, source_hash, functions, inputs_hash="") -> str:
    return module_emitter.generate(
        source_path, backend, specs, source_hash, functions, inputs_hash
    )


def _names_only(fn):
    """Another function's parameters, for calls to it; its own build checks
    its defaults (a bad default there must not break this function)."""
    try:
        return parameters(fn)
    except UnsupportedSyntaxError:
        return [(name, builder.NO_DEFAULT) for name in inspect.signature(inspect.unwrap(fn)).parameters]


def parameters(fn):
    """[(name, default or NO_DEFAULT)] of a batched function's parameters.

    Defaults must be literals (numbers, strings, None, tuples of them): a
    call that leaves one out gets the literal, exactly as Python would.
    """
    import ast as python_ast

    from transpiler.frontend.source import load

    out = []
    for p in inspect.signature(inspect.unwrap(fn)).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue  # the fence rejects *args, **kwargs and keyword-only
        if p.default is p.empty:
            out.append((p.name, builder.NO_DEFAULT))
            continue
        try:
            literal = python_ast.literal_eval(repr(p.default)) == p.default
        except (ValueError, SyntaxError):
            literal = False
        if not literal:
            from transpiler.errors import UnsupportedSyntaxError

            source = load(fn)
            raise UnsupportedSyntaxError(
                f"the default value of parameter {p.name!r} is not a literal "
                f"in batched function {fn.__name__!r}",
                source.node.origin,
                "use a number, string, None or a tuple of them as the default",
            )
        out.append((p.name, p.default))
    return out
