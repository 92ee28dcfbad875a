"""Insertion sort in place, and a histogram: item assignment per example.

`v[j + 1] = v[j]` updates this example's own vector (the batched code does
one scatter per assignment); each example moves its elements a different
number of times.
"""

import numpy as np

from autobatch import Context

ctx = Context()


@ctx.batch
def insertion_sort(v):
    """`v` sorted ascending (a new array: the caller's is left as it was)."""
    for i in range(1, len(v)):
        key = v[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = key
    return v


@ctx.batch
def histogram(xs, n):
    """How often each of the values 0, 1, 2, 3 occurs among the first `n`
    entries of `xs` (other values are not counted)."""
    counts = np.zeros(4, dtype=np.int64)
    for i in range(len(xs)):
        b = xs[i]
        if i < n and 0 <= b < 4:
            counts[b] += 1
    return counts
