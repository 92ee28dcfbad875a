"""One program, compiled: the compiler run for a Context's functions, memoized.

Stages 1-5 (transpiler/pipeline.py, imported only here and only when a
program must be built) for an entry at a signature, and the predecessor's
inspection API over the same memos (`program`, `program_compiled`,
`program_lowered`).  The memos live on the Context (`_built_cache`,
`_compiled`, `_program_cache`), so that a redefinition (`forget`) and a
test can drop them.
"""

from __future__ import annotations

import dataclasses

from transpiler import backends as B
from transpiler import types as T
from transpiler.build import declarations, function_texts
from transpiler.errors import UnsupportedSyntaxError


def forget(ctx):
    """Drops what was compiled from the Context's functions (a function was
    redefined: everything built from the old one is stale)."""
    for memo in ("_built_cache", "_program_cache", "_compiled"):
        ctx.__dict__.pop(memo, None)


def compile_program(ctx, entry, signature, backend, root, mode=""):
    """Stages 1-5 for one program; returns an emit.module.ProgramSpec.

    A signature with symbolic sizes compiles twice, at two sets of probe
    values, and must give the same program (transpiler/sizes.py).
    """
    # A module is rebuilt whole each time a call adds a program to it
    # (a Context's own folder keeps what earlier calls built): its other
    # programs come from this memo instead of compiling again.  The key
    # holds what the program is compiled from: the entry, the signature,
    # the backend, the mode, the project root, the Context's definitions,
    # and the text (`function_texts.function_text`: source, batched callees,
    # type_inference=, the kinds of closed-over values) of every function
    # it reaches.
    try:
        texts = tuple(function_texts.function_text(ctx, f) for f in built_functions(ctx, root, entry))
    except Exception:  # noqa: BLE001 - the build below raises it as it always has
        texts = None
    memo = ctx.__dict__.setdefault("_compiled", {})
    key = (entry, signature, backend.name, mode, ctx._definitions, root, texts)
    if texts is not None and key in memo:
        return memo[key]
    spec = _compile_uncached(ctx, entry, signature, backend, root, mode, texts)
    if texts is not None:
        memo[key] = spec
    return spec


def _compile_uncached(ctx, entry, signature, backend, root, mode, texts):
    from transpiler import sizes

    if not T.is_symbolic(signature):
        return compile_at(ctx, entry, signature, backend, root, mode)
    if texts is None:
        texts = [function_texts.function_text(ctx, f) for f in built_functions(ctx, root, entry)]
    try:
        spec = sizes.compile_generic(
            signature,
            lambda bound: compile_at(ctx, entry, bound, backend, root, mode),
            lambda spec: repr((spec.lowered, sorted(spec.stackless.items()))),
            sizes.literals(texts),
        )
    except (sizes.NotSizeGeneric, UnsupportedSyntaxError):
        raise
    except Exception as error:  # noqa: BLE001 - code that needs one size: `float(v)`, `v.reshape(2, 4)`
        raise sizes.NotSizeGeneric(
            f"{entry}{T.signature_text(signature)} does not compile for every size: {error}"
        ) from error
    return dataclasses.replace(spec, signature=tuple(signature))


def compile_at(ctx, entry, signature, backend, root, mode=""):
    """One program at one signature, the stages of transpiler/pipeline.py in order:

        built_functions  source, fence, IR of each function (pipeline.build_function)
        program          the functions `entry` reaches (pipeline.build_program)
        typed_program    copy-in/copy-out, type inference (pipeline.infer_types)
        lower_program    lowering, fusion, control, allocation (and lower_stackless)

    and the ProgramSpec that build/writer.py's `module_text` emits
    (pipeline.emit_module) with the other programs of its module.
    """
    from transpiler import pipeline
    from transpiler.emit.module import ProgramSpec
    from transpiler.passes import inplace

    typed = typed_program(ctx, entry, signature, backend, root)
    lowered = pipeline.lower_program(typed)
    stackless = pipeline.lower_stackless(typed) if mode == "stackless" else {}
    built = built_functions(ctx, root, entry)
    namespaces = {name: b[2] for name, b in built.items()}
    modules = {f: ctx._functions[f].function.__module__ for f in namespaces}
    closures = {name: frozenset(b[1].closure) for name, b in built.items()}
    # an entry that changes its own arrays recursively has a copy (passes/inplace.py)
    namespaces, modules, closures = (
        inplace.with_variants(m, typed) for m in (namespaces, modules, closures)
    )
    return ProgramSpec(
        entry, signature, typed, lowered, namespaces, modules, closures, mode, stackless
    )


def size_generic(ctx, programs, backend, root):
    """`programs` with each symbolic one that is not size-generic (its
    program computes with a size's value: transpiler/sizes.py) replaced
    by the signatures it was declared as, one program each."""
    out = []
    for program in programs:
        name, signature, mode = program
        written = sorted(declarations.written_as(ctx).get(program, ()), key=T.signature_text)
        if written and not is_size_generic(ctx, name, signature, backend, root, mode):
            out.extend((name, w, mode) for w in written if (name, w, mode) not in out)
        elif program not in out:
            out.append(program)
    return out


def is_size_generic(ctx, name, signature, backend, root, mode):
    from transpiler import sizes

    key = (name, signature, backend.name, mode, ctx._definitions)
    verdicts = ctx.__dict__.setdefault("_size_generic_cache", {})
    if key not in verdicts:
        try:
            compile_program(ctx, name, signature, backend, root, mode)  # kept for module_text (the `_compiled` memo)
            verdicts[key] = True
        except sizes.NotSizeGeneric:
            verdicts[key] = False
        except Exception:  # noqa: BLE001 - the build reports it with its declaration
            verdicts[key] = True
    return verdicts[key]


def built_functions(ctx, root=None, main=None):
    """{name: (IR function, source, namespace)} of every batched function,
    or (with `main`) of those `main` reaches, in call order.

    A function that cannot be built (the fence refused it) raises only
    when it is needed: for itself, and for the functions that call it.
    The other functions of its file keep working.
    """
    from transpiler import pipeline
    from transpiler.ir import instructions as ir

    cache = ctx.__dict__.setdefault("_built_cache", {})
    batched = {n: f.function for n, f in ctx._functions.items()}

    def build(name):
        if name not in cache:
            try:
                cache[name] = pipeline.build_function(batched[name], batched, root)
            except UnsupportedSyntaxError as error:
                cache[name] = error
        if isinstance(cache[name], Exception):
            raise cache[name]
        return cache[name]

    names = list(batched) if main is None else [main]
    out = {}
    while names:
        name = names.pop(0)
        if name in out:
            continue
        out[name] = build(name)
        if main is not None:
            calls = (
                ins.function
                for block in out[name][0].blocks
                for ins in block.instructions
                if isinstance(ins, ir.Call)
            )
            names.extend(c for c in calls if c not in out and c in batched)
    return out


def namespaces(ctx, main, root=None):
    return {name: built[2] for name, built in built_functions(ctx, root, main).items()}


def typed_program(ctx, main, signature, backend, root=None):
    from transpiler import pipeline

    untyped = program(ctx, main, root)
    overrides = {
        n: f.type_inference for n, f in ctx._functions.items() if f.type_inference
    }
    from transpiler import closures

    # Inference runs primitives: what they change is put back (a seed stream).
    with closures.left_as_found(f.function for f in ctx._functions.values()):
        return pipeline.infer_types(
            untyped, signature, backend, namespaces(ctx, main, root), overrides
        )


def program(ctx, main, root=None):
    """The (untyped) IR program with entry point `main`."""
    from transpiler import pipeline

    if main not in ctx._functions:
        raise ValueError(
            f"{main!r} is not a batched function of this Context "
            f"(known: {ctx.function_names()})"
        )
    built = {name: b[0] for name, b in built_functions(ctx, root, main).items()}
    return pipeline.build_program(main, built)


def program_compiled(ctx, main, sig=None, backend=None):
    """The typed program (types inferred for `sig`; untyped if sig or backend is None)."""
    if sig is None or backend is None:
        return program(ctx, main)
    key = ("compiled", main, tuple(T.from_user(s) for s in sig), B.resolve(backend).name)
    cache = ctx.__dict__.setdefault("_program_cache", {})
    if key not in cache:
        cache[key] = typed_program(ctx, main, key[2], B.resolve(backend))
    return cache[key]


def program_lowered(ctx, main, sig=None, backend=None):
    """The lowered program: one flat list of blocks with explicit stacks."""
    from transpiler import pipeline

    if sig is None or backend is None:
        # Untyped, as the predecessor's: not executable, but readable.
        return pipeline.lower_program(program(ctx, main))
    key = ("lowered", main, tuple(T.from_user(s) for s in sig), B.resolve(backend).name)
    cache = ctx.__dict__.setdefault("_program_cache", {})
    if key not in cache:
        cache[key] = pipeline.lower_program(program_compiled(ctx, main, sig, backend))
    return cache[key]
