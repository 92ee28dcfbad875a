"""Symbolic sizes cost nothing at run time: a symbolic program against the concrete one.

    python tools/bench_sizes.py [--nuts | --only-nuts]

For each function, the compiler builds the module twice (`Context.module_text`):
once at its symbolic signature (`insertion_sort(int64[n])`, what a call gets)
and once forced to the concrete one (`int64[32]`, what it got before sizes
were symbols: transpiler/sizes.py).  Both run on the same batch of 1,024 in
one process, calls alternating, after a first call that traces and compiles;
it prints the medians of 5 and their ratio.  The modules go to /tmp.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np
from transpiler import backends as B, loader, signature as S, sizes

def module_entry(ctx, relpath, name, signature, backend, tag):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = ctx.module_text(relpath, root, backend, [(name, signature, "")])
    path = os.path.join(tempfile.gettempdir(), f"bench_sizes_{name}_{tag}_{backend.suffix}.py")
    with open(path, "w") as f:
        f.write(text)
    module = loader.import_file(path, text)
    return module.PROGRAMS[name + sizes.T.signature_text(signature)]

import argparse
import inspect

from examples import nuts as N


def force(out):
    """Every array of a result read to the host (a call's time includes its work)."""
    if isinstance(out, tuple):
        for item in out:
            force(item)
    else:
        np.asarray(out)
from examples.sort import ctx as sort_ctx
from examples.vectors import ctx as vec_ctx

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--nuts", action="store_true", help="also NUTS's nuts_chain (100-d, 64 chains)")
parser.add_argument("--only-nuts", action="store_true", help="NUTS's nuts_chain alone")
options = parser.parse_args()

rng = np.random.default_rng(0)
cases = [
    (sort_ctx, "examples/sort.py", "insertion_sort", "(int64[32])", 1024, lambda b: (rng.integers(0, 1000, (b, 32)),), None),
    (vec_ctx, "examples/vectors.py", "spiral", "(float64[16], int64[16], int64[])", 1024,
     lambda b: (rng.normal(size=(b, 16)), rng.integers(0, 3, (b, 16)), rng.integers(1, 12, b)), None),
]
if options.nuts or options.only_nuts:
    # Whole chains of NUTS on a 100-d normal (10 warm-up + 20 kept
    # transitions into 32-row buffers), 64 chains: the program the sampler
    # runs, at the sizes its concrete programs were once generated for.
    _, nuts_chain = N.make_nuts_programs(N.standard_normal, 0.3)
    closure = dict(
        max_tree_depth=10,
        no_u_turn=inspect.getclosurevars(nuts_chain.context._functions["build_tree"].function).nonlocals["no_u_turn"],
        step_size=0.3,
        target=N.standard_normal,
    )

    def nuts_args(b, d=100, rows=32):
        x = rng.normal(size=(b, d))
        log_prob, grad = N.standard_normal(x)
        ints = lambda v: np.full(b, v, np.int64)
        return (N.Point(x, log_prob, grad), np.arange(b, dtype=np.int64), ints(0), ints(10), ints(20),
                np.zeros((b, rows, d)), np.zeros((b, rows), np.int64), np.zeros((b, rows), np.int64), np.zeros((b, rows)))

    text = ("(Point(float64[100], float64[], float64[100]), int64[], int64[], int64[], int64[], "
            "float64[32, 100], int64[32], int64[32], float64[32])")
    nuts_case = (nuts_chain.context, "examples/nuts.py", "nuts_chain", text, 64, nuts_args, closure)
    cases = [nuts_case] if options.only_nuts else cases + [nuts_case]
modes = {"numpy": ({}, "numpy"), "tf_xla": ({"xla": True}, "tensorflow"), "jax": ({}, "jax")}
for ctx, relpath, name, text, batch, make, closure in cases:
    concrete = S.parse(text, {"Point": N.Point})
    general = sizes.generalize(concrete)
    for mode, (kw, backend_name) in modes.items():
        if closure is not None and backend_name == "jax":
            continue  # examples/nuts.py's target is NumPy's; no JAX module is declared
        backend = B.resolve(backend_name)
        fs = {
            "concrete": module_entry(ctx, relpath, name, concrete, backend, "c"),
            "symbolic": module_entry(ctx, relpath, name, general, backend, "s"),
        }
        if closure is not None:
            fs = {label: factory(**closure) for label, factory in fs.items()}
        args = make(batch)
        for f in fs.values():
            f(*args, **kw)  # trace / compile
        times = {k: [] for k in fs}
        for _ in range(5):
            for label, f in fs.items():
                t = time.perf_counter()
                out = f(*args, **kw)
                force(out)
                times[label].append(time.perf_counter() - t)
        c, s = np.median(times["concrete"]), np.median(times["symbolic"])
        print(f"{name}{text} {mode} batch {batch}: concrete {c*1e3:.1f} ms, symbolic {s*1e3:.1f} ms, symbolic/concrete {s/c:.2f}", flush=True)
