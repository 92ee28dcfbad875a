"""Symbolic sizes cost nothing at run time: a symbolic program against the concrete one.

    python tools/bench_sizes.py

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

from examples.sort import ctx as sort_ctx
from examples.vectors import ctx as vec_ctx

rng = np.random.default_rng(0)
cases = [
    (sort_ctx, "examples/sort.py", "insertion_sort", "(int64[32])", lambda b: (rng.integers(0, 1000, (b, 32)),)),
    (vec_ctx, "examples/vectors.py", "spiral", "(float64[16], int64[16], int64[])",
     lambda b: (rng.normal(size=(b, 16)), rng.integers(0, 3, (b, 16)), rng.integers(1, 12, b))),
]
modes = {"numpy": ({}, "numpy"), "tf_xla": ({"xla": True}, "tensorflow"), "jax": ({}, "jax")}
for ctx, relpath, name, text, make in cases:
    concrete = S.parse(text)
    general = sizes.generalize(concrete)
    for mode, (kw, backend_name) in modes.items():
        backend = B.resolve(backend_name)
        fs = {
            "concrete": module_entry(ctx, relpath, name, concrete, backend, "c"),
            "symbolic": module_entry(ctx, relpath, name, general, backend, "s"),
        }
        args = make(1024)
        for f in fs.values():
            f(*args, **kw)  # trace / compile
        times = {k: [] for k in fs}
        for _ in range(5):
            for label, f in fs.items():
                t = time.perf_counter()
                out = f(*args, **kw)
                np.asarray(out if not isinstance(out, tuple) else out[0])
                times[label].append(time.perf_counter() - t)
        c, s = np.median(times["concrete"]), np.median(times["symbolic"])
        print(f"{name}{text} {mode} batch 1024: concrete {c*1e3:.1f} ms, symbolic {s*1e3:.1f} ms, symbolic/concrete {s/c:.2f}", flush=True)
