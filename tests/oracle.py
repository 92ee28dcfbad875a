"""The backends every batched program answers to, in one place.

The suite's oracle: a batched call returns, example by example, what the
plain Python function returns on that example alone.  Each mode below is one
way to run the generated program (the keywords a batched call takes); a test
module that parametrizes over `MODES` checks every backend, and a backend
added here joins every such test at once.
"""

# {mode name: keywords of the batched call}
MODES = {
    "numpy": dict(backend="numpy"),
    "tf_graph": dict(backend="tensorflow"),
    "tf_xla": dict(backend="tensorflow", xla=True),
    "jax": dict(backend="jax"),
}
