"""Mutual recursion: parity by counting down (tail calls, so no stack grows)."""

from autobatch import Context

ctx = Context()


@ctx.batch
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@ctx.batch
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)
