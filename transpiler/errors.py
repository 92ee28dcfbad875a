"""The exceptions a user of autobatch can see.

Every build-time error points at the user's source (file, line, column and the
line's text), never at the compiler's internals.
"""


class UnsupportedSyntaxError(SyntaxError):
    """The decorated function uses Python that autobatch does not batch.

    A `SyntaxError` so that tools and tracebacks show the user's file, line,
    column and source text; `hint` says what to write instead.
    """

    def __init__(self, message, origin=None, hint=None):
        self.hint = hint
        full = message if not hint else f"{message}\n  hint: {hint}"
        if origin is None:
            super().__init__(full)
        else:
            super().__init__(
                full, (origin.filename, origin.line, origin.col + 1, origin.text)
            )


class BatchTypeError(TypeError):
    """Type inference failed: incompatible values meet, or a primitive fails.

    The message names the user's file and line.
    """


class StackOverflowError(RuntimeError):
    """An example recursed deeper than `max_stack_depth`.

    Raised after the batched program stops (XLA cannot raise from inside a
    loop, so overflow comes back as data and is turned into this error).
    """


class StaleGeneratedCodeError(RuntimeError):
    """In frozen mode, a generated module is missing or out of date."""


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
