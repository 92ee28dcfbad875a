"""Functions user code calls that the compiler recognizes by identity.

Below both the API (`transpiler.context` re-exports them, `from transpiler
import truthy`) and the IR builder (which drops a `truthy(c)` call from a
condition), so neither imports the other.
"""

import numpy as np


def truthy(x):
    """A condition's truth in a dry run; a no-op in batched code.

    In a dry run the function sees batch-of-one arrays, and `if truthy(c):`
    turns such a `c` into a Python bool.  The compiler drops `truthy` from
    batched code, where every condition is per example anyway.  Given more
    than one value, it returns `x` unchanged.
    """
    size = getattr(x, "size", None)
    if size is None and hasattr(x, "shape"):  # a tf.Tensor
        size = int(np.prod(x.shape))
    if size == 1:
        return bool(np.asarray(x).reshape(-1)[0])
    return x
