"""Binary search over a per-example sorted vector.

Each example has its own sorted vector `v` and value `x`; the loop runs a
different number of times per example and reads `v[mid]` at a per-example
index (one gather per iteration when batched).
"""

from autobatch import Context

ctx = Context()


@ctx.batch
def bisect_left(v, x):
    """The first position `i` with `v[i] >= x` (`len(v)` if there is none)."""
    lo = 0
    hi = len(v)
    while lo < hi:
        mid = (lo + hi) // 2
        if v[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
