"""What `generated/` should hold, computed from the sources.

A *target* is one generated module: a source file, a backend, and the
programs (entry function, signature) it holds.  Its programs come from the
inputs only (`@ctx.batch(signature=)`, `[tool.autobatch.signatures]`, the
lock file `autobatch.lock`; see transpiler/inputs.py), never from the
existing module, so `rm -rf generated && autobatch generate` rebuilds the
tree byte for byte.  Used by `autobatch
generate/check/diff`, the golden tests and the demo.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import os
import sys
from typing import List, Optional, Sequence

from transpiler import backends as B
from transpiler import loader
from transpiler import signature as S
from transpiler import types as T
from transpiler.build import declarations, writer
from transpiler.config import Config
from transpiler.context import Context
from transpiler.paths import relative_path


@dataclasses.dataclass
class Target:
    root: str  # the project folder
    relpath: str  # the source file, relative to the project root
    backend: object
    path: str  # the generated module
    context: Context
    programs: list  # [(entry, signature, mode)]


def source_files(config: Config, paths: Optional[Sequence[str]] = None) -> List[str]:
    """The .py files under the given paths (default: the configured sources)."""
    out = []
    for given in paths or config.sources:
        full = os.path.join(config.root, given)
        if os.path.isfile(full):
            out.append(os.path.abspath(full))
            continue
        if not os.path.isdir(full):
            raise FileNotFoundError(f"no such source file or folder: {given}")
        for folder, dirs, files in os.walk(full):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            out.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
    return out


def import_source(config: Config, filename: str):
    if config.root not in sys.path:
        sys.path.insert(0, config.root)
    relpath = relative_path(filename, config.root)
    name = relpath[:-3].replace("/", ".")
    if name.endswith(".__init__"):
        name = name[: -len(".__init__")]
    return importlib.import_module(name)


def contexts_of(module) -> List[Context]:
    return [v for v in vars(module).values() if isinstance(v, Context)]


def _contexts(config: Config, module, relpath: str) -> List[Context]:
    """The module-level Contexts of a source file, with the functions of the
    factories `[tool.autobatch.closures]` declares for it built in (or in
    Contexts of their own; transpiler/closures.py); no factory is called.

    A function that importing the file already batched (its factory called
    at module level) and that a declaration builds again is refused: the
    two would compete for one module.
    """
    from transpiler import closures

    found = contexts_of(module)
    held = {
        name
        for ctx in found
        for name, batched in ctx._functions.items()
        if batched.function.__module__ == module.__name__
        and not closures.declared_function(batched.function)
    }
    out = list(found)
    for factory, values in closures.declared(config.closures, relpath):
        for ctx in closures.build(module, relpath, factory, values, Context):
            both = sorted(held & set(ctx.function_names()))
            if both:
                raise ValueError(
                    f"{relpath}: {both} are batched when the file is imported (its "
                    f"factory is called at module level) and also built from "
                    f"[tool.autobatch.closures] {factory!r}; keep one: drop the "
                    "module-level call, or the declaration"
                )
            if ctx not in out:
                out.append(ctx)
    return out


def targets(config: Config, paths: Optional[Sequence[str]] = None) -> List[Target]:
    out = []
    for filename in source_files(config, paths):
        module = import_source(config, filename)
        relpath = relative_path(filename, config.root)
        for ctx in _contexts(config, module, relpath):
            names = [
                n
                for n in ctx.function_names()
                if ctx._functions[n].function.__module__ == module.__name__
            ]
            if not names:
                continue
            for backend_name in config.backends_for(relpath):
                backend = B.resolve(backend_name)
                path = loader.module_path(config.output_dir, relpath, backend.suffix)
                programs = _programs(config, ctx, module, relpath, names, path)
                if programs:
                    out.append(Target(config.root, relpath, backend, path, ctx, programs))
    return out


def _programs(config, ctx, module, relpath, names, path):
    """The programs the inputs declare for `relpath`: signature=, pyproject, lock file."""
    return declarations.declared_programs(ctx, relpath, config.root, config.signatures, names)


def expected_text(target: Target) -> str:
    return writer.module_text(
        target.context, target.relpath, target.root, target.backend, target.programs
    )


def diff(target: Target, expected: str) -> str:
    actual = loader.read(target.path)
    rel = relative_path(target.path, target.root)
    return "".join(
        difflib.unified_diff(
            (actual or "").splitlines(keepends=True),
            expected.splitlines(keepends=True),
            rel,
            rel + " (expected)",
        )
    )
