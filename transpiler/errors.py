"""The exceptions a user of autobatch can see.

Every build-time error points at the user's source (file, line, column and the
line's text), never at the compiler's internals.  The run-time errors a
batched call raises live in the runtime (a generated module raises them
without the compiler) and are re-exported here.
"""

from autobatch_runtime.errors import IterationLimitError, StackMemoryError, StackOverflowError

def where(origin) -> str:
    """The prefix of a build-time message that names the user's line:
    `file:line: in `text`: ` (empty without an origin)."""
    if origin is None:
        return ""
    return f"{origin.filename}:{origin.line}: in `{origin.text}`: "


__all__ = [
    "BatchTypeError",
    "IterationLimitError",
    "StackMemoryError",
    "StackOverflowError",
    "StaleGeneratedCodeError",
    "UnsupportedSyntaxError",
]


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


class StaleGeneratedCodeError(RuntimeError):
    """In frozen mode, a generated module is missing or out of date."""
