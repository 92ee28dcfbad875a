"""Doubly recursive Fibonacci numbers (fib(0) = fib(1) = 1)."""

from autobatch import Context

ctx = Context()


@ctx.batch
def fib(n):
    if n <= 1:
        return 1
    return fib(n - 1) + fib(n - 2)
