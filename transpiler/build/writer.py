"""The generated module for one source file and backend, as text, and its writing.

`module_text` is what `autobatch generate`, `check` and `diff` compare with
the checked-in tree (transpiler/regenerate.py) and what a development call
writes (`generate`): the programs the inputs declare, compiled
(transpiler/build/compiled.py), with a source hash over every function they
reach and an inputs hash over the declarations.
"""

from __future__ import annotations

import warnings

from transpiler import inputs, loader
from transpiler import types as T
from transpiler.build import compiled, declarations, function_texts
from transpiler.errors import StaleGeneratedCodeError


def module_text(ctx, relpath, root, backend, programs, required=None):
    """The generated module for source file `relpath` holding `programs`.

    `programs`: [(entry name, signature, mode)], in the order they appear.
    A declared program (the project's inputs) that no longer compiles
    fails, naming its declaration.  Only in a module a Context keeps in
    a folder of its own (no inputs: it holds what earlier calls built),
    and with `required` (the program a call asked for), another program
    that no longer compiles is dropped with a warning.
    """
    from transpiler import pipeline  # the compiler, imported only when needed
    from transpiler.emit.module import programs_text
    from transpiler.passes import inplace

    declared = set()
    if declarations.uses_lock(ctx, root) and root is not None:
        declared = set(declarations.declared_programs(ctx, relpath, root))
    specs, functions = [], set()
    programs = compiled.size_generic(ctx, programs, backend, root)
    for entry, signature, mode in programs:
        try:
            spec = compiled.compile_program(ctx, entry, signature, backend, root, mode)
        except Exception as error:
            program = (entry, signature, mode)
            if program in declared and program != required:
                # A declared program is never dropped: say which declaration.
                # (The call's own program raises its own error: a
                # development call adds its lock line before building.)
                where = declarations.declaration_site(ctx, relpath, root, entry, signature, mode)
                raise with_message(
                    error,
                    f"{relpath}: {entry}{T.signature_text(signature)}, declared {where}, "
                    f"no longer compiles: {error} (fix the source, or remove the "
                    "declaration and run `autobatch generate`)",
                ) from error
            # A module kept without inputs (a Context's own generated_dir)
            # holds what earlier calls built; an edited function may not
            # take an old signature any more.
            if required is None or (entry, signature, mode) == required:
                raise
            warnings.warn(
                f"{relpath}: dropped {entry}{T.signature_text(signature)} from the "
                f"generated module, which no longer compiles here: {error}",
                stacklevel=2,
            )
            continue
        specs.append(spec)
        for fname in spec.functions:
            fname = inplace.source_function(fname, ctx._functions)  # an entry's copy
            functions.add((function_texts.source_info(ctx, fname)[2], fname))
    functions = sorted(functions)
    sources = [(p, f, function_texts.function_text(ctx, f)) for p, f in functions]
    digest = loader.source_hash(backend.name, programs_text(specs), sources)
    config = declarations.project_config(root)
    inputs_digest = inputs.inputs_hash(
        root,
        backend.name,
        relpath,
        [p for p, _ in functions],
        config.signatures if config else {},
        config.closures if config else {},
    )
    return pipeline.emit_module(relpath, backend, specs, digest, functions, inputs_digest)


def generate(ctx, relpath, root, path, backend, old_text, requested):
    if old_text is not None and loader.is_hand_edited(old_text):
        raise StaleGeneratedCodeError(
            f"{path} was edited by hand (its body no longer matches its hash); "
            "move your changes into the source and delete the file, or run "
            f"`autobatch generate --force {relpath}`"
        )
    programs = declarations.file_programs(ctx, relpath, old_text, backend, requested, root)
    text = module_text(ctx, relpath, root, backend, programs, required=tuple(requested))
    loader.write_atomic(path, text, package_root=ctx._generated_dir(root))
    return text


def generate_cached(ctx, relpath, root, path, backend, requested):
    """Writes a cache module holding the one program `requested`."""
    text = module_text(ctx, relpath, root, backend, [tuple(requested)])
    loader.write_atomic(path, text)
    return text


def with_message(error, message):
    """`error` again, of its own type where it takes one message, saying `message`.

    A SyntaxError (UnsupportedSyntaxError) keeps its file, line and text:
    tools and tracebacks still point at the user's line.
    """
    if isinstance(error, SyntaxError):
        located = SyntaxError.__new__(type(error))
        where = (error.filename, error.lineno, error.offset, error.text)
        SyntaxError.__init__(located, message, where)
        located.__dict__.update(vars(error))  # its hint
        return located
    try:
        return type(error)(message)
    except Exception:
        return RuntimeError(message)
