"""Plain per-example branching: a single `if`, and nested `if`/`elif`/`else`."""

from autobatch import Context

ctx = Context()


@ctx.batch
def absolute(x):
    if x < 0:
        x = -x
    return x


@ctx.batch
def quadrant(x, y):
    if x > 0:
        if y > 0:
            q = 1
        else:
            q = 4
    elif x < 0:
        if y > 0:
            q = 2
        else:
            q = 3
    else:
        q = 0
    return q
