"""Runs a generated program batched and per example, and compares them.

Shared by tests/test_fuzz.py and tools/fuzz.py.  The oracle is the plain
Python function (`Context.plain`: the undecorated functions calling each
other) on Python ints and floats (and per-example NumPy rows), one example at a time;
the batched program must agree with it exactly for ints and bools, and to a
tolerance for floats.  A program that may index out of range
(`Program.raises`) must raise IndexError from the batched call exactly when
some example's plain run raises IndexError.
Each program lives in a file of its own in a scratch folder, with its
generated modules next to it, so nothing is written into the repository.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import importlib.util
import os
import re
import sys
import traceback
from typing import Dict, List, Sequence

import numpy as np

from tools.fuzzgen import FLOAT, INT, Program, elem_of, shape_of  # noqa: F401 - Program is re-exported

BACKENDS = {
    "numpy": dict(backend="numpy"),
    "tf": dict(backend="tensorflow"),
    "xla": dict(backend="tensorflow", xla=True),
    "jax": dict(backend="jax"),
}
BATCH_SIZES = (1, 5, 16)
RTOL, ATOL = 1e-6, 1e-9


# Crashes with a known cause, each pinned by an xfail test in
# tests/test_fuzz_regressions.py: counted and reported, not failures.
# The inputs are int64 and float64 only, so an int32 or float32 in an error
# can only come from a literal's weak type (TensorFlow's default dtypes).
# Crashes with a known, still open cause: name -> pattern of the message.
# (Empty: weak literal leaves became int64 / float64 on TF, which fixed
# test_weak_tuple_element_meets_int64_on_tf.)
KNOWN = {}


def known_cause(backend: str, detail: str):
    """The KNOWN cause a crash message matches, or None."""
    if backend == "numpy":
        return None
    return next((name for name, pattern in KNOWN.items() if pattern.search(detail)), None)


class InvalidProgram(Exception):
    """The plain Python oracle failed: a bug in the generator, not the compiler."""


@dataclasses.dataclass
class Raised:
    """An example whose plain run raised IndexError (in a program that may)."""

    example: int
    message: str


@dataclasses.dataclass
class Finding:
    """A disagreement (or a crash) of one backend on one batch."""

    backend: str
    kind: str  # "mismatch", "crash", or "known" (a crash with a KNOWN cause)
    detail: str
    inputs: tuple
    program: Program

    def report(self) -> str:
        args = ", ".join(f"np.array({np.asarray(a).tolist()!r})" for a in self.inputs)
        return (
            f"{self.kind} on {self.backend}: {self.detail}\n"
            f"inputs: {self.program.entry}({args})\n"
        )


@dataclasses.dataclass
class Counts:
    """Programs and inputs (examples) tried, per backend."""

    programs: Dict[str, int] = dataclasses.field(default_factory=dict)
    inputs: Dict[str, int] = dataclasses.field(default_factory=dict)
    raised: Dict[str, int] = dataclasses.field(default_factory=dict)  # batches expected to raise IndexError

    def add(self, backend, examples):
        self.inputs[backend] = self.inputs.get(backend, 0) + examples

    def add_program(self, backend):
        self.programs[backend] = self.programs.get(backend, 0) + 1

    def add_raised(self, backend):
        self.raised[backend] = self.raised.get(backend, 0) + 1

    def merge(self, other):
        for mine, theirs in ((self.programs, other.programs), (self.inputs, other.inputs),
                             (self.raised, other.raised)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v

    def summary(self) -> str:
        return ", ".join(
            f"{b}: {self.programs[b]} programs / {self.inputs.get(b, 0)} inputs"
            + (f" / {self.raised[b]} batches raising IndexError" if self.raised.get(b) else "")
            for b in self.programs
        )


def _unformatted(text):
    return text


@contextlib.contextmanager
def unformatted_generation():
    """Generated modules skip black while this is active.

    black only lays the generated code out (it runs after `ast.unparse`, on
    valid Python) and takes most of the generation time; the fuzzer checks
    what the code computes, so it runs about three times as many programs
    without it.  `tools/fuzz.py --black` keeps it.
    """
    from transpiler.emit import module

    original = module._format
    module._format = _unformatted
    try:
        yield
    finally:
        module._format = original


@contextlib.contextmanager
def memoized_emission():
    """While active, a program's statements are emitted once and each
    top-level statement is unparsed once.

    A Context's own module is rebuilt whole each time a call adds a program
    to it (its other programs come from the Context's memo of compiled
    programs, the same objects each time), and each rebuild emitted and
    unparsed every earlier program again: a test module that calls k
    functions of one Context paid k(k+1)/2 of them per backend.  Emitting is
    a function of (lowered program, prefix, entry, imported names), and the
    module's text is what `ast.unparse` gives for the whole (checked against
    it in tests/test_emission_memo.py): the modules are the same text.
    """
    from transpiler.emit import module
    from transpiler.emit import program as program_emitter

    emitted = {}  # (id(lowered), prefix, entry, names) -> (lowered, EmittedProgram)
    texts = {}  # id(statement) -> (statement, its text)
    emit, unparsed = program_emitter.emit, module.unparsed

    def memo_emit(lowered, prefix, entry, free_names):
        key = (id(lowered), prefix, entry, tuple(sorted(free_names.items())))
        if key not in emitted:
            emitted[key] = (lowered, emit(lowered, prefix, entry, free_names))
        return emitted[key][1]

    def text(statement):
        if id(statement) not in texts:
            texts[id(statement)] = (statement, ast.unparse(ast.fix_missing_locations(statement)))
        return texts[id(statement)][1]

    def memo_unparsed(statements):
        return joined_unparse(statements, text, unparsed)

    program_emitter.emit, module.unparsed = memo_emit, memo_unparsed
    try:
        yield
    finally:
        program_emitter.emit, module.unparsed = emit, unparsed


def joined_unparse(statements, text, unparsed):
    """`unparsed(statements)` (transpiler/emit/module.py) put together from
    each statement's `text(statement)`: `ast.unparse` starts each further
    top-level statement on a new line, and a `def` or `class` after a blank
    line.  A leading string, which it writes as a docstring, goes to
    `unparsed` whole."""
    from transpiler.emit.template import render_comments

    first = statements[0] if statements else None
    if first is None or (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return unparsed(statements)
    pieces = []
    for k, statement in enumerate(statements):
        if k:
            blank = isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            pieces.append("\n\n" if blank else "\n")
        pieces.append(text(statement))
    return render_comments("".join(pieces))


def load(program: Program, directory: str):
    """Writes the program's source under `directory` and imports it."""
    name = _module_name(program)
    folder = os.path.join(directory, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect.getsource finds the functions through it
    spec.loader.exec_module(module)
    return module


def _module_name(program: Program) -> str:
    return f"fuzz_{hashlib.sha256(program.source.encode()).hexdigest()[:16]}"


def unload(module):
    sys.modules.pop(module.__name__, None)


def make_inputs(program: Program, rng: np.random.Generator, batch: int) -> tuple:
    """A batch of arguments for the entry: mostly small values (ties, zero
    and negative numbers), a few large ones, and sometimes one argument
    broadcast from a batch of one."""
    broadcast = -1
    if batch > 1 and len(program.params) > 1 and rng.random() < 0.2:
        broadcast = int(rng.integers(1, len(program.params)))
    out = []
    for k, (name, kind) in enumerate(program.params):
        n = 1 if k == broadcast else batch
        size = (n,) + shape_of(kind)  # an array per example: its elements drawn alike
        if name == "d":
            out.append(rng.integers(0, program.max_depth + 1, n))
        elif elem_of(kind) == INT:
            small = rng.integers(-12, 13, size)
            large = rng.integers(-9999, 10000, size)
            out.append(np.where(rng.random(size) < 0.85, small, large))
        else:
            smooth = np.round(rng.normal(0.0, 4.0, size), 3)
            special = rng.choice([0.0, 0.5, -1.5, 1.0, 3.0, 1e5], size)
            out.append(np.where(rng.random(size) < 0.7, smooth, special))
    return tuple(out)


def example(inputs, i):
    """The i-th example as Python scalars, or a NumPy array of its own for an
    array argument (the plain function may assign into it); a batch of one
    is broadcast."""
    rows = (a[i if len(a) > 1 else 0] for a in inputs)
    return tuple(r.copy() if np.ndim(r) else r.item() for r in rows)


def expected(module, program: Program, inputs, batch: int) -> list:
    """Each example's plain result (a `Raised` where it raised IndexError)."""
    plain = module.ctx.plain(program.entry)
    results = []
    for i in range(batch):
        try:
            results.append(plain(*example(inputs, i)))
        except IndexError as e:
            if not program.raises:  # every index was to be in range by construction
                raise InvalidProgram(f"the plain function raised on example {i}: {e!r}") from e
            results.append(Raised(i, str(e)))
        except Exception as e:
            raise InvalidProgram(f"the plain function raised on example {i}: {e!r}") from e
    return results


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def compare(got, want: list, returns: Sequence[str]) -> List[str]:
    """What differs between a batched result and the per-example results."""
    got_leaves = [np.asarray(g.numpy() if hasattr(g, "numpy") else g) for g in _leaves(got)]
    if len(got_leaves) != len(returns):
        return [f"{len(got_leaves)} results, expected {len(returns)}"]
    problems = []
    for k, (leaf, kind) in enumerate(zip(got_leaves, returns)):
        column = np.array([_leaves(w)[k] for w in want])
        if leaf.shape != column.shape:
            problems.append(f"result {k}: shape {leaf.shape}, expected {column.shape}")
            continue
        if elem_of(kind) == FLOAT:
            if leaf.dtype.kind != "f":
                problems.append(f"result {k}: dtype {leaf.dtype}, expected a float")
            close = np.isclose(leaf, column, rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            if leaf.dtype.kind not in ("i", "b") or column.dtype.kind not in ("i", "b"):
                problems.append(f"result {k}: dtype {leaf.dtype}, expected {column.dtype}")
            close = leaf == column
        close = close.reshape(len(close), -1).all(axis=1) if close.ndim > 1 else close
        bad = np.flatnonzero(~close)
        if bad.size:
            i = int(bad[0])
            got_i, want_i = (leaf[i].tolist(), column[i].tolist()) if leaf.ndim > 1 else (leaf[i], column[i])
            problems.append(
                f"result {k}: {bad.size} example(s) differ, first #{i}: "
                f"got {got_i!r}, expected {want_i!r}"
            )
    return problems


_INDEX_ERROR = re.compile(r"example\(s\) \[([\d, ]*)\] indexed out of range")


def compare_raised(error, want: list) -> List[str]:
    """What differs between the batched call's IndexError message (or None)
    and the examples' plain runs (`Raised` entries where they raised it): it
    must name the same examples (the first ten)."""
    raised = [w for w in want if isinstance(w, Raised)]
    if error is None and raised:
        return [f"no IndexError, but example #{raised[0].example} raises one in plain Python "
                f"({raised[0].message}; {len(raised)} of {len(want)} examples raise)"]
    if error is not None and not raised:
        return [f"IndexError ({error}), but no example raises one in plain Python"]
    if error is not None:
        match = _INDEX_ERROR.search(error)
        named = [int(k) for k in match.group(1).split(",") if k.strip()] if match else None
        expected_examples = sorted(w.example for w in raised)[:10]
        if named is not None and named != expected_examples:
            return [f"IndexError names example(s) {named}, but {expected_examples} raise one in plain Python"]
    return []


def run_program(program: Program, backends, seed: int, directory: str,
                batches=BATCH_SIZES, counts: Counts = None) -> List[Finding]:
    """Checks `program` on `backends` for one input batch per batch size."""
    try:
        module = load(program, directory)
    except SyntaxError as e:  # refused when decorated, at import: a crash of every backend
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        sys.modules.pop(_module_name(program), None)
        return [Finding(backend, "crash", detail, (), program) for backend in backends]
    findings = []
    try:
        rng = np.random.default_rng(seed)
        cases = []
        for batch in batches:
            inputs = make_inputs(program, rng, batch)
            cases.append((inputs, batch, expected(module, program, inputs, batch)))
        entry = getattr(module, program.entry)
        for backend in backends:
            if counts is not None:
                counts.add_program(backend)
            for inputs, batch, want in cases:
                if counts is not None:
                    counts.add(backend, batch)
                    if any(isinstance(w, Raised) for w in want):
                        counts.add_raised(backend)
                try:
                    got = entry(*inputs, **BACKENDS[backend])
                except IndexError as e:
                    if not _INDEX_ERROR.search(str(e)):  # not the checked error: NumPy's own, say
                        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
                        findings.append(Finding(backend, "crash", detail, inputs, program))
                        break
                    problems = compare_raised(str(e).splitlines()[0], want)
                    if problems:
                        findings.append(Finding(backend, "mismatch", "; ".join(problems), inputs, program))
                        break
                    continue
                except Exception as e:
                    detail = "".join(traceback.format_exception_only(type(e), e)).strip()
                    kind = "known" if known_cause(backend, detail) else "crash"
                    findings.append(Finding(backend, kind, detail, inputs, program))
                    break
                problems = compare_raised(None, want) or compare(got, want, program.returns)
                if problems:
                    findings.append(Finding(backend, "mismatch", "; ".join(problems), inputs, program))
                    break
    finally:
        unload(module)
    return findings


# ---- shrinking a finding ----------------------------------------------------
#
# `python -m tools.fuzz --minimize FILE` reads a saved finding (its program,
# entry and inputs) and shrinks it: fewer examples, then statements deleted or
# replaced by their bodies and expressions replaced by a subexpression or a
# literal, as long as the batched call still fails the same way and the plain
# function still runs (no exception but the IndexError it raised before).


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def outcome(source: str, entry: str, inputs: tuple, backend: str, directory: str,
            index_errors: bool = False, strict: bool = False, seconds: int = 60):
    """How the batched call of `entry` in `source` fares against the plain
    function on `inputs`: ("ok" | "mismatch" | "crash" | "invalid", what),
    where "invalid" means the plain function failed (or took too long), and
    `what` is a description to compare across shrinking steps (with the
    values that differ if `strict`)."""
    import signal
    import warnings

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    module = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = Program(source, entry, (), (), 0, True)
            try:
                module = load(program, directory)
                plain = module.ctx.plain(entry)
            except SyntaxError as e:  # refused when decorated, at import: the call's crash
                sys.modules.pop(_module_name(program), None)
                return "crash", _normalized(f"{type(e).__name__}: {str(e.msg).splitlines()[0]}")
            except Exception as e:  # noqa: BLE001 - a shrinking step broke the program
                return "invalid", repr(e)
            batch = max(len(a) for a in inputs)
            want = []
            for i in range(batch):
                try:
                    result = plain(*example(inputs, i))
                except IndexError as e:
                    if not index_errors:
                        return "invalid", repr(e)
                    want.append(Raised(i, str(e)))
                    continue
                except Exception as e:  # noqa: BLE001
                    return "invalid", repr(e)
                if any(r is None or isinstance(r, (str, list, dict)) for r in _leaves(result)):
                    return "invalid", "a result is not a number or an array"
                want.append(result)
            try:
                got = getattr(module, entry)(*inputs, max_iterations=10**6, **BACKENDS[backend])
            except IndexError as e:
                if not _INDEX_ERROR.search(str(e)):
                    return "crash", "IndexError: " + _normalized(str(e))
                problems = compare_raised(str(e).splitlines()[0], want)
                return ("mismatch", _normalized(problems[0])) if problems else ("ok", "")
            except _Timeout:
                raise
            except Exception as e:  # noqa: BLE001
                message = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()[0]
                return "crash", _normalized(re.sub(r"^.*? in `.*?`: ", "", message))
            problems = compare_raised(None, want)
            if problems:
                return "mismatch", _normalized(problems[0])
            returns = []
            for leaf in _leaves(want[0]) if not isinstance(want[0], Raised) else ():
                returns.append(FLOAT if np.asarray(leaf).dtype.kind == "f" else INT)
            plain_results = [w for w in want if not isinstance(w, Raised)]
            problems = compare(got, plain_results, returns) if plain_results else []
            if problems:
                return "mismatch", problems[0] if strict else re.sub(r":.*", "", problems[0])
            return "ok", ""
    except _Timeout:
        return "invalid", "timeout"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if module is not None:
            unload(module)


def _normalized(text):
    return re.sub(r"\d+", "N", text)[:100]


def shrink(source: str, entry: str, inputs: tuple, backend: str, directory: str,
           strict: bool = False, log=None):
    """A smaller program and batch failing as `source` does on `inputs`:
    (source, inputs, outcome)."""
    index_errors = outcome(source, entry, inputs, backend, directory, index_errors=False)[0] == "invalid"
    target = outcome(source, entry, inputs, backend, directory, index_errors, strict)
    if target[0] not in ("mismatch", "crash"):
        raise ValueError(f"the finding does not reproduce: {target}")

    def fails(text, batch=None):
        return outcome(text, entry, batch or inputs, backend, directory, index_errors, strict) == target

    batch = max(len(a) for a in inputs)
    for i in reversed(range(batch)):  # fewer examples
        if max(len(a) for a in inputs) > 1:
            fewer = tuple(np.delete(a, i, axis=0) if len(a) > 1 else a for a in inputs)
            if fails(source, fewer):
                inputs = fewer
    while True:
        before = source
        for edit in (_statement_edits, _expression_edits):
            k = 0
            while True:
                candidate, k = edit(source, k)
                if candidate is None:
                    break
                if candidate != source and fails(candidate):
                    source = candidate
                    if log:
                        log(f"{len(source)} characters")
                else:
                    k += 1
        if source == before:
            return source, inputs, target


def _kept(node, statement):
    """Module-level statements that stay: imports, `ctx = ...`, `Box = ...`."""
    if not isinstance(node, ast.Module):
        return False
    return not (isinstance(statement, ast.FunctionDef) or (
        isinstance(statement, ast.Assign) and re.fullmatch(r"T\d+", ast.unparse(statement.targets[0]))))


def _blocks(tree):
    return [(node, field) for node in ast.walk(tree) for field in ("body", "orelse")
            if isinstance(getattr(node, field, None), list)]


def _statement_edits(source, k):
    """The k-th statement edit of `source` (deleting a statement, or keeping
    a compound statement's body or else-branch only), and k; (None, k) past
    the last one."""
    sites = [(b, i, action) for b, (node, field) in enumerate(_blocks(ast.parse(source)))
             for i in range(len(getattr(node, field))) for action in ("delete", "body", "orelse")]
    while k < len(sites):
        b, i, action = sites[k]
        tree = ast.parse(source)
        node, field = _blocks(tree)[b]
        block = getattr(node, field)
        statement = block[i]
        if _kept(node, statement):
            k += 1
            continue
        if action == "delete":
            new = block[:i] + block[i + 1:] or ([] if isinstance(node, ast.Module) else [ast.Pass()])
        elif isinstance(statement, (ast.If, ast.For, ast.While)) and getattr(statement, action):
            new = block[:i] + getattr(statement, action) + block[i + 1:]
        else:
            k += 1
            continue
        setattr(node, field, new)
        return ast.unparse(ast.fix_missing_locations(tree)), k
    return None, k


def _expression_edits(source, k):
    """The k-th expression edit: an expression replaced by one of its
    subexpressions or by 0, 1 or 0.5."""
    tree = ast.parse(source)
    kept = {id(n) for s in tree.body if _kept(tree, s) for n in ast.walk(s)}
    sites = []
    for position, node in enumerate(n for n in ast.walk(tree) if isinstance(n, ast.expr)):
        if id(node) in kept:
            continue
        children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
        sites += [(position, c) for c in range(len(children) + 3)]
    while k < len(sites):
        position, choice = sites[k]
        tree = ast.parse(source)
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.expr)]
        node = nodes[position]
        children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
        new = children[choice] if choice < len(children) else ast.Constant((0, 1, 0.5)[choice - len(children)])
        parent = next((p for p in ast.walk(tree) if node in list(ast.iter_child_nodes(p))), None)
        replaced = False
        for field, value in ast.iter_fields(parent) if parent is not None else ():
            if value is node:
                setattr(parent, field, new)
                replaced = True
            elif isinstance(value, list) and any(v is node for v in value):
                value[[id(v) for v in value].index(id(node))] = new
                replaced = True
        text = ast.unparse(ast.fix_missing_locations(tree)) if replaced else None
        if text is not None and len(text) < len(source):
            return text, k
        k += 1
    return None, k


def read_finding(path: str):
    """(source, entry, inputs) of a finding saved by tools/fuzz.py."""
    text = open(path).read()
    comments = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    call = next(line for line in comments if line.startswith("inputs: "))[len("inputs: "):]
    entry = call[: call.index("(")]
    inputs = eval("(" + call[len(entry) + 1: -1] + ",)", {"np": np})  # noqa: S307 - our own file
    source = "\n".join(line for line in text.splitlines() if not line.startswith("# ")) + "\n"
    return source, entry, inputs
