"""Stage 6: the generated module's text for one source module and backend.

Layout: a header (what made it, from what, how to remake it), a docstring
listing every block with its source line, imports (the runtime,
autobatch_runtime's backend module, as `rt`, then checks of its version and
of the sources' freshness, then the user's names), then one section per
program.  The AST is unparsed with `ast.unparse` and
formatted with the pinned black.  Nothing in it depends on time, absolute
paths or set order.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import sys
import types as pytypes
from typing import Dict, List, Sequence, Tuple

from autobatch_runtime import RUNTIME_VERSION, freshness
from transpiler import __version__
from transpiler.emit import program as program_emitter
from transpiler.emit.template import COMMENT_MARKER, TRAILING_MARKER, render_comments
from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir import instructions as ir
from transpiler.loader import HEADER_PREFIX, body_hash
from transpiler.types import signature_text



@dataclasses.dataclass
class ProgramSpec:
    """One program of the module: an entry function at one signature."""

    entry: str
    signature: tuple
    typed: ir.Program  # after type inference (for free names and origins)
    lowered: ir.LoweredProgram
    namespaces: Dict[str, dict]
    modules: Dict[str, str]  # function name -> its module's __name__
    closures: Dict[str, frozenset] = dataclasses.field(default_factory=dict)  # closed-over names
    mode: str = ""  # "" (one program with stacks) or "stackless"
    stackless: Dict[str, ir.LoweredProgram] = dataclasses.field(default_factory=dict)

    @property
    def key(self) -> str:
        """The program's name in headers and in PROGRAMS: `fib(int64[])`."""
        text = f"{self.entry}{signature_text(self.signature)}"
        return f"{text} {self.mode}" if self.mode else text

    @property
    def functions(self):
        return tuple(self.stackless) if self.mode else self.lowered.functions


def black_version() -> str:
    import black

    return black.__version__


def generate(
    source_path: str,
    backend,
    specs: Sequence[ProgramSpec],
    source_hash: str,
    functions: Sequence[tuple],
    inputs_hash: str = "",
) -> str:
    """The module's full text."""
    imports = _Imports()
    sections: List[ast.stmt] = []
    listing: List[str] = []
    counts: Dict[str, int] = {}
    for spec in specs:
        name = spec.entry + ("_" + spec.mode if spec.mode else "")
        counts[name] = counts.get(name, 0) + 1
    seen: Dict[str, int] = {}
    registry = []  # (program key, entry or factory name, closure parameters)
    for spec in specs:
        name = spec.entry + ("_" + spec.mode if spec.mode else "")
        seen[name] = seen.get(name, 0) + 1
        prefix = name if counts[name] == 1 else f"{name}_{seen[name]}"
        free, closure, values = imports.resolve_program(spec)
        if spec.mode == "stackless":
            statements, lines, classes = _stackless_sections(spec, prefix, free)
        else:
            emitted = program_emitter.emit(spec.lowered, prefix, spec.entry, free)
            statements, lines = emitted.statements, emitted.block_listing
            classes = emitted.class_imports
        for cls in classes:
            closure = imports.add_class(cls, closure, values, spec)
        if closure:
            sections.append(_factory(prefix, spec.entry, closure, statements))
            registry.append((spec.key, f"make_{prefix}", closure))
        else:
            sections.extend(statements)
            registry.append((spec.key, prefix, ()))
        listing.append(f"{spec.key}:")
        listing.extend(lines)
    if len(specs) > len(counts):
        sections.extend(_dispatchers(specs, counts, registry))
    sections.extend(_registry(registry))
    doc = (
        f"Batched programs generated from {source_path} for {_backend_title(backend)}.\n\n"
        "Each example runs its own path through the blocks below; one loop\n"
        "iteration runs one block for every example waiting at it.\n\n"
        + "\n".join(listing)
        + "\n"
    )
    # Black puts one blank line after the imports, two before the programs.
    check = _freshness_check(source_path, _source_digests(specs, functions))
    runtime, names = imports.statements(backend, check)
    head = _formatted([ast.Expr(ast.Constant(doc))] + runtime)
    if names:
        head += "\n" + _formatted(names)  # a blank line after the checks
    text = head + "\n\n" + _formatted(sections)
    header = _header(source_path, backend, specs, source_hash, functions, text, inputs_hash)
    return header + text


def _source_digests(specs, functions) -> Dict[str, Dict[str, str]]:
    """{module name: {qualified name: digest}} of the listed functions whose
    source file the runtime can find, for the module's import-time check.

    The digests come from the runtime's own `function_digest`, which the
    check calls again at import: the two cannot disagree about a function's
    text.  A function is located by the origin of its `def` (file and line),
    which gives its qualified name (`make_nuts_programs.<locals>.nuts_step`);
    one whose file is not the one its module's name finds (`__main__`, a
    function made by `exec`, a module registered under another name) is
    left out, since an import could not find it either.
    """
    origins = {}
    for spec in specs:
        for fn in spec.typed.functions:
            if fn.origin is not None and fn.name in spec.modules:
                origins.setdefault(fn.name, (fn.origin, spec.modules[fn.name]))
    out: Dict[str, Dict[str, str]] = {}
    for _, name in functions:
        if name not in origins:
            continue
        origin, module = origins[name]
        path = freshness.source_file(module)
        if path is None or not _same_file(path, origin.filename):
            continue
        qualname = freshness.qualname_at(path, origin.line)
        digest = qualname and freshness.function_digest(path, qualname)
        if digest:
            out.setdefault(module, {})[qualname] = digest
    return {module: dict(sorted(names.items())) for module, names in sorted(out.items())}


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _freshness_check(source_path: str, digests) -> str:
    """The module's call of the runtime's freshness check (autobatch_runtime/freshness.py)."""
    return f"{program_emitter.RUNTIME}.check_fresh(globals(), {source_path!r}, {digests!r})"


def _backend_title(backend):
    return {"tensorflow": "TensorFlow", "jax": "JAX"}.get(backend.name, "NumPy")


def unparsed(statements: List[ast.stmt]) -> str:
    """Top-level statements as Python text, comments rendered, not formatted."""
    module = ast.Module(body=statements, type_ignores=[])
    return render_comments(ast.unparse(ast.fix_missing_locations(module)))


def _formatted(statements: List[ast.stmt]) -> str:
    """Top-level statements as black formats them, a definition or a run of
    other statements at a time, each remembered: a Context adds one program
    to its module per new call, and formatting the whole module again each
    time grew with the square of its programs.  Black separates top-level
    definitions by two blank lines and keeps a run of plain statements
    together, so the parts joined so are the module black would write.
    (`ast.unparse` puts a blank line before a definition, so a comment right
    above one stays with what precedes it, and one above a plain statement
    with that statement, as black keeps them.)"""
    return "\n\n".join(_format(unparsed(group)) for group in _top_level_groups(statements))


def _top_level_groups(statements: List[ast.stmt]) -> List[List[ast.stmt]]:
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    groups: List[List[ast.stmt]] = []
    plain: List[ast.stmt] = []  # a run of statements other than definitions
    comments: List[ast.stmt] = []  # comment markers waiting for their statement
    for statement in statements:
        if _is_comment(statement):
            comments.append(statement)
        elif isinstance(statement, definitions):
            if plain:
                groups.append(plain)
                plain = []
            if comments and groups:
                groups[-1] = groups[-1] + comments
            elif comments:
                groups.append(comments)
            comments = []
            groups.append([statement])
        else:
            plain += comments + [statement]
            comments = []
    if plain:
        groups.append(plain)
    if comments and groups:
        groups[-1] = groups[-1] + comments
    elif comments:
        groups.append(comments)
    return groups


def _is_comment(statement) -> bool:
    value = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in (COMMENT_MARKER, TRAILING_MARKER)
    )


@functools.lru_cache(maxsize=2048)
def _format(text: str) -> str:
    import black

    return black.format_str(text, mode=black.Mode())


def _header(source_path, backend, specs, source_hash, functions, text, inputs_hash=""):
    programs = programs_text(specs)
    listed = ",".join(f"{path}::{name}" for path, name in functions)
    lines = [
        f"# Generated by autobatch {__version__} from {source_path}. DO NOT EDIT.",
        f"# Regenerate: autobatch generate {source_path}",
        f"{HEADER_PREFIX} source={source_path}",
        f"{HEADER_PREFIX} backend={backend.name}",
        f"{HEADER_PREFIX} runtime={RUNTIME_VERSION}",
        f"{HEADER_PREFIX} programs={programs}",
        f"{HEADER_PREFIX} functions={listed}",
        f"{HEADER_PREFIX} source-sha256={source_hash}",
        f"{HEADER_PREFIX} inputs-sha256={inputs_hash}",
        f"{HEADER_PREFIX} body-sha256={body_hash(text)}",
        f"{HEADER_PREFIX} black={black_version()}",
    ]
    return "\n".join(lines) + "\n"


def programs_text(specs) -> str:
    return "; ".join(s.key for s in specs)


def _stackless_sections(spec, prefix, free):
    """A stackless program: one masked loop per function, calling each other."""
    from transpiler.passes.stackless import is_recursive

    returns = dict(spec.typed.returns)
    types = dict(spec.typed.types)
    callees = {
        name: program_emitter.StacklessCallee(
            f"{prefix}_{name}_program",
            tuple(types[ir.qualify(name, p)] for p in spec.typed.function(name).params),
            returns[name],
        )
        for name in spec.stackless
    }
    recursive = is_recursive(spec.typed)
    statements, lines, classes = [], [], []
    for name, lowered in spec.stackless.items():
        emitted = program_emitter.emit_stackless(
            lowered,
            f"{prefix}_{name}",
            name,
            free,
            callees,
            recursive,
            prefix if name == spec.entry else None,
        )
        statements.extend(emitted.statements)
        lines.extend(emitted.block_listing)
        classes.extend(c for c in emitted.class_imports if c not in classes)
    return statements, lines, classes


def _factory(prefix, entry, closure, statements):
    """Wraps a program that closes over values into `make_<prefix>(...)`."""
    doc = (
        f"Builds the batched `{entry}` for the values its source closes over.\n\n"
        f"Pass the same objects the decorated function sees: {', '.join(closure)}.\n"
    )
    body = [ast.Expr(ast.Constant(doc))] + list(statements)
    body.append(ast.Return(ast.Name(prefix, ast.Load())))
    return ast.FunctionDef(
        name=f"make_{prefix}",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(name) for name in closure],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=body,
        decorator_list=[],
        returns=None,
        type_params=[],
    )


def _registry(registry):
    """PROGRAMS: program key -> entry (or factory); CLOSURES: factory parameters."""
    programs = ast.Dict(
        [ast.Constant(k) for k, _, _ in registry],
        [ast.Name(name, ast.Load()) for _, name, _ in registry],
    )
    closures = ast.Dict(
        [ast.Constant(k) for k, _, _ in registry],
        [ast.Tuple([ast.Constant(c) for c in closure], ast.Load()) for _, _, closure in registry],
    )
    return [
        ast.Assign([ast.Name("PROGRAMS", ast.Store())], programs),
        ast.Assign([ast.Name("CLOSURES", ast.Store())], closures),
    ]


def _dispatchers(specs, counts, registry):
    """`fib(...)` picking among several signatures of the same entry."""
    out = []
    for entry in counts:
        if counts[entry] == 1:
            continue
        names = [
            name
            for key, name, closure in registry
            if key.startswith(entry + "(") and not key.endswith(" stackless") and not closure
        ]
        if not names:
            continue
        fn = ast.parse(
            f"def {entry}(*args, **options):\n"
            f"    '''Batched `{entry}`: runs the program generated for the arguments' dtypes.\n\n"
            f"    `options`: each program's keywords (max_stack_depth, xla, profile, ...).\n"
            f"    '''\n"
            f"    errors = []\n"
            f"    for program in ({', '.join(names)},):\n"
            f"        try:\n"
            f"            return program(*args, **options)\n"
            f"        except TypeError as e:\n"
            f"            errors.append(str(e))\n"
            f"    raise TypeError('; '.join(errors))\n"
        ).body[0]
        out.append(fn)
    return out


def _importable(value) -> bool:
    """Whether `value` is a module-level object of its module (importable by name)."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    return bool(
        module
        and qualname
        and "." not in qualname
        and getattr(sys.modules.get(module), qualname, None) is value
    )


class _Imports:
    """The import statements for the names user code reads from its module."""

    def __init__(self):
        self.modules: Dict[str, str] = {}  # local name -> module name
        self.objects: Dict[str, tuple] = {}  # local name -> (module, attribute)
        self.bound: Dict[str, object] = {}

    def resolve_program(self, spec: ProgramSpec):
        """Imports for the program's free names: (renames, closure parameters,
        {closure parameter: its value when generated}).

        Globals are imported from where they live; closed-over values (other
        than modules) become parameters of a factory, never frozen copies.
        """
        renames, closure, seen = {}, [], {}
        for fn in spec.typed.functions:
            if fn.name not in spec.functions:
                continue
            namespace = spec.namespaces[fn.name]
            for name in fn.free_names:
                if name not in namespace or name == "__builtins__":
                    continue  # a builtin
                value = namespace[name]
                if name in spec.closures.get(fn.name, ()) and not isinstance(
                    value, pytypes.ModuleType
                ):
                    if name in seen and seen[name] is not value:
                        raise UnsupportedSyntaxError(
                            f"the closed-over name {name!r} means different objects in "
                            "different batched functions",
                            fn.origin,
                            "give them different names",
                        )
                    seen[name] = value
                    if name not in closure:
                        closure.append(name)
                    renames[name] = name
                    continue
                renames[name] = self.bind(name, value, spec.modules[fn.name], fn)
        return renames, tuple(closure), seen

    def bind(self, name, value, user_module, fn):
        local = name
        while local in program_emitter.RESERVED:
            local += "_"
        if local in self.bound and self.bound[local] is not value:
            raise UnsupportedSyntaxError(
                f"the name {name!r} means different objects in different batched "
                "functions of one module",
                fn.origin,
                "give them different names",
            )
        self.bound[local] = value
        if isinstance(value, pytypes.ModuleType):
            self.modules[local] = value.__name__
            return local
        self.add_object(local, value, user_module, original=name)
        return local

    def add_class(self, cls, closure, values, spec):
        """A namedtuple class the program rebuilds: imported from the module
        that defines it, or, for a class made inside a function (a test's
        `collections.namedtuple(...)`), one more parameter of the program's
        factory (the closure parameters `closure`, returned with it), which
        the Context fills at call time as it fills the other closed-over
        values: no module could import such a class.
        """
        if _importable(cls):
            self.add_object(cls.__name__, cls, None)
            return closure
        name = cls.__name__
        if values.setdefault(name, cls) is not cls:
            raise UnsupportedSyntaxError(
                f"two objects of the program {spec.key} are named {name!r}, a class "
                "made inside a function among them: the generated code, which names "
                "them, cannot tell them apart",
                None,
                "give them different names",
            )
        return closure if name in closure else closure + (name,)

    def add_object(self, local, value, user_module, original=None):
        original = original or local
        if _importable(value):
            self.objects[local] = (value.__module__, value.__qualname__)
        elif user_module is not None:
            self.objects[local] = (user_module, original)
        else:
            raise UnsupportedSyntaxError(
                f"cannot import {original!r} into the generated module",
                None,
                "define it at module level",
            )

    def statements(self, backend, check: str) -> Tuple[List[ast.stmt], List[ast.stmt]]:
        """(`typing` (the state classes) and the runtime, the user's names).

        The runtime is imported as `rt` and refused at once if it is not the
        version this module was generated for; then `check` (the freshness
        check) refuses sources edited since.  Both run before the user's
        modules are imported, so an edit that removed a name the module
        imports reports a stale module, not a missing name.
        """
        rt = program_emitter.RUNTIME
        runtime = [
            "import typing",
            f"from autobatch_runtime import {backend.name}_backend as {rt}",
            f"{rt}.require({RUNTIME_VERSION}, __name__)",
            check,
        ]
        lines = []
        for local, module in sorted(self.modules.items()):
            if local == module:
                lines.append(f"import {module}")
            else:
                lines.append(f"import {module} as {local}")
        for local, (module, attr) in sorted(self.objects.items()):
            if local == attr:
                lines.append(f"from {module} import {attr}")
            else:
                lines.append(f"from {module} import {attr} as {local}")
        return ast.parse("\n".join(runtime)).body, ast.parse("\n".join(lines)).body
