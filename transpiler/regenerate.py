"""What `generated/` should hold, computed from the sources.

A *target* is one generated module: a source file, a backend, and the
programs (entry function, signature) it holds.  Its programs are the union
of those declared (`[tool.autobatch.signatures]`, `@ctx.batch(signature=)`)
and those already listed in the existing module's header, which works as a
lock file: a signature that was ever called stays generated, so the checked-in
module is reproducible from the sources alone.  Used by `autobatch
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


def targets(config: Config, paths: Optional[Sequence[str]] = None) -> List[Target]:
    out = []
    for filename in source_files(config, paths):
        module = import_source(config, filename)
        relpath = relative_path(filename, config.root)
        for ctx in contexts_of(module):
            names = [
                n
                for n in ctx.function_names()
                if ctx._functions[n].function.__module__ == module.__name__
            ]
            if not names:
                continue
            for backend_name in config.backends:
                backend = B.resolve(backend_name)
                path = loader.module_path(config.output_dir, relpath, backend.suffix)
                programs = _programs(config, ctx, module, relpath, names, path)
                if programs:
                    out.append(Target(config.root, relpath, backend, path, ctx, programs))
    return out


def _programs(config, ctx, module, relpath, names, path):
    classes = dict(vars(module))
    programs = set()
    for name in names:
        declared = ctx._functions[name].signature
        if declared is not None:
            programs.add((name, declared, ""))
        for text in config.signatures.get(f"{relpath}::{name}", []):
            programs.add((name, S.parse(text, classes), ""))
    old = loader.read(path)
    if old is not None:
        header = loader.read_header(loader.split_header(old)[0])
        for name, text, mode in loader.header_programs(header):
            if name in names:
                try:
                    programs.add((name, S.parse(text, classes), mode))
                except ValueError:
                    pass  # a class that no longer exists: that program goes
    return sorted(programs, key=lambda p: (p[0], p[2], T.signature_text(p[1])))


def expected_text(target: Target) -> str:
    return target.context.module_text(
        target.relpath, target.root, target.backend, target.programs
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


def generated_files(generated_dir: str) -> List[str]:
    """Every generated module under a folder (not the package `__init__` files)."""
    out = []
    for folder, dirs, files in os.walk(generated_dir):
        dirs.sort()
        out.extend(
            os.path.join(folder, f)
            for f in sorted(files)
            if f.endswith(".py") and f != "__init__.py"
        )
    return out
