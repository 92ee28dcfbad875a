"""Runs a generated program batched and per example, and compares them.

Shared by tests/test_fuzz.py and tools/fuzz.py.  The oracle is the plain
Python function (`Context.plain`: the undecorated functions calling each
other) on Python ints and floats, one example at a time; the batched program
must agree with it exactly for ints and bools, and to a tolerance for floats.
Each program lives in a file of its own in a scratch folder, with its
generated modules next to it, so nothing is written into the repository.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import os
import sys
import traceback
from typing import Dict, List, Sequence

import numpy as np

from tools.fuzzgen import FLOAT, INT, Program  # noqa: F401 - Program is re-exported

BACKENDS = {
    "numpy": dict(backend="numpy"),
    "tf": dict(backend="tensorflow"),
    "xla": dict(backend="tensorflow", xla=True),
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

    def add(self, backend, examples):
        self.inputs[backend] = self.inputs.get(backend, 0) + examples

    def add_program(self, backend):
        self.programs[backend] = self.programs.get(backend, 0) + 1

    def merge(self, other):
        for mine, theirs in ((self.programs, other.programs), (self.inputs, other.inputs)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v

    def summary(self) -> str:
        return ", ".join(
            f"{b}: {self.programs[b]} programs / {self.inputs.get(b, 0)} inputs" for b in self.programs
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


def load(program: Program, directory: str):
    """Writes the program's source under `directory` and imports it."""
    digest = hashlib.sha256(program.source.encode()).hexdigest()[:16]
    name = f"fuzz_{digest}"
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
        if name == "d":
            out.append(rng.integers(0, program.max_depth + 1, n))
        elif kind == INT:
            small = rng.integers(-12, 13, n)
            large = rng.integers(-9999, 10000, n)
            out.append(np.where(rng.random(n) < 0.85, small, large))
        else:
            smooth = np.round(rng.normal(0.0, 4.0, n), 3)
            special = rng.choice([0.0, 0.5, -1.5, 1.0, 3.0, 1e5], n)
            out.append(np.where(rng.random(n) < 0.7, smooth, special))
    return tuple(out)


def example(inputs, i):
    """The i-th example as Python scalars (a batch of one is broadcast)."""
    return tuple(a[i if len(a) > 1 else 0].item() for a in inputs)


def expected(module, program: Program, inputs, batch: int) -> list:
    plain = module.ctx.plain(program.entry)
    results = []
    for i in range(batch):
        try:
            results.append(plain(*example(inputs, i)))
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
        if kind == FLOAT:
            if leaf.dtype.kind != "f":
                problems.append(f"result {k}: dtype {leaf.dtype}, expected a float")
            close = np.isclose(leaf, column, rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            if leaf.dtype.kind not in ("i", "b") or column.dtype.kind not in ("i", "b"):
                problems.append(f"result {k}: dtype {leaf.dtype}, expected {column.dtype}")
            close = leaf == column
        bad = np.flatnonzero(~close)
        if bad.size:
            i = int(bad[0])
            problems.append(
                f"result {k}: {bad.size} example(s) differ, first #{i}: "
                f"got {leaf[i]!r}, expected {column[i]!r}"
            )
    return problems


def run_program(program: Program, backends, seed: int, directory: str,
                batches=BATCH_SIZES, counts: Counts = None) -> List[Finding]:
    """Checks `program` on `backends` for one input batch per batch size."""
    module = load(program, directory)
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
                try:
                    got = entry(*inputs, **BACKENDS[backend])
                except Exception as e:
                    detail = "".join(traceback.format_exception_only(type(e), e)).strip()
                    kind = "known" if known_cause(backend, detail) else "crash"
                    findings.append(Finding(backend, kind, detail, inputs, program))
                    break
                problems = compare(got, want, program.returns)
                if problems:
                    findings.append(Finding(backend, "mismatch", "; ".join(problems), inputs, program))
                    break
    finally:
        unload(module)
    return findings
