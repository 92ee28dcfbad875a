"""Namedtuples in and out: rotate a point by quarter turns, recursively."""

import collections

from autobatch import Context

Point = collections.namedtuple("Point", ["x", "y"])

ctx = Context()


@ctx.batch
def rotate(p, turns):
    if turns <= 0:
        return p
    turned = rotate(p, turns - 1)
    return Point(-turned.y, turned.x)
