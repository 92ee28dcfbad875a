"""Which programs the project's inputs declare, and the lock file they live in.

Signatures are inputs, never read back from outputs: `signature=` of a
Context's functions, `[tool.autobatch.signatures]` of the project's
pyproject.toml, and the lock file (`autobatch.lock`, transpiler/inputs.py)
that development calls append to.  A project's Context (`uses_lock`)
builds exactly these; a Context with a folder of its own keeps what its
modules already hold (`file_programs`).
"""

from __future__ import annotations

import contextlib
import os

from transpiler import inputs, loader
from transpiler import signature as S
from transpiler import types as T
from transpiler.build import function_texts


def project_config(root):
    """The `[tool.autobatch]` table of the project at `root` (None without one)."""
    from transpiler import config as configuration

    if root is None:
        return None
    try:
        return configuration.load(root)
    except (OSError, ValueError):
        return None


def config_signatures(root):
    """`[tool.autobatch.signatures]` of the project at `root` ({} without one)."""
    config = project_config(root)
    return config.signatures if config else {}


@contextlib.contextmanager
def inputs_kept_on_failure(root):
    """Restores the lock file at `root` if the block raises: a build that
    fails adds nothing to the inputs (else `check` would ask for a program
    that cannot be built, and the next regeneration would fail on it)."""
    path = inputs.lock_path(root)
    old = loader.read(path)
    try:
        yield
    except BaseException:
        if old is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        elif loader.read(path) != old:
            loader.write_atomic(path, old)
        raise


def uses_lock(ctx, root=None):
    """True for a project's Context: the default generated folder, or a
    `generated_dir` that is the project's configured output folder.  Its
    programs come from inputs only (signature=, pyproject, autobatch.lock).
    A Context given a folder of its own (a scratch folder, tests) keeps
    the programs its modules already hold instead."""
    if ctx.generated_dir is None:
        return True
    config = project_config(root)
    return config is not None and os.path.abspath(ctx.generated_dir) == os.path.abspath(
        config.output_dir
    )


def declared_programs(ctx, relpath, root, signatures=None, names=None):
    """[(entry, signature, mode)] the inputs declare for source file `relpath`.

    `signature=` of this Context's functions defined in `relpath`, the
    `[tool.autobatch.signatures]` of `root`'s pyproject.toml (or
    `signatures`) and the lock file at `root`.  Lines whose signature names
    a class that no longer exists are skipped.
    """
    if names is None:
        names = [n for n in ctx._functions if function_texts.source_info(ctx, n)[2] == relpath]
    if signatures is None:
        signatures = config_signatures(root)
    programs = set()
    for name in names:
        batched = ctx._functions[name]
        if batched.signature is not None:
            programs.add((name, batched.signature, ""))
    texts = [(n, t, "") for k, v in signatures.items() for t in v
             for p, _, n in [k.rpartition("::")] if p == relpath]
    texts += inputs.lock_entries(root, relpath)
    for name, text, mode in texts:
        if name not in names:
            continue
        classes = dict(ctx._functions[name].function.__globals__)
        try:
            programs.add((name, S.parse(text, classes), mode))
        except (ValueError, TypeError):
            continue  # a class that no longer exists: that program goes
    return generalized(ctx, programs)


def generalized(ctx, programs):
    """Declared programs with their sizes symbolic: a declaration written
    with numbers (`int64[8]`, the lock lines of earlier versions) means
    its structure (transpiler/sizes.py).  What each symbolic program was
    written as is kept (`written_as`): a program that is not
    size-generic is built at those signatures instead."""
    from transpiler import sizes

    out = set()
    for name, signature, mode in programs:
        general = sizes.generalize(signature)
        if general != signature:
            written_as(ctx).setdefault((name, general, mode), set()).add(signature)
        out.add((name, general, mode))
    return sorted(out, key=lambda p: (p[0], p[2], T.signature_text(p[1])))


def written_as(ctx):
    return ctx.__dict__.setdefault("_written_as_cache", {})


def file_programs(ctx, relpath, text, backend, requested, root=None):
    """Programs the regenerated file holds: the declared ones plus `requested`
    (without a lock file: its old ones still valid, plus `requested`)."""
    programs = {tuple(requested)}
    if uses_lock(ctx, root) and root is not None:
        programs.update(declared_programs(ctx, relpath, root))
    elif text is not None:
        header = loader.read_header(loader.split_header(text)[0])
        for fname, sig_text, mode in loader.header_programs(header):
            if fname not in ctx._functions or function_texts.source_info(ctx, fname)[2] != relpath:
                continue
            classes = dict(ctx._functions[fname].function.__globals__)
            try:
                programs.add((fname, S.parse(sig_text, classes), mode))
            except (ValueError, TypeError):
                continue  # a class that no longer exists: drop that program
    return sorted(programs, key=lambda p: (p[0], p[2], T.signature_text(p[1])))


def declaration_site(ctx, relpath, root, entry, signature, mode):
    """Which input declares a program: for messages that name it."""
    text = T.signature_text(signature)
    line = inputs.program_line(relpath, entry, text, mode)
    if line in inputs.read_lock(root):
        return f"in {inputs.LOCK_NAME} (`{line}`)"
    batched = ctx._functions.get(entry)
    if batched is not None and batched.signature == signature:
        return f"by signature= at {batched._where()}"
    return f"in [tool.autobatch.signatures] of {os.path.join(root, 'pyproject.toml')}"
