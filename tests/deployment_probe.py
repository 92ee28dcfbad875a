"""Runs the checked-in artifact as a deployment would: `python deployment_probe.py BACKEND`.

Started by tests/test_deployment.py in an environment where the compiler's
packages are not installed: for BACKEND=numpy neither gast, black nor
TensorFlow; for BACKEND=tensorflow, black (TensorFlow itself requires gast,
for its AutoGraph, so a TensorFlow deployment has it).  It

1. imports every generated module of BACKEND under generated/ and calls
   each of its programs once, on arguments made from the program's
   signature, printing the results (JSON) for the test to compare with the
   same calls in the full environment;
2. for NumPy, runs the user's example modules through their Contexts in
   frozen mode (the corpus of examples/corpus.py, and NUTS sampling),
   comparing each batched result with plain Python per example;
3. checks that neither a missing package nor the compiler's own modules
   (`transpiler.pipeline`, the passes, the emitter) were imported.

Also importable: `program_results` is what the full environment computes.
"""

import importlib
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIXES = {"numpy": "_np", "tensorflow": "_tf"}
ABSENT = {
    "numpy": ("gast", "black", "blib2to3", "tensorflow"),
    "tensorflow": ("black", "blib2to3"),
}
# The compiler's own modules: a current artifact never loads them.
COMPILER_MODULES = ("transpiler.pipeline", "transpiler.frontend", "transpiler.ir",
                    "transpiler.passes", "transpiler.emit")


def generated_modules(backend):
    """Module names of every generated module of `backend`, sorted."""
    names = []
    folder = os.path.join(ROOT, "generated")
    for where, dirs, files in os.walk(folder):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(SUFFIXES[backend] + ".py"):
                rel = os.path.relpath(os.path.join(where, f[:-3]), ROOT)
                names.append(rel.replace(os.sep, "."))
    return names


def arguments(signature_text, classes):
    """A batch of two examples for a signature: ints 1, floats 0.5, bools True."""
    from transpiler import signature, types

    def leaf(pattern):
        if isinstance(pattern, types.TupleType):
            values = [leaf(e) for e in pattern.elements]
            return pattern.cls(*values) if pattern.cls not in (None, list) else type(
                [] if pattern.cls is list else ()
            )(values)
        value = {"b": True, "f": 0.5}.get(pattern.dtype.kind, 1)
        # A symbolic size (`float64[n]`: a negative placeholder until a call binds it) gets 3.
        shape = tuple(3 if d < 0 else d for d in pattern.shape)
        return np.full((2,) + shape, value, pattern.dtype)

    return [leaf(p) for p in signature.parse(signature_text, classes)]


def closure_values(module, key):
    """The values a closure program is made with: the examples' reference
    NUTS target, as `[tool.autobatch.closures]` declares it and as a user's
    module would pass it."""
    from examples.nuts import make_nuts_programs, standard_normal

    step, chain = make_nuts_programs(standard_normal, 0.25)
    return {c: step.context._closure_value(c, chain) for c in module.CLOSURES[key]}


def to_lists(value):
    if isinstance(value, (tuple, list)):
        return [to_lists(v) for v in value]
    return np.asarray(value).tolist()


def program_results(backend):
    """{module: {program: result as lists}} for one call of every program."""
    out = {}
    for name in generated_modules(backend):
        module = importlib.import_module(name)
        results = {}
        for key, entry in sorted(module.PROGRAMS.items()):
            if module.CLOSURES.get(key):
                entry = entry(**closure_values(module, key))
            stackless = key.endswith(" stackless")
            text = key[key.index("(") :].removesuffix(" stackless")
            # A guard against a program that would not stop on these arguments
            # (the stackless driver has no such limit: its loops are Python's).
            options = {} if stackless else {"max_iterations": 100000}
            results[key] = to_lists(entry(*arguments(text, vars(module)), **options))
        out[name] = results
    return out


def frozen_examples(backend):
    """The corpus through its Contexts, frozen: batched == plain Python per example."""
    from examples.corpus import CASES

    checked = 0
    for case in CASES:
        inputs = case.inputs(np.random.default_rng(0), 6)
        got = case.function(*inputs, backend=backend, max_stack_depth=case.max_stack_depth)
        plain = case.function.context.plain(case.function.name)
        for k in range(6):
            want = plain(*(example(a, k) for a in inputs))
            if not same(example(got, k), want):
                raise AssertionError(f"{case.name} example {k}: batched {example(got, k)} != {want}")
        checked += 1
    return checked


def example(batched, k):
    """Example `k` of batched values (of a tuple or namedtuple: each field's `k`)."""
    if isinstance(batched, tuple) and hasattr(batched, "_fields"):
        return type(batched)(*(example(v, k) for v in batched))
    if isinstance(batched, (tuple, list)):
        return [example(v, k) for v in batched]
    return np.asarray(batched)[k]


def same(batched, plain):
    """Equal values, floats to within rounding (NumPy's and Python's math differ in the last bit)."""
    if isinstance(plain, (tuple, list)) and not isinstance(batched, np.ndarray):
        return len(batched) == len(plain) and all(map(same, batched, plain))
    a, b = np.asarray(batched, float), np.asarray(plain, float)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True)


def frozen_sampler():
    """NUTS on the NumPy backend from the user's module, frozen."""
    from examples.nuts_sampler import Sampler, standard_normal

    samples = Sampler(standard_normal(3), 0.25).sample(np.zeros((4, 3)), np.arange(4), 20)
    assert samples.x.shape == (20, 4, 3) and np.all(np.isfinite(samples.x))
    return float(samples.x.var())


def main(backend):
    os.environ["AUTOBATCH_FROZEN"] = "1"
    for package in ABSENT[backend]:
        try:
            importlib.import_module(package)
        except ImportError:
            continue
        raise AssertionError(f"{package} is importable here; the probe needs it absent")
    report = {"programs": program_results(backend)}
    if backend == "numpy":  # the Contexts' path is the same for TensorFlow, only slower
        report["cases"] = frozen_examples(backend)
    if backend == "numpy":
        report["sampler_variance"] = frozen_sampler()
    loaded = sorted(
        m for m in sys.modules
        if m.split(".")[0] in ABSENT[backend] or m.startswith(COMPILER_MODULES)
    )
    assert not loaded, f"imported {loaded}"
    print(json.dumps(report))


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    main(sys.argv[1])
