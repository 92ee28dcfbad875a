"""`autobatch check`'s survey of the generated tree, cheap when nothing changed.

Without importing the sources, TensorFlow, black or the compiler, it finds:

- *missing* modules: a source file that the inputs give programs (a lock
  line, a pyproject signature, `@ctx.batch(signature=...)`) lacks one per
  configured backend;
- *orphans*: a module under the output folder that no input asks for;
- *current* modules: the header's `inputs-sha256` equals the hash of the
  inputs now (transpiler/inputs.py), the body matches its hash, black is
  the version that formatted it, the runtime is the one it needs, and its
  `programs=` are exactly the declared ones.  The last test matters on its
  own: the inputs hash covers the declarations but not which programs a
  module holds, so a module rewritten with fewer programs (by a Context of
  its own, or by hand with the hashes fixed up) would pass the others;
- *unreached* functions: a `@X.batch` function in `sources` listed in no
  module's `functions=` (no declared program reaches it);
- *bad inputs*: a lock line that is malformed or names no batched function
  of a source file, a `[tool.autobatch.signatures]` entry likewise.

Everything else is a *candidate*: the caller regenerates its text (this
costs the compiler) and compares it with the file.  `module_problems` and
the other `*_problems` functions word what is wrong as one line each, with
the command that fixes it (`autobatch check` prints them).

Programs compare as text with whitespace removed (`program_key`): headers
and lock lines are written canonically, pyproject entries by hand.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

from autobatch_runtime import RUNTIME_VERSION
from transpiler import inputs, loader
from transpiler.config import Config
from transpiler.paths import relative_path

SUFFIXES = {"tensorflow": "tf", "tf": "tf", "numpy": "np", "np": "np", "jax": "jax"}
BACKEND_NAMES = {"tf": "tensorflow", "np": "numpy", "jax": "jax"}

LOCK = inputs.LOCK_NAME
PYPROJECT = "[tool.autobatch.signatures] of pyproject.toml"

ProgramKey = Tuple[str, str, str]  # (entry name, signature without whitespace, mode)


def program_key(name: str, signature: str, mode: str = "") -> ProgramKey:
    """What two texts of one program share: whitespace is not significant,
    and sizes are symbols (a declaration `int64[8]` means its structure,
    `int64[n]`: transpiler/sizes.py; a module that holds the concrete
    program, its function not being size-generic, holds that structure)."""
    from transpiler.sizes import generalize_text

    return (name.strip(), "".join(generalize_text(signature).split()), mode.strip())


def program_text(name: str, signature: str, mode: str = "") -> str:
    """`fib(int64[]) stackless`: a program as headers and lock lines write it."""
    return f"{name}{signature} {mode}" if mode else f"{name}{signature}"


def header_programs(text: Optional[str]) -> Dict[ProgramKey, str]:
    """{key: text} of the programs a module's header lists (none for no module)."""
    if text is None:
        return {}
    header = loader.read_header(loader.split_header(text)[0])
    return {program_key(*p): program_text(*p) for p in loader.header_programs(header)}


@dataclasses.dataclass(frozen=True)
class Declared:
    """One declaration of a program: its text as written, and where it is."""

    text: str
    origin: str  # LOCK, PYPROJECT, or "@batch(signature=...) in FILE"


@dataclasses.dataclass
class Survey:
    root: str
    sources: List[str]  # relative paths of the source files looked at
    expected: Dict[str, Tuple[str, str]]  # module path -> (source relpath, backend name)
    current: Dict[str, str] = dataclasses.field(default_factory=dict)  # path -> text
    candidates: List[str] = dataclasses.field(default_factory=list)  # missing or changed
    orphans: List[str] = dataclasses.field(default_factory=list)
    unreached: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
    # one line each: malformed lock lines, lines and entries naming no batched function
    bad_inputs: List[str] = dataclasses.field(default_factory=list)
    batched: Dict[str, List[str]] = dataclasses.field(default_factory=dict)  # relpath -> names
    # relpath -> {program key: its first declaration}, as far as text tells
    declared: Dict[str, Dict[ProgramKey, Declared]] = dataclasses.field(default_factory=dict)
    # relpath -> names whose signature= only running the file could tell
    unreadable: Dict[str, Set[str]] = dataclasses.field(default_factory=dict)
    # path -> the runtime version its header asks for ("" if none), when not the installed one
    runtime_mismatch: Dict[str, str] = dataclasses.field(default_factory=dict)
    why: Dict[str, str] = dataclasses.field(default_factory=dict)  # candidate -> why it is one

    def relative(self, path: str) -> str:
        return relative_path(path, self.root)


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


def installed_black() -> Optional[str]:
    try:
        return importlib.metadata.version("black")
    except importlib.metadata.PackageNotFoundError:
        return None


def survey(
    config: Config, paths: Optional[Sequence[str]] = None, trust_hashes: bool = True
) -> Survey:
    """What the tree holds against what the inputs ask for.

    `trust_hashes=False` (`generate --force`) makes every expected module a
    candidate, so that its text is compiled again whatever its header says:
    the result is then what `rm -rf generated && autobatch generate` gives.
    """
    files = [relative_path(f, config.root) for f in source_files(config, paths)]
    result = Survey(config.root, files, {})
    lock = _lock_programs(config, files, paths is None, result)
    configured = _pyproject_programs(config, files, paths is None, result)
    for relpath in files:
        _declarations(config, relpath, lock.get(relpath, []), configured.get(relpath, []), result)
    black = installed_black()
    reached: Set[Tuple[str, str]] = set()
    for path in generated_files(config.output_dir):
        text = loader.read(path) or ""
        header = loader.read_header(loader.split_header(text)[0])
        reached.update(loader.header_functions(header))
        if path not in result.expected:
            source = header.get("source") or _source_of(config, path)
            if paths is None or source in files:
                result.orphans.append(path)
            continue
        if text and header.get("runtime") != str(RUNTIME_VERSION):
            result.runtime_mismatch[path] = header.get("runtime", "")
        why = _why_not_current(config, result, path, text, header, black)
        if why is None and trust_hashes:
            result.current[path] = text
        else:
            result.why[path] = why or "regenerated whatever its hashes say (--force)"
    result.candidates = [p for p in result.expected if p not in result.current]
    for path in result.candidates:
        result.why.setdefault(path, "missing")
    for relpath in files:
        for name in result.batched[relpath]:
            if (relpath, name) not in reached:
                result.unreached.append((relpath, name))
    return result


def _lock_programs(config, files, whole, result) -> Dict[str, List[Tuple[str, str, str, str]]]:
    """{relpath: [(name, signature, mode, line)]} of the lock file's well-formed
    lines for the surveyed files; the others go to `result.bad_inputs`.

    `whole`: the survey covers every source, so a line for a file that is
    not among them is reported (with PATHS given, it may be another's).
    """
    out: Dict[str, List[Tuple[str, str, str, str]]] = {}
    for line in inputs.read_lock(config.root):
        problem = inputs.line_problem(line)
        relpath = inputs.line_source(line)
        if problem is not None:
            if whole or relpath in files:
                result.bad_inputs.append(
                    f"{LOCK}: `{line}` {problem}; correct or remove that line"
                )
            continue
        if relpath not in files:
            if whole:
                result.bad_inputs.append(f"{LOCK}: `{line}` {_outside(config, relpath)} line")
            continue
        _, name, signature, mode = inputs.parse_line(line)
        out.setdefault(relpath, []).append((name, signature, mode, line))
    return out


def _pyproject_programs(config, files, whole, result) -> Dict[str, List[Tuple[str, str]]]:
    """{relpath: [(name, signature text)]} of `[tool.autobatch.signatures]`."""
    out: Dict[str, List[Tuple[str, str]]] = {}
    for key, texts in sorted(config.signatures.items()):
        relpath, _, name = key.rpartition("::")
        if relpath not in files:
            if whole:
                result.bad_inputs.append(
                    f'pyproject.toml: [tool.autobatch.signatures] "{key}" '
                    f"{_outside(config, relpath)} entry"
                )
            continue
        out.setdefault(relpath, []).extend((name.strip(), text) for text in texts)
    return out


def _outside(config, relpath) -> str:
    """Why a declaration for a file that is not a surveyed source makes
    nothing, and the start of its fix (the caller ends it: line, entry)."""
    if not relpath or not os.path.isfile(os.path.join(config.root, *relpath.split("/"))):
        return f"names {relpath or 'no file'}, which does not exist; remove that"
    return (
        f"names {relpath}, which is not among the sources (`sources` in [tool.autobatch]); "
        "add its folder to `sources`, or remove that"
    )


def _declarations(config, relpath, locked, configured, result) -> None:
    """Records what `relpath` declares and, if anything, its expected modules.

    A declaration naming no `@X.batch` function of the file goes to
    `result.bad_inputs`: it generates nothing, however often one runs
    `autobatch generate`.
    """
    found = inputs.scan_declarations(os.path.join(config.root, *relpath.split("/")))
    names = [name for name, _, _ in found]
    result.batched[relpath] = names
    declared: Dict[ProgramKey, Declared] = {}
    wanted = set()
    for name, has_signature, text in found:
        if not has_signature:
            continue
        wanted.add(name)
        if text is None:
            result.unreadable.setdefault(relpath, set()).add(name)
        else:
            where = f"@batch(signature=...) in {relpath}"
            declared.setdefault(program_key(name, text), Declared(program_text(name, text), where))
    for name in sorted({name for name, _ in configured} - set(names)):
        result.bad_inputs.append(
            f'pyproject.toml: [tool.autobatch.signatures] "{relpath}::{name}" names no '
            f"batched function of {relpath}; remove that entry (or restore the function)"
        )
    for name, text in configured:
        if name not in names:
            continue
        wanted.add(name)
        declared.setdefault(program_key(name, text), Declared(program_text(name, text), PYPROJECT))
    for name, text, mode, line in locked:
        if name not in names:
            result.bad_inputs.append(
                f"{LOCK}: `{line}` names no batched function of {relpath}; "
                "remove that line (or restore the function)"
            )
            continue
        wanted.add(name)
        declared.setdefault(program_key(name, text, mode), Declared(program_text(name, text, mode), LOCK))
    result.declared[relpath] = declared
    if not wanted:
        return
    for backend in config.backends_for(relpath):
        path = loader.module_path(config.output_dir, relpath, SUFFIXES[backend])
        result.expected[path] = (relpath, BACKEND_NAMES.get(backend, backend))


def _why_not_current(config, result, path, text, header, black) -> Optional[str]:
    """Why an existing expected module cannot be vouched for without the
    compiler, or None when it is current."""
    relpath, backend = result.expected[path]
    if path in result.runtime_mismatch:
        return "it needs another autobatch_runtime version"
    if loader.is_hand_edited(text):
        return "edited by hand"
    if header.get("backend") != backend:
        return f"its header names backend {header.get('backend')!r}, not {backend!r}"
    if header.get("black") != black:
        return f"formatted by black {header.get('black')}; black {black} is installed"
    functions = [p for p, _ in loader.header_functions(header)]
    digest = inputs.inputs_hash(
        config.root, backend, relpath, functions, config.signatures, config.closures,
        batched=result.batched[relpath],
    )
    if header.get("inputs-sha256") != digest:
        return "its inputs changed: a source file it is built from, a declaration, or the compiler"
    if not _programs_match(result, relpath, header_programs(text)):
        return "its programs are not the declared ones"
    return None


def _programs_match(result, relpath, held: Dict[ProgramKey, str]) -> bool:
    """The header's programs are the declared ones; a function whose
    `signature=` text cannot tell may add one program of mode ""."""
    declared = set(result.declared.get(relpath, {}))
    extra = set(held) - declared
    open_names = result.unreadable.get(relpath, set())
    extra_names = [name for name, _, mode in extra if name in open_names and mode == ""]
    return declared <= set(held) and len(extra_names) == len(extra) == len(set(extra_names))


def _source_of(config, path):
    """The source file a module's path names (`generated/a/b_tf.py` -> `a/b.py`)."""
    rel = relative_path(path, config.output_dir)
    stem, _, _ = rel[:-3].rpartition("_")
    return stem + ".py"


# ---- problems, one line each, with the command that fixes each -----------------


def generate_command(source: Optional[str] = None, force: bool = False) -> str:
    parts = ["autobatch generate"] + (["--force"] if force else []) + ([source] if source else [])
    return " ".join(parts)


def module_problems(result: Survey, path: str, old: Optional[str], new: Optional[str]) -> List[str]:
    """What is wrong with candidate module `path`, one line a problem.

    `old` is the file's text (None: missing), `new` the text the compiler
    makes from the inputs (None: not made, e.g. it failed).  Programs are
    compared as the compiler writes them when it could (`new`), else as
    the declarations write them.
    """
    source = result.expected[path][0]
    module = result.relative(path)
    edited = old is not None and loader.is_hand_edited(old)
    fix = generate_command(source, force=edited)
    if old is None:
        return [f"{module} is missing; run `{fix}`"]
    lines = []
    if edited:
        lines.append(f"{module} was edited by hand; move the change into {source} and run `{fix}`")
    if path in result.runtime_mismatch:
        lines.append(
            f"{module} needs autobatch_runtime version "
            f"{result.runtime_mismatch[path] or '(none stated)'}, but the installed runtime is "
            f"version {RUNTIME_VERSION}; run `{fix}` (or install the runtime it was generated for)"
        )
    lines.extend(_program_problems(result, path, source, header_programs(old), new, fix))
    if not lines and new != old:
        lines.append(
            f"{module} is stale ({result.why[path]}); run `{fix}` "
            f"(`autobatch diff {source}` shows the text)"
        )
    return lines


def _program_problems(result, path, source, held, new, fix) -> List[str]:
    """A line for each declared program the module lacks, and for each one
    it holds that nobody declared."""
    module = result.relative(path)
    declared = result.declared.get(source, {})
    if new is not None:
        wanted = header_programs(new)
    else:
        wanted = {key: d.text for key, d in declared.items()}
        open_names = result.unreadable.get(source, set())
        wanted.update({k: t for k, t in held.items() if k[0] in open_names and k[2] == ""})
    lines = []
    for key in sorted(set(wanted) - set(held)):
        origin = declared[key].origin if key in declared else "the inputs"
        lines.append(f"{module} lacks program {wanted[key]}, declared in {origin}; run `{fix}`")
    for key in sorted(set(held) - set(wanted)):
        lines.append(f"{module} holds program {held[key]}, which no input declares; run `{fix}`")
    return lines


def unbuilt_declarations(result: Survey, source: str, new: str) -> List[str]:
    """A line for each declaration of `source` whose program the compiler's
    module `new` does not hold: `autobatch generate` cannot satisfy it.

    A signature naming a class that the file no longer defines is skipped
    by the compiler (transpiler/build/declarations.py, `declared_programs`),
    and a text that differs from the headers' canonical one in more than whitespace
    does not compare equal; either way the declaration itself needs fixing.
    """
    built = header_programs(new)
    return [
        f"{d.origin}: {source}::{d.text} declares a program that `autobatch generate` does "
        "not build (a class its signature names no longer exists, or it is not written "
        "as the module headers write it); correct or remove it"
        for key, d in sorted(result.declared.get(source, {}).items())
        if key not in built
    ]


def orphan_problem(result: Survey, path: str) -> str:
    edited = loader.is_hand_edited(loader.read(path) or "")
    return (
        f"{result.relative(path)} is an orphan: no input asks for it; run "
        f"`{generate_command(force=edited)}` (which removes it) or declare a program for "
        "its source"
    )


def unreached_problem(relpath: str, name: str) -> str:
    return (
        f"{relpath}::{name} is batched but no declared program reaches it; declare "
        f"@ctx.batch(signature=...), add \"{relpath}::{name}\" to [tool.autobatch.signatures], "
        f"or add a line `{relpath}::{name}(SIGNATURE)` to autobatch.lock (a call made "
        "without AUTOBATCH_FROZEN adds it), then run `autobatch generate`"
    )
