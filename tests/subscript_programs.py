"""Programs exercising per-example subscripts (tests/test_subscripts.py).

`v[i]`, `m[i, j]`, `m[i][j]`, static slices, `len(v)`, `v.shape`, `v.ndim`,
module-level constant tables indexed per example, item assignment
(`v[i] = x`, `v[i] += 1`, `m[i, j] = 0`, `v[1:3] = x`) and `while True:`,
each in straight-line code, in conditions, in loop bounds and through
recursion.

Generated modules go to a temporary folder, as for tests/language.py, never
to the repository's generated/.  `@batch` puts a function in a Context of
its own (a folder of its own under that one): a call with a new signature
regenerates the whole module of its Context, so one Context for all of them
would regenerate (and format) every program again for each new one.
Functions that call each other share a Context (`values`, `faults`).

Lines the tests look for are marked with a comment `# <-- name`.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

from transpiler import Context

GENERATED = tempfile.mkdtemp(prefix="autobatch-test-subscripts-")


def _context(name):
    return Context(generated_dir=os.path.join(GENERATED, name))


def batch(function):
    """`@ctx.batch`, with a Context of its own."""
    return _context(function.__name__).batch(function)


values = _context("values")  # callers and their callees
faults = _context("faults")

# Module-level constant tables, indexed per example.
TABLE = np.array([3, 1, 4, 1, 5, 9, 2, 6])
WEIGHTS = (0.5, 1.5, -2.0, 4.0, 8.0)  # a tuple of numbers
GRID = np.arange(20).reshape(4, 5)
# A linked list: NEXT[k] follows k, -1 ends it.
NEXT = np.array([3, 5, -1, 6, 2, 4, -1, 0])
SCORE = (1.5, -2.0, 0.25, 3.0, -1.0, 0.5, 2.0, 4.5)


# ---- reading --------------------------------------------------------------


@batch
def read_int(v, i):
    # v: int64[8]; i: per example in [-8, 8) (negative indices wrap)
    a = v[i]
    b = v[-1]
    c = v[0] + v[-len(v)]
    d = v[v[i] % 8]  # an index read from the data
    return a, b, c, d, v[i] * 10 + v[2]


@batch
def read_float(v, i):
    # v: float64[5]; i: per example in [0, 5); i - 1 wraps to v[-1] at 0
    a = v[i] * 2.0
    b = v[i - 1]
    return a + b + v[-2], v[i] > 0.0


@batch
def read_matrix(m, i, j):
    # m: int64[4, 5]; i in [-4, 4), j in [-5, 5)
    a = m[i, j]
    b = m[i][j]
    row = m[i]
    col = m[:, j]
    mixed = m[i, 1:4][j % 3] + len(m[i]) + m[1:3, j]
    return a, b, row, col, m[-1, j] + m[i, -1], row[j] - col[i], m[i, ::-1], mixed


@batch
def read_slices(v, m):
    # v: int64[6]; m: int64[4, 5]; static slices keep their per-example shape
    head = v[1:4]
    back = v[::-1]
    tail = v[-3:]
    odd = v[:-1:2]
    first_column = m[:, 0]
    block = m[1:3, ::-1]
    down = v[4:0:-2]
    return head * 2, back, tail + odd, first_column, block, back[0] - v[-1], down, m[::-1, 1]


@batch
def shapes(v, m):
    # len(v), v.shape, v.ndim, v.size: static per-example facts
    n = len(v)
    rows, cols = m.shape
    facts = n + 10 * v.shape[0] + 100 * v.ndim + 1000 * m.ndim + 10000 * np.shape(m)[1]
    return facts, rows * cols + len(m) + m.shape[-1] + m.size, v[n - 1]


@batch
def tables(i, j):
    # i in [-8, 8), j in [-5, 5): module-level constants indexed per example
    a = TABLE[i]
    b = WEIGHTS[j]
    c = GRID[i % 4, j]
    d = GRID[i % 4][j]
    row = GRID[i % 4]
    column = GRID[:, j]
    return a, b, c, d, TABLE[i] + TABLE[2] + TABLE[-1], row * 2, column - row[0], GRID[i % 4, 2]



@batch
def local_lists(x, k):
    # x: float per example, k in [-3, 3): a list display of like values
    # indexed per example, and a `for` over a local list of constants
    options = [x, x * 2.0, x + 7.0]
    total = 0
    for gap in [5, 3, 1]:
        total = total * 10 + gap * (k + 4)
    return options[k], total


@batch
def index_tuple_by_bool(x, flag):
    # flag: a bool per example, which indexes as Python's int (False 0, True 1)
    return (x, 2.0 * x)[flag], [x + 1.0, x - 1.0][flag == (x > 0.0)]


@batch
def local_list_out_of_range(x, k):
    options = (x, x + 1)
    return options[k]  # <-- local_list_out_of_range


# ---- in conditions, loop bounds, loops ------------------------------------


@batch
def branch_on_element(v, i):
    # the condition reads v[i]; the branches read other elements
    if v[i] > 0:
        x = v[i] + v[0]
    elif v[i] == 0:
        x = v[-1]
    else:
        x = -v[i]
    return x


@batch
def loop_over_elements(v, k):
    # bounds: len(v) and an element; a while condition with a subscript
    total = 0
    for t in range(len(v)):
        total += v[t] * t
    for t in range(v[k] % 5):
        total += v[t]
    n = 0
    while n < len(v) and v[n] < 30:
        n += 1
    down = 0
    for t in range(len(v) - 1, -1, -1):
        down = down * 3 + v[t]
    return total, n, down


@batch
def matrix_walk(m, i, j):
    # walk the matrix by its own values: a different path per example
    steps = 0
    while m[i, j] % 7 != 0 and steps < 12:
        i = (i + m[i][j]) % 4
        j = (j + 1) % 5
        steps += 1
    total = 0
    for t in range(m[i, j] % 4):
        total += m[t, j] - m[-1][t]
    return steps, m[i, j], total


@batch
def float_search(v, x):
    # bisect on a sorted float64 vector
    lo = 0
    hi = len(v)
    while lo < hi:
        mid = (lo + hi) // 2
        if v[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@batch
def follow_links(start):
    # a linked list stored in constant tables: NEXT[node] and SCORE[node]
    node = start
    total = 0.0
    steps = 0
    while node >= 0:
        total += SCORE[node]
        node = NEXT[node]
        steps += 1
    return total, steps


@batch
def table_bounds(i):
    # a table read as a loop bound and as a condition
    total = 0
    for k in range(TABLE[i]):
        if GRID[k % 4, TABLE[k % 8] % 5] > 8:
            total += WEIGHTS[k % 5] * 2.0
    return total


@batch
def divide_by_element(v, i):
    # v: positive int64[5]; integer division by elements, in a branch
    if i > 0:
        return i // v[i] + (i + 7) % v[0]
    return -v[-1] % v[1]


@batch
def divide_by_shape(v, m, i):
    # v: int64[6], m: int64[4, 5]: the divisors are static shapes
    return (i + 1) % v.shape[0] + i % m.shape[1] + i // len(m) + v[i % len(v)]


# ---- while True -------------------------------------------------------------


@batch
def find_first_return(v, key):
    # while True: left only by return
    k = 0
    while True:
        if k == len(v):
            return -1
        if v[k] == key:
            return k
        k += 1


@batch
def count_up_break(v, limit):
    # while True: left only by break; code after the loop runs
    total = 0
    k = 0
    while True:
        total += v[k % len(v)]
        v[k % len(v)] += 1
        k += 1
        if total > limit:
            break
    return k, total, v


# ---- short-circuits and guards --------------------------------------------


@batch
def scan_up(v, key):
    # k reaches len(v) where no element is above key: v[k] is never read there
    k = 0
    while k < len(v) and v[k] <= key:
        k += 1
    return k


@batch
def scan_down(v, j, key):
    # j starts anywhere in [-20, 8): `j >= 0 and` keeps v[j] from being read
    # (v[-20] would be out of range; v[-1] would wrap)
    while j >= 0 and v[j] > key:
        j -= 1
    return j


@batch
def guards(v, i):
    # i in [-12, 12): every read is guarded as Python would evaluate it
    a = v[i] if 0 <= i < len(v) else 0
    b = i < len(v) and i >= -len(v) and v[i] > 2
    c = i >= len(v) or i < -len(v) or v[i] == 0
    d = -1
    if -len(v) <= i < len(v):
        d = v[i]
    # `or`/`and` give an operand, as in Python
    e = v[i % len(v)] or v[-1]
    f = v[i % len(v)] and v[0]
    g = 0
    if i >= 0 and i < len(v) and v[i] > 1 or i == 11:
        g = 1
    # a chained comparison reads v[i] only where `0 <= i < len(v)` holds
    h = 0 <= i < len(v) <= v[i] + 6
    return a, b, c, d, e, f, g, h


# ---- item assignment ----------------------------------------------------------


@batch
def assign_items(v, i, x):
    # v: int64[6]; i in [-6, 6); x per example
    v[i] = x
    v[0] += 1
    v[i] += 2
    v[-1] = v[i] * 3
    v[1] = x * 0.5  # a float into an int vector: truncated, as NumPy does
    return v


@batch
def assign_floats(v, i, x):
    # v: float64[5]: an int assigned into a float vector, a float slice
    v[i] = x
    v[1:3] = x * 0.5
    v[::2] += 1.0
    v[i] -= v[0]
    return v


@batch
def assign_matrix(m, i, j, x):
    # m: int64[4, 5]
    m[i, j] = 0
    m[i][j] += x
    m[-1, j] = x * 2
    m[:, 0] = x
    m[i, 1:3] = m[0, 0]
    m[1] = m[2]
    m[:, j] += 1
    m[i] = m[0] * 2
    return m


@batch
def assign_slices(v, x):
    # v: int64[6]
    v[1:3] = x
    w = v[3:6]
    v[3:6] = w[::-1]
    v[:2] += 10
    v[1:3] += v[3:5]
    return v


@batch
def assign_in_branches(v, i, x):
    # item assignment inside if/else and a loop
    if x > 0:
        v[i] = x
    else:
        v[-1 - i] = -x
    for t in range(len(v)):
        if v[t] < 0:
            v[t] = 0
    if x > 1:
        v[1:3] = x
    for t in range(v[i] % 4):
        v[t] += 1
    return v


@batch
def histogram(xs, n):
    # counts[b] += 1 with b read from the data (examples/sort.py's histogram)
    counts = np.zeros(4, dtype=np.int64)
    for k in range(len(xs)):
        b = xs[k]
        if k < n and 0 <= b < 4:
            counts[b] += 1
    return counts


@batch
def insertion_sort(v):
    # `j >= 0 and v[j] > key`: v[-1] would wrap, so the guard matters
    for i in range(1, len(v)):
        key = v[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = key
    return v


@batch
def aliasing(v, i):
    # in Python w (an alias) and s (a view) would see the writes: refused at
    # build time, naming both lines (passes/inplace.py)
    w = v  # <-- alias
    s = v[1:3]
    v[i] = 100  # <-- write
    u = v
    u[0] = -5
    return w, v, u, s


@values.batch
def zero_at(v, i):
    v[i] = 0
    return v[i] + v[0]


@values.batch
def caller_keeps_its_array(v, i):
    # the callee's item assignment to its parameter changes v, as in Python
    t = zero_at(v, i)
    return v, t, v[i]


@values.batch
def wrap(i, n):
    return i % n


@values.batch
def augment_by_call(v, i, x):
    # the index is a batched call: evaluated once
    v[wrap(i, len(v))] += x
    v[wrap(i + 1, len(v))] = wrap(x, 5)
    return v, TABLE[wrap(i, 8)]


# ---- recursion ------------------------------------------------------------------


@batch
def suffix_sum(v, k):
    # a recursive function indexing the vector it carries
    if k >= len(v):
        return 0
    return v[k] + suffix_sum(v, k + 1)


@batch
def recursive_bisect(v, x, lo, hi):
    # per-example recursion depth, a subscript in the condition
    if lo >= hi:
        return lo
    mid = (lo + hi) // 2
    if v[mid] < x:
        return 1 * recursive_bisect(v, x, mid + 1, hi)  # not a tail call
    return recursive_bisect(v, x, lo, mid) + 0


@batch
def fill_down(v, k):
    # v lives across the recursive call: the callee's writes reach it
    if k < 0:
        return v
    v[k] = k * 10 + v[k]
    inner = fill_down(v, k - 1)
    return inner + v * 100 + v[k]


@batch
def float_recursion(v, k):
    # a float vector across a recursive call, read after it
    if k <= 0:
        return v[0]
    v[k % len(v)] *= 0.5
    below = float_recursion(v, k - 1)
    return below + v[k % len(v)] - v[-1]


@batch
def matrix_path(m, i, j):
    # a matrix carried through recursion and written before the call;
    # m.shape in the base case, a column in a condition
    if i >= m.shape[0]:
        return 0
    column = m[:, j]
    last = column[-1]  # read before m changes (in NumPy, column is a view)
    if column[i] > 4:
        m[i, j] = 0
    below = matrix_path(m, i + 1, (j + m[i][j]) % 5)
    return m[i, j] + 2 * below + last


@batch
def table_walk(node):
    # constant tables through recursion: NEXT[node] is the recursive argument
    if NEXT[node] < 0:
        return SCORE[node]
    return SCORE[node] + 0.5 * table_walk(NEXT[node])


@batch
def slice_control(v, k):
    # slices in a condition, a loop bound and across a recursive call
    back = v[::-1]
    if k <= 0 or back[0] > v[0]:
        return v[1:4] * 0 + v[0]
    total = v[1:4]
    for t in range(v[2:][0] % 4):
        total = total + back[:3]
    inner = slice_control(v, k - 1)
    return inner + total - back[-3:]


@batch
def descend(v, k):
    # while True inside a recursive function: left by return and by break
    while True:
        if k >= len(v):
            return 0
        if v[k] < 0:
            break
        k += 1
    v[k] = -v[k]
    return v[k] + descend(v, k + 1)


@batch
def chase(v, k, n):
    # a tail call whose argument is read from the vector it carries
    if n == 0:
        return k
    return chase(v, v[k], n - 1)


# ---- constants meeting per-example values (fuzzer findings) -----------------
# A constant (`np.ones(3)`, `4`, a table) is the same for every example; once
# it is in a variable, or meets a per-example value, it must behave as that
# example's own copy.


@batch
def constant_arrays(v, d):
    w = np.ones(3)
    w[d % 3] = 0.0  # a new array, then one element per example
    u = np.ones(3) if d > 0 else np.zeros(3)  # a choice between two constants
    r = np.arange(3.0)
    m = np.zeros((2, 3)) + v  # a row per example against a constant matrix
    m[d % 2] = 3  # a constant into a row
    return w + u * r[d % 3] + d + np.ones(3) + m[1] - v


@batch
def constant_scalars(v, d):
    x = 4
    k = 2
    t = (d, 0.5)  # one constant element of a tuple
    return v - x + TABLE[k] * t[1] + TABLE[k + 1]


@batch
def subscript_of_broadcast(v, d):
    return (v - d)[0] + (v * d)[d % 3] + (d - v)[1:][0]


@batch
def open_slices(v, d):
    w = v * 1.0
    w[1:] = d
    w[:1] += 2
    w[-2:] -= 0.5
    w[0:2] = 5.5
    return w


@values.batch
def array_through_a_tail_call(d, v):
    # the callee's array result is the caller's (a tail call): from either return
    return offset_by_sign(d, v * 2.0)


@values.batch
def offset_by_sign(d, v):
    if d >= 0:
        return v + 1.0
    return v


@values.batch
def constant_argument(d, v):
    return scaled(d, np.ones(3)) + v


@values.batch
def scaled(d, u):
    return u * d


# ---- a function that falls off its end on one path ----------------------------


@batch
def falls_off(v, i):
    if v[i] > 0:
        return v[i]
    v[i] = 1  # <-- falls_off


@batch
def falls_off_after_loop(v):
    k = 0
    while True:
        if v[k] > 0:
            return k
        k += 1
        if k == len(v):
            break


# ---- out of range for an active example -----------------------------------------


@batch
def read_out_of_range(v, i):
    a = i + 1
    return v[i] + a  # <-- read_out_of_range


@batch
def read_out_of_range_later(v, i):
    a = v[0]
    b = a * 2
    c = v[i]  # <-- read_out_of_range_later
    return a + b + c


@batch
def write_out_of_range(v, i):
    # examples with i >= 10 never reach the assignment: their lanes are idle
    if i < 10:
        v[i] = 7  # <-- write_out_of_range
    return v


@batch
def table_out_of_range(i):
    return TABLE[i] * 2  # <-- table_out_of_range


@batch
def loop_out_of_range(v, n):
    total = 0
    k = 0
    while k < n:
        total += v[k]  # <-- loop_out_of_range
        k += 1
    return total


@faults.batch
def clear_at(v, i):
    v[i] = 0  # <-- clear_at
    return v[0]


@faults.batch
def callee_out_of_range(v, i):
    # the callee indexes out of range (under XLA a stackless callee)
    return clear_at(v, i) + 1


@batch
def recursive_out_of_range(v, k):
    # a recursive function that carries v; k > len(v) raises on the way down
    if k < 0:
        return 0
    below = recursive_out_of_range(v, k - 1)
    return below + v[k]  # <-- recursive_out_of_range


@faults.batch
def loop_calls_out_of_range(v, n):
    # the callee faults on a later trip of the caller's loop
    total = 0
    for k in range(n):
        total += clear_at(v, k)
    return total


@batch
def many_faults(v, m, kind, k):
    # v: int64[4], m: int64[3, 4]; one way to index out of range per kind
    if kind == 0:
        if k < 10 and v[k] > 0:  # <-- weak_guard
            return 1
        return 0
    if kind == 1:
        while v[k] != 0:  # <-- while_condition
            k += 1
        return k
    if kind == 2:
        return m[:, k][0]  # <-- column
    if kind == 3:
        v[k] += 1  # <-- augmented
        return v[0]
    return m[1][k]  # <-- second_axis


# ---- refused at build time ----------------------------------------------------------


@batch
def static_out_of_range(v):
    return v[6]  # <-- static_out_of_range


@batch
def static_negative_out_of_range(v):
    return v[-7] + 1  # <-- static_negative_out_of_range


@batch
def static_assign_out_of_range(v):
    v[6] = 1  # <-- static_assign_out_of_range
    return v


@batch
def table_static_out_of_range(i):
    return TABLE[8] + i  # <-- table_static_out_of_range


@batch
def index_into_tuple(x, i):
    # items of other types (an int, a float): the item's type would differ
    # per example (a tuple of like items is indexed: local_lists)
    t = (x, x * 0.5, x + 2)
    return t[i]  # <-- index_into_tuple


@batch
def float_index(v, x):
    return v[x]  # <-- float_index


@batch
def float_index_into_tuple(x, f):
    return (x, 2.0 * x)[f]  # <-- float_index_into_tuple


@batch
def assign_list_item(a, b, i, x):
    items = [a, b]
    items[i] = x  # <-- assign_list_item
    return items[0]


@batch
def len_of_scalar(x):
    return len(x)  # <-- len_of_scalar


@batch
def reduce_whole(v):
    return tf.reduce_sum(v)  # the example's sum


@batch
def stack_first(x, y):
    return tf.stack([x, y])  # <-- stack_first


@batch
def reduce_axis_zero(m):
    return tf.reduce_max(m, axis=0)  # the example's axis 0


@batch
def cumsum_over_batch(m):
    return tf.math.cumsum(m, axis=0) * 2.0  # <-- cumsum_over_batch


@batch
def roll_over_batch(v):
    return tf.roll(v, 1, axis=0)  # <-- roll_over_batch


@batch
def partition_along_axis_0(v):
    return np.partition(v, 1, axis=0) + 1  # <-- partition_along_axis_0


@batch
def sum_method(v):
    return v.sum() + 1  # NumPy's method on the example's array


@batch
def axes_from_the_end(v, m, x):
    # reductions and stacks with axes counted from the end: per example
    s = tf.reduce_sum(v, axis=-1) + tf.reduce_max(m, axis=-1)[1] + tf.reduce_min(m, axis=-2)[0]
    pair = tf.stack([x, s], axis=-1)
    # shape-keeping calls along the example's own axes
    running = tf.math.cumsum(m, axis=-1)[0, -1] + tf.roll(v, 1, axis=-1)[0]
    return pair[0] * 2.0 + pair[1] + running


@batch
def matrix_transpose(m):
    return m.mT  # <-- matrix_transpose


@batch
def fancy_fill(m, i, j):
    """One value for a list of positions (a swap, or a display of as many items, works)."""
    m[[i, j]] = 0  # <-- fancy_fill
    return m


@batch
def slice_by_example(v, i):
    return v[i:]  # <-- slice_by_example


# ---- refused before anything runs (UnsupportedSyntaxError) --------------------------

# Decorating refuses it (at import, were it decorated here): the test decorates it.


def assign_to_global(i):
    TABLE[i] = 0  # <-- assign_to_global
    return i


@batch
def chained_item_assignment(v, i):
    w = v[i] = v[i - 1] + 1  # the value once, then `w`, then `v[i]`
    return w, v