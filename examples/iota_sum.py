"""Tail recursion: acc + n + (n - 1) + ... + 1; runs at any n with a tiny stack."""

from autobatch import Context

ctx = Context()


@ctx.batch
def iota_sum(n, acc):
    if n <= 0:
        return acc
    return iota_sum(n - 1, acc + n)
