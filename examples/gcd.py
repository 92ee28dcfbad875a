"""Greatest common divisor by repeated subtraction, swapping the arguments."""

from autobatch import Context

ctx = Context()


@ctx.batch
def gcd(a, b):
    if a == b:
        return a
    if a < b:
        return gcd(b, a)
    return gcd(a - b, b)
