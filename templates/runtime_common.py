"""Runtime helpers shared by both backends (copied into every generated module).

They use NumPy only: they run outside the batched loop, on its results.
"""

import linecache
import typing

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


def note_source_line(error, block_lines, block_prefix):
    """Adds the user's source line to an error raised inside a block function.

    Python errors raised by a primitive (in NumPy, or while TensorFlow traces)
    pass through a block function; the nearest `# file:line  text` comment
    above the failing generated line names the user's line.
    """
    frame, found = error.__traceback__, None
    while frame is not None:
        code = frame.tb_frame.f_code
        if block_prefix in code.co_name:
            found = (code.co_filename, frame.tb_lineno, code.co_name)
        frame = frame.tb_next
    if found is None:
        return
    filename, lineno, name = found
    for number in range(lineno, 0, -1):
        text = linecache.getline(filename, number).strip()
        if text.startswith("# ") and ":" in text.split()[1]:
            error.add_note(f"autobatch: raised by the batched code for {text[2:]}")
            return
    suffix = name.rsplit("_block_", 1)[-1]
    if suffix.isdigit() and int(suffix) < len(block_lines):
        error.add_note(f"autobatch: raised by the batched code for {block_lines[int(suffix)]}")


class Profile(typing.NamedTuple):
    """What one batched call did, block by block (from `profile=True`)."""

    block_lines: tuple  # where each block comes from in the source
    block_runs: tuple  # loop iterations that ran each block
    block_active: tuple  # examples at each block, summed over its runs
    batch: int
    deepest_call: int  # the deepest recursion any example reached

    @property
    def iterations(self):
        return sum(self.block_runs)

    @property
    def utilization(self):
        """Useful example-steps / (iterations x batch): 1.0 is perfect batching."""
        total = self.iterations * self.batch
        return sum(self.block_active) / total if total else 1.0

    def report(self):
        lines = [
            f"{self.iterations} iterations over {self.batch} examples, utilization "
            f"{self.utilization:.1%}, deepest call {self.deepest_call}",
            f"{'block':>5} {'runs':>8} {'active/run':>10}  source",
        ]
        for k, (where, runs, active) in enumerate(
            zip(self.block_lines, self.block_runs, self.block_active)
        ):
            mean = active / runs if runs else 0.0
            lines.append(f"{k:>5} {runs:>8} {mean:>10.1f}  {where}")
        return "\n".join(lines)


def make_profile(counters, block_lines, batch):
    runs, active, deepest = counters
    return Profile(
        tuple(block_lines),
        tuple(int(r) for r in np.asarray(runs)),
        tuple(int(a) for a in np.asarray(active)),
        int(batch),
        int(deepest),
    )
