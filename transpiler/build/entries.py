"""The entry function a call runs: found in a fresh generated module, or built.

Every call comes here (transpiler/batched.py): the program signature a call
signature runs (`sizes.generalize`), the module that holds it (the
project's generated folder, or the cache for a program built elsewhere),
whether that module is fresh, and, where it is not, a regeneration
(transpiler/build/writer.py) or, frozen, an error that names the command
that regenerates it.
"""

from __future__ import annotations

import hashlib
import inspect
import os

from transpiler import inputs, loader
from transpiler import signature as S
from transpiler import types as T
from transpiler.build import declarations, function_texts, writer
from transpiler.errors import StaleGeneratedCodeError
from transpiler.paths import cache_dir, calling_project, is_installed, is_project


def entry(ctx, name, signature, backend, cache=None, mode="", caller=None):
    """The generated entry function that runs `name` on a call of `signature`.

    A call's signature has numbers for sizes; it runs the program of its
    structure (`sizes.generalize`: `int64[12]` runs `int64[n]`), so a new
    length is not a new program.  A module that holds the concrete
    program instead (the function computes with a size's value, so no
    program serves every size) runs that; a development call that finds
    neither builds the symbolic one, and the concrete one if the
    symbolic one is not size-generic.
    """
    from transpiler import sizes

    # Every call comes here: the program signature a call signature runs
    # is worked out once (generalizing and reading the module's header).
    memo = ctx.__dict__.setdefault("_program_signatures", {})
    key = (name, signature, backend.name, mode, ctx._definitions)
    chosen = memo.get(key)
    if chosen is not None:
        return entry_at(ctx, name, chosen, backend, cache, mode, caller)
    general = signature if T.is_symbolic(signature) else sizes.generalize(signature)
    if T.signature_text(general) == T.signature_text(signature):
        memo[key] = signature
        return entry_at(ctx, name, signature, backend, cache, mode, caller)
    chosen = held_signature(ctx, name, (general, signature), backend, mode)
    try:
        entry = entry_at(ctx, name, chosen, backend, cache, mode, caller)
    except sizes.NotSizeGeneric:
        if chosen is signature:
            raise
        chosen = signature
        entry = entry_at(ctx, name, chosen, backend, cache, mode, caller)
    memo[key] = chosen
    return entry


def held_signature(ctx, name, candidates, backend, mode):
    """The first of `candidates` (signatures) whose program a fresh
    generated module holds (the project's module, or the cache's for a
    program built elsewhere), then any other program of the module that
    the call can run (`sizes.matches`: sizes that happen to be equal run
    the program declared for unequal ones); the first candidate if none."""
    from transpiler import sizes

    filename, root, relpath = function_texts.source_info(ctx, name)
    paths = [loader.module_path(ctx._generated_dir(root), relpath, backend.suffix)]
    if builds_elsewhere(ctx, name, root):
        paths += [cache_path(ctx, name, c, backend, mode, relpath, root) for c in candidates]
    texts = [t for t in (loader.read(p) for p in paths) if t is not None]
    classes = dict(ctx._functions[name].function.__globals__)
    held = []
    for text in texts:
        header = loader.read_header(loader.split_header(text)[0])
        for fname, signature_text, program_mode in loader.header_programs(header):
            if fname != name or program_mode != mode:
                continue
            try:
                program = S.parse(signature_text, classes)
            except (ValueError, TypeError):
                continue
            if sizes.matches(program, candidates[-1]) and program not in held:
                held.append(program)
    candidates = list(candidates) + sorted(
        (p for p in held if p not in candidates), key=T.signature_text
    )
    for candidate in candidates:
        wanted = (name, T.signature_text(candidate), mode)
        if any(is_fresh(ctx, text, wanted) for text in texts):
            return candidate
    return candidates[0]


def entry_at(ctx, name, signature, backend, cache=None, mode="", caller=None):
    """The generated entry function for `name` at `signature` ("stackless" mode too).

    `caller`, the BatchedFunction called: a program that closes over
    values is built by the module's factory from the caller's own values
    and cached on the caller, since two closures made by one factory
    share the name (and the module) but not the values.
    """
    key = (name, signature, backend.name, mode, ctx._definitions)
    if caller is not None and key in caller.closure_entries:
        return caller.closure_entries[key]
    if cache is not None and key in cache:
        return cache[key]
    if key in ctx._entries:
        # A caller's cache holds what its calls ran, whichever call of
        # the process loaded it first (an earlier call without a cache).
        if cache is not None:
            cache[key] = ctx._entries[key]
        return ctx._entries[key]
    filename, root, relpath = function_texts.source_info(ctx, name)
    path = loader.module_path(ctx._generated_dir(root), relpath, backend.suffix)
    text = loader.read(path)
    wanted = (name, T.signature_text(signature), mode)
    key_text = name + T.signature_text(signature) + (f" {mode}" if mode else "")
    if (text is None or not is_fresh(ctx, text, wanted)) and builds_elsewhere(ctx, name, root):
        # Not a program this project declares for itself: a closure of
        # the caller's own values, or a function of another project.
        path = cache_path(ctx, name, signature, backend, mode, relpath, root)
        text = loader.read(path)
    if text is None or not is_fresh(ctx, text, wanted):
        line = inputs.program_line(relpath, name, T.signature_text(signature), mode)
        elsewhere = builds_elsewhere(ctx, name, root)
        undeclared = (
            not elsewhere
            and declarations.uses_lock(ctx, root)
            and (name, signature, mode) not in set(declarations.declared_programs(ctx, relpath, root))
        )
        if ctx.frozen:
            state = "missing" if text is None else "stale"
            fix = f"regenerate it with `autobatch generate {relpath}`"
            if undeclared:
                fix = (
                    f"no input declares it: add the line `{line}` to {inputs.LOCK_NAME} "
                    f"(or declare signature=), then run `autobatch generate {relpath}`"
                )
            elif elsewhere:
                fix = (
                    f"no module of {root} holds it: declare `{line}` in that project's "
                    f"[tool.autobatch.signatures] and run `autobatch generate {relpath}` "
                    "there, or run once unfrozen to fill the cache"
                )
            raise StaleGeneratedCodeError(
                f"generated module {path} is {state} for {key_text}; {fix} "
                "(or unset AUTOBATCH_FROZEN)"
            )
        require_compiler(path, "missing" if text is None else "stale", key_text, relpath)
        if elsewhere:
            text = writer.generate_cached(ctx, relpath, root, path, backend, (name, signature, mode))
        elif undeclared:  # a development call: its program becomes an input
            with declarations.inputs_kept_on_failure(root):
                inputs.add_to_lock(root, [line])
                text = writer.generate(ctx, relpath, root, path, backend, text, (name, signature, mode))
        else:
            text = writer.generate(ctx, relpath, root, path, backend, text, (name, signature, mode))
    module = loader.import_file(path, text)
    if key_text not in module.PROGRAMS and T.is_symbolic(signature):
        # The module was written with the sizes this program was called
        # with, as a program that computes with a size's value is (a later
        # backend's first call finds it so): `entry` runs the call's own.
        from transpiler import sizes

        raise sizes.NotSizeGeneric(f"{key_text} is held at the sizes it was called with")
    entry = module.PROGRAMS[key_text]
    if module.CLOSURES[key_text]:
        entry = entry(
            **{c: closure_value(ctx, c, caller, signature) for c in module.CLOSURES[key_text]}
        )
        if caller is not None:
            caller.closure_entries[key] = entry
            return entry
    ctx._entries[key] = entry
    if cache is not None:
        cache[key] = entry
    return entry


def require_compiler(path, state, key_text, relpath):
    """Raises StaleGeneratedCodeError, with the fix, where the compiler is not installed.

    A deployment installs `autobatch` without it; a call there whose module
    is missing or stale would otherwise fail on `import gast` deep inside.
    """
    import importlib.util

    missing = [p for p in ("gast", "black") if importlib.util.find_spec(p) is None]
    if missing:
        raise StaleGeneratedCodeError(
            f"generated module {path} is {state} for {key_text}, and building it needs the "
            f"compiler, which is not installed here ({', '.join(missing)} missing): "
            "pip install 'autobatch[compiler]', or run `autobatch generate "
            f"{relpath}` where it is and ship the module (AUTOBATCH_FROZEN=1 says so at "
            "once, without looking for the compiler)"
        )


def closure_value(ctx, name, caller=None, signature=()):
    """The value a batched function of this context closes over as `name`:
    the called function's own first, then its callees' (by name), then a
    namedtuple class of the call's `signature`, then what the functions
    they close over close over (`closures.find_value`)."""
    from transpiler import closures

    batched = ([caller] if caller is not None else []) + list(ctx._functions.values())
    classes = [c for pattern in signature for c in T.named_classes(pattern)]
    try:
        return closures.find_value(name, [b.function for b in batched], classes)
    except LookupError:
        raise StaleGeneratedCodeError(
            f"no batched function closes over {name!r} any more"
        ) from None


def builds_elsewhere(ctx, name, root):
    """True when a program of `name` that its project's modules lack is
    built into the cache (`cache_dir()`), never into a checked-in module.

    Two cases, for a project's Context (the default generated folder):
    a function that closes over values or is defined inside a function
    (a factory's product: the sampler specialised to the caller's
    model; a test method's own `def function`), whose checked-in module
    holds the programs its project declared, built from the values
    its `[tool.autobatch.closures]` names, and which the caller's
    values must not rebuild; and a function whose project is not the
    one being run from (an installed or neighbouring library), whose
    generated tree belongs to that project.
    """
    if not declarations.uses_lock(ctx, root):
        return False
    return closes_over_values(ctx, name) or belongs_elsewhere(root)


def belongs_elsewhere(root):
    """True if `root` is another project than the one being run from
    (it has a pyproject.toml or .git of its own, or is installed in
    site-packages).  A loose folder of scripts, with neither, keeps
    its generated modules beside it, wherever it is run from."""
    if root == calling_project():
        return False
    return is_project(root) or is_installed(root)


def closes_over_values(ctx, name):
    """True if `name`, or a batched function it calls, closes over values
    or is defined inside a function.  No input can name such a function
    (one file may define several `function`s in several test methods, as
    the predecessor's tests do), so its programs go to the cache, one
    module per program, never into the lock (issue 35)."""
    seen, todo = set(), [name]
    while todo:
        fname = todo.pop()
        if fname in seen or fname not in ctx._functions:
            continue
        seen.add(fname)
        fn = inspect.unwrap(ctx._functions[fname].function)
        if fn.__closure__ or "<locals>" in fn.__qualname__:
            return True
        todo.extend(function_texts.referenced_names(fn.__code__))
    return False


def cache_path(ctx, name, signature, backend, mode, relpath, root):
    """Where the cache keeps the program `name` at `signature`: one module per key.

    The key covers the project, the entry, the signature, the backend
    and what the closures hold (a callable's source, another value's
    kind), so two models of different types, or two targets that give
    different types, never share (and overwrite) a module.
    """
    closures = []
    for fname in sorted(ctx._functions):
        fn = inspect.unwrap(ctx._functions[fname].function)
        for free, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            kind = function_texts.value_kind(value)
            if kind == "callable":
                kind = function_texts.callable_text(value)
            closures.append(f"{fname}.{free}: {kind}")
    key = "\0".join(
        [root, relpath, name, T.signature_text(signature), mode, backend.name] + closures
    )
    digest = hashlib.sha256(key.encode()).hexdigest()
    project = hashlib.sha256(root.encode()).hexdigest()[:12]
    stem = relpath[:-3] if relpath.endswith(".py") else relpath
    filename = f"{stem.replace('/', '.')}_{backend.suffix}_{digest[:16]}.py"
    return os.path.join(cache_dir(), project, filename)


def is_fresh(ctx, text, wanted):
    header = loader.read_header(loader.split_header(text)[0])
    if wanted not in loader.header_programs(header):
        return False
    if loader.is_hand_edited(text):
        return False
    sources = []
    for path, fname in loader.header_functions(header):
        if fname not in ctx._functions:
            return False
        sources.append((path, fname, function_texts.function_text(ctx, fname)))
    expected = loader.source_hash(header.get("backend", ""), header.get("programs", ""), sources)
    return expected == header.get("source-sha256")
