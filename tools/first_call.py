"""First-call time: a new function's first batched call, end to end.

Each measurement is a fresh Python process with an empty generated
directory, so it pays everything a user's first call pays: importing the
compiler, parsing, type inference (twice for a symbolic signature), emitting
and formatting the module, importing it, and tracing or compiling the
program.  Two functions of a user's file: an insertion sort of 8 (a vector
loop) and `spiral` (double recursion over two vectors).

    python tools/first_call.py --backends numpy tensorflow jax --rounds 3
    python tools/first_call.py --backends jax --trees /path/to/old/checkout .

With several `--trees` (checkouts of this repository) the rounds alternate
between them, so that a loaded machine's drift falls on each alike; the
medians are printed per tree and backend.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

USER_FILE = textwrap.dedent(
    '''
    import tempfile

    from autobatch import Context

    ctx = Context(generated_dir=tempfile.mkdtemp(prefix="first-call-"))


    @ctx.batch
    def insertion_sort(v):
        for i in range(1, len(v)):
            key = v[i]
            j = i - 1
            while j >= 0 and v[j] > key:
                v[j + 1] = v[j]
                j -= 1
            v[j + 1] = key
        return v


    @ctx.batch
    def spiral(v, w, n):
        if n <= 1:
            return v, w
        a, b = spiral(v * 0.5, w + 1, n - 1)
        c, d = spiral(a - v, b * 2, n - 2)
        return c + v, d - w
    '''
)

# Run in the child: times both first calls, prints "sort_seconds spiral_seconds".
CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    import first_call_user as user
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    np.asarray(user.insertion_sort(rng.integers(0, 9, (4, 8)), backend=sys.argv[1]))
    sort = time.perf_counter() - start
    start = time.perf_counter()
    user.spiral(rng.normal(size=(4, 3)), rng.integers(0, 3, (4, 2)), rng.integers(1, 5, 4), backend=sys.argv[1])
    print(f"{sort:.3f} {time.perf_counter() - start:.3f}")
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
    with open(os.path.join(workdir, "first_call_user.py"), "w") as f:
        f.write(USER_FILE)
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
