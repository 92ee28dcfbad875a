"""The errors a batched call raises at run time.

They live in the runtime, not the compiler, so a generated module imported
where the compiler is not installed raises the same classes that
`transpiler.errors` re-exports: an `except StackOverflowError` written against
either catches both.
"""


class StackOverflowError(RuntimeError):
    """An example recursed deeper than `max_stack_depth`.

    Raised after the batched program stops (XLA cannot raise from inside a
    loop, so overflow comes back as data and is turned into this error).
    """


class IterationLimitError(RuntimeError):
    """Some examples were still running after `max_iterations` loop iterations.

    The limit is off unless asked for (`max_iterations=` on a call or on the
    Context); the message names the block, and so the source line, where the
    unfinished examples wait: usually the loop that does not end.
    """


class StackMemoryError(MemoryError):
    """The stacks of a call would need more than `max_stack_bytes`.

    Raised before anything is allocated: stacks take max_stack_depth x batch
    x (bytes per example and level), which a large batch at a large depth
    turns into more memory than the machine has.
    """
