"""A recursive function returning a tuple: quotient and remainder by subtraction."""

from autobatch import Context

ctx = Context()


@ctx.batch
def divide(a, b):
    if a < b:
        return 0, a
    q, r = divide(a - b, b)
    return q + 1, r
