"""Collatz step counts: a `while` loop whose trip count differs per example."""

from autobatch import Context

ctx = Context()


@ctx.batch
def collatz_steps(x):
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return steps
