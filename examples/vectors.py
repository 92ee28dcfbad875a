"""Per-example vectors through recursion and a loop.

Each example carries a float64[3] and an int64[2] as well as its counter.
`spiral` keeps both vectors across two recursive calls (so they are stacked
and restored), and `relax` rewrites two vectors on every trip of a loop whose
trip count differs per example.  Under XLA such vectors live in register
files (see `RegisterFiles` in a generated `*_tf.py`), and after `spiral`'s
last call its restored vectors are dead, so the block that returns does not
write them back.
"""

from autobatch import Context

ctx = Context()


@ctx.batch
def spiral(v, w, n):
    if n <= 1:
        return v, w
    a, b = spiral(v * 0.5, w + 1, n - 1)
    c, d = spiral(a - v, b * 2, n - 2)
    return c + v, d - w


@ctx.batch
def relax(v, n):
    u = v
    while n > 0:
        u, v = v * 0.5 + 1.0, u - v
        n = n - 1
    return u + 2.0 * v
