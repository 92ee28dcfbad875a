"""Batched functions defined inside a factory, built without calling it.

A closure's program depends on the values it closes over (their types
become types; a closed-over function is called in a primitive block), and
only a call of its factory makes those values.  A project declares them
instead, in pyproject.toml, one table per factory:

    [tool.autobatch.closures]
    "examples/nuts.py::make_nuts_programs" = { target = "examples.nuts:standard_normal", step_size = 0.25, max_tree_depth = 10 }

A number or a boolean is the value itself; a string `module:name` is the
object of that name in that module (a function, an array, a class), imported
from the project root.  `autobatch generate` then rebuilds the factory's
nested functions from its compiled code, with those values in their
closure cells: the factory's body never runs, so nothing it does on the
side (build a Context, load data, seed a generator) happens at build time.
The generated factory still takes any values of the declared kinds at run
time (the module serves every `target` of the same types).

Only what a nested function closes over is needed: a factory's parameter or
local it reads (a parameter's default serves where nothing is declared), or
a sibling nested function (rebuilt the same way, so the batched ones call
each other as they do in the factory).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import textwrap
import types
from typing import Dict, List, Tuple

CONFIG_TABLE = "[tool.autobatch.closures]"


def declared(config_closures: Dict[str, dict], relpath: str) -> List[Tuple[str, dict]]:
    """[(factory name, {closed-over name: raw value})] declared for source file `relpath`."""
    return sorted(
        (key.rpartition("::")[2], dict(values))
        for key, values in config_closures.items()
        if key.rpartition("::")[0] == relpath
    )


def declaration_text(config_closures: Dict[str, dict], relpath: str) -> str:
    """The declarations of `relpath` as deterministic text (part of the inputs hash)."""
    return "\n".join(
        f"{factory}: " + ", ".join(f"{k}={v!r}" for k, v in sorted(values.items()))
        for factory, values in declared(config_closures, relpath)
    )


def resolve(raw, where: str):
    """A declared value: numbers and booleans as they are, `module:name` imported."""
    if isinstance(raw, bool) or isinstance(raw, (int, float)):
        return raw
    if isinstance(raw, str):
        module_name, colon, attribute = raw.partition(":")
        if not colon or not module_name or not attribute:
            raise ValueError(
                f"{where}: {raw!r} is neither a number nor `module:name`; write an "
                "importable object as `package.module:name` (a function, an array, a class)"
            )
        try:
            value = importlib.import_module(module_name)
            for part in attribute.split("."):
                value = getattr(value, part)
        except (ImportError, AttributeError) as error:
            raise ValueError(f"{where}: cannot import {raw!r} ({error})") from None
        return value
    raise ValueError(
        f"{where}: {raw!r} ({type(raw).__name__}) cannot be declared; give a number, "
        "a boolean or `module:name`"
    )


def build(module, relpath: str, factory_name: str, raw_values: dict, new_context):
    """Builds the functions nested in `module.factory_name`, closing over the
    declared values, and registers the batched ones; returns the Contexts
    that hold them.

    A nested function decorated by a module-level Context (`@ctx.batch`
    with `ctx` a global) joins that Context, beside the functions it may
    call; one decorated by a Context the factory makes or takes joins one
    made by `new_context()`.  Raises ValueError naming the file, the
    factory and the fix when the factory is missing, a nested function
    closes over a name no declaration gives, or a decorator's arguments
    need the factory's own variables.
    """
    where = f"{relpath}: {CONFIG_TABLE} {factory_name!r}"
    factory = inspect.unwrap(getattr(module, factory_name, None) or _missing(where, relpath))
    if not inspect.isfunction(factory):
        raise ValueError(f"{where}: {factory_name} is not a function defined with `def`")
    locals_ = set(factory.__code__.co_varnames) | set(factory.__code__.co_cellvars)
    nested = _nested_definitions(factory, where)
    codes = {
        c.co_name: c for c in factory.__code__.co_consts if isinstance(c, types.CodeType)
    }
    values = _parameter_defaults(factory)
    values.update({name: resolve(raw, f"{where}, {name}") for name, raw in raw_values.items()})
    unused = sorted(set(raw_values) - _free_names(codes, nested))
    if unused:
        raise ValueError(
            f"{where} declares {unused}, which no function nested in {factory_name} "
            "closes over; remove them"
        )
    cells = {name: types.CellType() for name in nested}
    made, contexts, fresh = {}, [], []
    for name, node in nested.items():
        code = codes[name]
        closure = tuple(_cell(free, cells, values, where, name) for free in code.co_freevars)
        defaults = _evaluated(node.args.defaults, module, locals_, f"{where}: {name}'s defaults")
        fn = types.FunctionType(code, module.__dict__, name, tuple(defaults) or None, closure)
        fn.__qualname__ = code.co_qualname
        fn.__module__ = module.__name__
        fn._autobatch_declared = True  # see `declared_function`
        made[name] = fn
        decorator = _batch_decorator(node, where)
        if decorator is not None:
            context = _decorator_context(decorator, module, locals_, fresh, new_context, where)
            keywords = dict(
                zip(
                    [k.arg for k in decorator.keywords],
                    _evaluated(
                        [k.value for k in decorator.keywords],
                        module,
                        locals_,
                        f"{where}: {name}'s @batch(...)",
                    ),
                )
            )
            made[name] = context.batch(**keywords)(fn)
            if context not in contexts:
                contexts.append(context)
    for name, value in made.items():
        cells[name].cell_contents = value
    return contexts


def find_value(name: str, functions, classes=()):
    """The object a generated factory's parameter `name` stands for, found
    in the live objects of a call; LookupError if none holds it.

    Searched in this order, the first match wins: the closure cells of
    `functions` (the called function first, then the others of its
    Context), as their code names them; the namedtuple `classes` of the
    call's signature, by class name; then, breadth first, the closure
    cells of the functions found in those cells, so that a class (or any
    value) that a closed-over primitive closes over is found where the
    primitive finds it (`my_tuple` in `def my_primop(t): return
    my_tuple(...)`, both defined in a test method).
    """
    level, seen, signature_next = [inspect.unwrap(f) for f in functions], set(), True
    while level or signature_next:
        deeper = []
        for fn in level:
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for free, value in _cells(fn):
                if free == name:
                    return value
                if callable(value):
                    deeper.append(inspect.unwrap(value))
        if signature_next:  # after the functions' own cells, before deeper ones
            signature_next = False
            for cls in classes:
                if cls.__name__ == name:
                    return cls
        level = deeper
    raise LookupError(name)


@contextlib.contextmanager
def left_as_found(functions):
    """Restores the attributes of the objects `functions` close over (their
    closure cells, one level) when the block ends.

    Type inference runs each primitive on placeholders, and a primitive may
    change an object it closes over: TFP's NUTS draws each random op's seed
    from a `SeedStream`, whose counter advances per call.  Compiling happens
    only when a program is missing or stale, so without this a chain's
    draws would depend on whether its call compiled (a cold cache) or not:
    the same seed twice gave two chains (issue 35).  Plain objects only
    (with a `__dict__`; not functions, classes or modules), restored
    shallowly: what a primitive appends to a list it holds stays.
    """
    saved = []
    for fn in functions:
        for _, value in _cells(inspect.unwrap(fn)):
            if _plain_object(value) and all(value is not o for o, _ in saved):
                saved.append((value, dict(vars(value))))
    try:
        yield
    finally:
        for value, attributes in saved:
            now = vars(value)
            # Compared by identity: `!=` of dicts holding arrays would ask an
            # array for its truth value.
            if now.keys() != attributes.keys() or any(now[k] is not v for k, v in attributes.items()):
                now.clear()
                now.update(attributes)


def _plain_object(value) -> bool:
    """An instance of a class with a `__dict__`: not a function, class or module."""
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return False
    if hasattr(value, "__wrapped__"):  # a batched function (a wrapper of one)
        return False
    try:
        vars(value)
    except TypeError:
        return False
    return True


def _cells(fn):
    """(free name, value) of a function's filled closure cells; none for other objects."""
    code, closure = getattr(fn, "__code__", None), getattr(fn, "__closure__", None)
    if code is None or not closure:
        return []
    out = []
    for free, cell in zip(code.co_freevars, closure):
        try:
            out.append((free, cell.cell_contents))
        except ValueError:  # an empty cell: a name assigned after the def ran
            continue
    return out


def declared_function(function) -> bool:
    """True for a function `build` made (not the factory's own call)."""
    return getattr(inspect.unwrap(function), "_autobatch_declared", False)


def batch_call(decorator):
    """A decorator as an `ast.Call` if it is `@X.batch` or `@X.batch(...)`
    (the bare form as a call without arguments), else None: how the CLI
    recognizes batched functions without importing their file."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call else decorator
    if not (isinstance(target, ast.Attribute) and target.attr == "batch"):
        return None
    return call or ast.Call(func=target, args=[], keywords=[])


def _batch_decorator(node, where):
    """The `@X.batch` decorator of a nested def (see `batch_call`), or None
    if it has none."""
    found = None
    for decorator in node.decorator_list:
        found = batch_call(decorator)
        if found is None:
            raise ValueError(
                f"{where}: {node.name} has a decorator other than `@ctx.batch`, "
                "which cannot be applied without running the factory"
            )
        if found.args:
            raise ValueError(f"{where}: {node.name}'s @ctx.batch takes keywords only")
    return found


def _decorator_context(decorator, module, locals_, fresh, new_context, where):
    """The Context a nested function joins: a module-level one its decorator
    names, or (for one the factory makes or takes) the one Context this
    build makes with `new_context()` (kept in the list `fresh`)."""
    owner = decorator.func.value
    if {n.id for n in ast.walk(owner) if isinstance(n, ast.Name)} & locals_:
        if not fresh:
            fresh.append(new_context())
        return fresh[0]
    [context] = _evaluated([owner], module, locals_, where)
    if not callable(getattr(context, "batch", None)):
        raise ValueError(f"{where}: the decorator's {ast.unparse(owner)} is not a Context")
    return context


def _evaluated(nodes, module, locals_, what):
    """Values of expressions the factory's `def` lines hold (defaults,
    decorator keywords), evaluated in the module's globals: those that read
    a variable of the factory cannot be known without running it."""
    out = []
    for node in nodes:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if names & locals_:
            raise ValueError(
                f"{what} read the factory's variables {sorted(names & locals_)}, which exist "
                "only when it runs; use literals or module-level names there"
            )
        expression = ast.fix_missing_locations(ast.Expression(node))
        out.append(eval(compile(expression, what, "eval"), module.__dict__))  # noqa: S307
    return out


def _parameter_defaults(factory):
    """The factory's parameters' default values: set when `def` ran, so
    taking them runs nothing; a declaration overrides them."""
    return {
        name: p.default
        for name, p in inspect.signature(factory).parameters.items()
        if p.default is not p.empty
    }


def _missing(where, relpath):
    raise ValueError(f"{where}: {relpath} defines no such function at module level")


def _cell(free, cells, values, where, name):
    if free in cells:
        return cells[free]
    if free in values:
        return types.CellType(values[free])
    raise ValueError(
        f"{where}: {name} closes over {free!r}, which the declaration does not give; "
        f"add `{free} = ...` (a number, or `module:name`) to it"
    )


def _free_names(codes, nested):
    return {free for name in nested for free in codes[name].co_freevars}


def _nested_definitions(factory, where) -> Dict[str, ast.FunctionDef]:
    """{name: def node} of the functions defined directly in the factory's
    body, in source order.  Read with `ast`."""
    source = textwrap.dedent(inspect.getsource(factory))
    tree = ast.parse(source).body[0]
    for node in _definitions_in_blocks(tree.body):
        raise ValueError(
            f"{where}: {node.name} is defined inside a block of {tree.name}; define "
            "the functions a factory returns directly in its body"
        )
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _definitions_in_blocks(statements):
    """Functions defined in the factory's `if`/`for`/`with`/`try` blocks
    (not inside its nested functions): their code runs only if the block does."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node
