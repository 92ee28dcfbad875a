"""`Optional`: a per-example value that may be None.

Code written for one example often returns `None` for "not found" on some
paths and a number on others, and tests `if r is None:`.  Batched, such a
value is two arrays: `present` ([batch] bool: False where the example holds
None) and `value` ([batch, *event]: the number where present, zeros
elsewhere).  A batched function that returns None on some paths returns an
`Optional`; `tolist()` gives each example's Python value.
"""

import typing

import numpy as np


class Optional(typing.NamedTuple):
    """Per example: `value` where `present`, else None."""

    present: typing.Any  # [batch] bool
    value: typing.Any  # [batch, *event]

    def tolist(self):
        """Each example's value as plain Python: a number (or a list for a
        per-example array) where present, None elsewhere."""
        present = np.asarray(self.present).tolist()
        values = np.asarray(self.value).tolist()
        return [v if p else None for p, v in zip(present, values)]
