"""Runtime helpers shared by both backends (copied into every generated module).

They use NumPy only: they run outside the batched loop, on its results.
"""

import numpy as np

try:  # the compiler's own class when it is installed, so `except` clauses match
    from transpiler.errors import StackOverflowError
except ImportError:  # running without the compiler

    class StackOverflowError(RuntimeError):
        """An example recursed deeper than `max_stack_depth`."""


def check_overflow(function, overflow_at, block_lines, max_stack_depth):
    """Raises StackOverflowError if any example overflowed a stack."""
    overflow_at = np.asarray(overflow_at)
    examples = np.nonzero(overflow_at >= 0)[0]
    if examples.size:
        where = block_lines[overflow_at[examples[0]]]
        raise StackOverflowError(
            f"{function}: example(s) {examples.tolist()[:10]} recursed deeper than "
            f"max_stack_depth={max_stack_depth} ({where}); call again with a "
            f"larger max_stack_depth (e.g. max_stack_depth={2 * max_stack_depth})"
        )
