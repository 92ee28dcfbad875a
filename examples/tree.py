"""A walk down a binary decision tree stored in module-level tables.

The tree is three constant tables indexed by node: `FEATURE[node]` says
which coordinate of the example to test, `THRESHOLD[node]` against what,
and `LEFT[node]` / `RIGHT[node]` where to go (-1: a leaf, whose `VALUE` is
the prediction).  The generated module imports the tables from here; it
never copies their values.
"""

import numpy as np

from autobatch import Context

ctx = Context()

#             0    1    2    3    4    5    6    7    8
FEATURE = np.array([0, 1, 1, 0, -1, -1, -1, -1, -1])
THRESHOLD = np.array([0.0, -0.5, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
LEFT = np.array([1, 3, 5, 7, -1, -1, -1, -1, -1])
RIGHT = np.array([2, 4, 6, 8, -1, -1, -1, -1, -1])
VALUE = (0.0, 0.0, 0.0, 0.0, 10.0, 20.0, 30.0, 40.0, 50.0)


@ctx.batch
def predict(x):
    """The leaf value for point `x` (a vector), and the depth it was found at."""
    node = 0
    depth = 0
    while True:
        if LEFT[node] < 0:
            return VALUE[node], depth
        if x[FEATURE[node]] <= THRESHOLD[node]:
            node = LEFT[node]
        else:
            node = RIGHT[node]
        depth += 1
