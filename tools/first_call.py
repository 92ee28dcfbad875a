"""First-call time: a new function's first batched call, end to end.

Each measurement is a fresh Python process with an empty generated
directory, so it pays everything a user's first call pays: importing the
compiler, parsing, type inference (twice for a symbolic signature), emitting
and formatting the module, importing it, and tracing or compiling the
program.  Two functions of the examples, copied where they have no
checked-in modules: `insertion_sort` of 8 (examples/sort.py, a vector loop)
and `spiral` (examples/vectors.py, double recursion over two vectors).

    python tools/first_call.py --backends numpy tensorflow jax --rounds 3
    python tools/first_call.py --backends jax --trees /path/to/old/checkout .

With several `--trees` (checkouts of this repository) the rounds alternate
between them, so that a loaded machine's drift falls on each alike; the
medians are printed per tree and backend.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

# The examples whose functions are timed, copied into a scratch directory
# outside any project: there they have no checked-in modules, and build.
EXAMPLES = ("sort.py", "vectors.py")

# Run in the child: times both first calls, prints "sort_seconds spiral_seconds".
CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    import sort, vectors
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    np.asarray(sort.insertion_sort(rng.integers(0, 9, (4, 8)), backend=sys.argv[1]))
    sort_s = time.perf_counter() - start
    start = time.perf_counter()
    vectors.spiral(rng.normal(size=(4, 3)), rng.integers(0, 3, (4, 2)), rng.integers(1, 5, 4), backend=sys.argv[1])
    print(f"{sort_s:.3f} {time.perf_counter() - start:.3f}")
    """
)


def measure(tree, backend, workdir):
    """(insertion_sort s, spiral s) of one fresh process on `tree`'s code."""
    env = dict(
        os.environ,
        PYTHONPATH=os.path.abspath(tree),
        AUTOBATCH_CACHE_DIR=tempfile.mkdtemp(prefix="first-call-cache-"),
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, backend, workdir],
        env=env,
        cwd=workdir,  # not a checkout: `python -c` puts the working directory first on sys.path
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sort, spiral = out.split()[-2:]
    return float(sort), float(spiral)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["numpy", "tensorflow", "jax"])
    parser.add_argument("--trees", nargs="+", default=["."], help="checkouts to compare")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="first-call-user-")
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")
    for name in EXAMPLES:
        shutil.copy(os.path.join(examples, name), workdir)
    times = {}
    for _ in range(args.rounds):
        for backend in args.backends:
            for tree in args.trees:
                times.setdefault((tree, backend), []).append(measure(tree, backend, workdir))
    print(f"{'tree':30} {'backend':10} {'insertion_sort s':>16} {'spiral s':>9}  (medians of {args.rounds})")
    for (tree, backend), rows in times.items():
        sort = statistics.median(r[0] for r in rows)
        spiral = statistics.median(r[1] for r in rows)
        print(f"{tree:30} {backend:10} {sort:16.2f} {spiral:9.2f}")


if __name__ == "__main__":
    main()
