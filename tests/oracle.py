"""The backends every batched program answers to, in one place.

The suite's oracle: a batched call returns, example by example, what the
plain Python function returns on that example alone.  Each mode below is one
way to run the generated program (the keywords a batched call takes); a test
module that parametrizes over `MODES` checks every backend, and a backend
added here joins every such test at once.
"""

import os

# {mode name: keywords of the batched call}
MODES = {
    "numpy": dict(backend="numpy"),
    "tf_graph": dict(backend="tensorflow"),
    "tf_xla": dict(backend="tensorflow", xla=True),
    "jax": dict(backend="jax"),
}

# Batch sizes: one example, a few, many; inputs give each example its own
# path and trip count.
BATCHES = (1, 7, 64)

# Modes that compile a program per input shape (XLA, jax.jit: seconds per
# program and size).  Each case runs there at one of BATCHES, in turn, so every
# size is covered across cases; AUTOBATCH_ORACLE=full runs every size.
COMPILED_PER_SHAPE = ("tf_xla", "jax")
FULL = os.environ.get("AUTOBATCH_ORACLE") == "full"


def oracle_params(names, runs_on=lambda name, mode: True, full=FULL):
    """[(name, batch, mode)] for a module's cases: every mode a case runs on,
    every batch size where a size costs no compile."""
    params = []
    for k, name in enumerate(names):
        for batch in BATCHES:
            for mode in MODES:
                if not runs_on(name, mode):
                    continue
                if full or mode not in COMPILED_PER_SHAPE:
                    params.append((name, batch, mode))
                elif batch == BATCHES[(k + COMPILED_PER_SHAPE.index(mode)) % len(BATCHES)]:
                    params.append((name, batch, mode))  # a size apart from the other compiler's
    return params
