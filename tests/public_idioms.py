"""Code written the way public algorithm collections write it, where the
batched program once gave a wrong answer without an error.

Shared by tests/test_public_idioms.py.  Each function either means, batched,
what it means on one example, or is refused when the program is built,
naming the line and saying what to write.  Generated modules go to a
temporary folder.
"""

import math
import tempfile

import jax.numpy as jnp
import numpy as np

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-idioms-"))


# ---- Optionals compared with numbers: None equals no number ---------------


@ctx.batch
def find_last(v, x):
    i = len(v) - 1
    while i >= 0:
        if v[i] == x:
            return i
        i -= 1
    return None


@ctx.batch
def found_at_start(v, x):
    r = find_last(v, x)
    return r == 0, r != 0, r in (0, 2), r not in (0, 2), 0 == r


@ctx.batch
def same_place(v, x, y):
    """Two optionals: None == None is True."""
    r = find_last(v, x)
    s = find_last(v, y)
    return r == s, r != s


@ctx.batch
def first_above(v, x):
    best = None
    for y in v:
        if y > x:
            best = y
            break
    if best == 0:
        return 1
    if best != 3:
        return 2
    return 3


# ---- Python lists compare whole: one bool ----------------------------------


@ctx.batch
def is_anagram(a, b):
    return sorted(a) == sorted(b)


@ctx.batch
def is_palindrome(v):
    return list(v) == list(v[::-1])


@ctx.batch
def differs_as_multisets(a, b):
    if sorted(a) != sorted(b):
        return 1
    return 0


# ---- numbers ---------------------------------------------------------------


@ctx.batch
def numeric_idioms(n, a, m):
    """range() is evaluated once, though the body changes n; hypot of three
    sides; isqrt near 2**63 (where the square of the root overflows)."""
    trips = 0
    for i in range(n):
        n -= 1
        trips += 1
    return trips, math.hypot(a, 4.0, 12.0), math.isqrt(m)


@ctx.batch
def newton_sqrt(x, k):
    """Newton's method to math.isclose; an int to a literal negative power
    (a float in Python)."""
    guess = x / 2.0 if x > 1.0 else 1.0
    while not math.isclose(guess * guess, x, rel_tol=1e-12):
        guess = (guess + x / guess) / 2.0
    return guess, k**-1, math.isclose(guess, k, abs_tol=0.5)


@ctx.batch
def remainders(a, b):
    return a % b, math.fmod(a, b)  # <-- b == 0: the first raises first


@ctx.batch
def modular_power(b, e, m):
    return pow(b, e, m)


# ---- refused, naming the line ---------------------------------------------


@ctx.batch
def matrix_chain_order(dims):
    """The textbook DP: a table of ints that takes float('inf')."""
    n = len(dims) - 1
    m = [[0 for _ in range(n)] for _ in range(n)]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            m[i][j] = float("inf")  # <-- a float into a table of ints
            for k in range(i, j):
                cost = m[i][k] + m[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost < m[i][j]:
                    m[i][j] = cost
    return m[0][n - 1]


@ctx.batch
def pascal_joined(n):
    """Two lists joined, as Python joins them (they were added elementwise)."""
    row = [1] + [0] * 7
    for k in range(n):
        for j in range(k + 1, 0, -1):
            row[j] += row[j - 1]
    return row


@ctx.batch
def extended(v):
    out = [0] * len(v)
    for i in range(len(v)):
        out[i] = v[i] * 2
    return [len(v)] + out + [0]


@ctx.batch
def doubled_list(v):
    out = [1] * 3
    return out * 2  # <-- a list repeated (was multiplied)


@ctx.batch
def pascal_row(n):
    """Each row from a copy of the one before: `row[:]` of a list is a new
    list (of an array, a view)."""
    row = [0] * 8
    row[0] = 1
    for k in range(n):
        prev = row[:]
        for j in range(1, k + 2):
            row[j] = prev[j] + prev[j - 1]
    return row


@ctx.batch
def list_then_array(v):
    """A name that is a list, then a NumPy array: `+` adds elementwise
    (it was joined)."""
    a = [0] * 3
    for i in range(3):
        a[i] = v[i]
    a = v[:3] * 2
    return a + a


@ctx.batch
def ranges(v):
    """`list(range(...))` with bounds known when the program is built."""
    n = len(v)
    a = list(range(1, n + 1))
    b = list(range(n, 0, -1))
    c = list(range(0, n, 2))
    d = list(range(n + 1))
    a[0] = v[0]
    return a[0] + 10 * a[n - 1] + 100 * b[0] + 1000 * b[n - 1] + 10000 * c[len(c) - 1] + d[n] + len(c)


@ctx.batch
def joined_copies(v, w):
    """Copies of arrays joined as lists (`list(v) + [0]` was added
    elementwise, without an error)."""
    a = list(v) + [0]
    b = [5] + list(w)
    row = list(v)
    row = [row[-1]] + row[:-1]
    c = list(v) + list(w)
    return len(a) + a[-1] + b[0] + b[1] + row[0] * 10 + c[len(v)] * 100


@ctx.batch
def edit_distance_rows(a, b):
    """Levenshtein distance in two rows, as public collections write it:
    `list(range(m + 1))` and `[i] + [0] * m` for each new row."""
    n, m = len(a), len(b)
    prev = list(range(m + 1))
    for i in range(1, n + 1):
        cur = [i] + [0] * m
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[m]


@ctx.batch
def lcs_two_rows(a, b):
    """Longest common subsequence in two rows that swap each round: the
    names trade lists, and no write into one reaches the other."""
    n, m = len(a), len(b)
    prev = [0] * (m + 1)
    cur = [0] * (m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
            else:
                cur[j] = max(prev[j], cur[j - 1])
        prev, cur = cur, prev
    return prev[m]


@ctx.batch
def count_components(edges):
    """Union-find with path halving in a helper: `parent` holds numbers read
    from `edges`, and the helper's writes to parent never reach edges."""
    parent = [0] * 6
    for i in range(6):
        parent[i] = i
    components = 6
    for e in range(len(edges)):
        ra = find_root(parent, edges[e][0])
        rb = find_root(parent, edges[e][1])
        if ra != rb:
            parent[ra] = rb
            components -= 1
    return components


@ctx.batch
def find_root(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@ctx.batch
def moving_average(v):
    k = 3
    out = [0] * (len(v) - k + 1)
    total = 0
    for i in range(len(v)):
        total += v[i]
        if i >= k - 1:
            out[i - k + 1] = total / k  # <-- a float into a list of ints
            total -= v[i - k + 1]
    return out


@ctx.batch
def count_seen(v):
    seen = [False] * 10
    for x in v:
        seen[x] += 1  # <-- an int into a list of bools
    return seen[0]


@ctx.batch
def smallest_after_sort(v):
    v.sort()  # <-- in place, through a method
    return v[0]


@ctx.batch
def same_vectors(a, b):
    if a == b:  # <-- the truth of an array
        return 1
    return 0




@ctx.batch
def lexicographic(a, b):
    return list(a) < list(b)  # <-- lists ordered item by item


@ctx.batch
def item_kinds(v, w):
    """isinstance of an array's item: NumPy's scalars (np.int64 is not an
    int; np.float64 is a float), as on one example."""
    kinds = 0
    if isinstance(v[0], int):
        kinds += 1
    if isinstance(v[1], (int, np.integer)):
        kinds += 2
    if isinstance(w[0], float):
        kinds += 4
    if isinstance(len(v), int):
        kinds += 8
    return kinds


@ctx.batch
def position_in_sorted(v, x):
    """list.index and list.count, as public code searches a list: index
    raises ValueError where the value is missing, so it is guarded."""
    items = sorted(v)
    where = items.index(x) if x in items else -1
    return where, items.count(x), list(v).count(v[0])


@ctx.batch
def unguarded_index(v, x):
    items = list(v)
    return items.index(x)


@ctx.batch
def next_power_of_two(n):
    """As bit_manipulation code writes it: 1 << n.bit_length(), or n itself
    when it is a power of two already."""
    if n > 0 and n & (n - 1) == 0:
        return n
    return 1 << n.bit_length()


# ---- Recursion in a conditional expression: a tail call -------------------


@ctx.batch
def euclid(a, b):
    """As number_theory code writes Euclid's algorithm."""
    return abs(b) if a == 0 else euclid(b % a, a)


@ctx.batch
def subtractive_gcd(a, b):
    """Euclid by subtraction in a nested conditional expression, a call in
    two of its three arms."""
    return a if b == 0 else (subtractive_gcd(b, a) if a < b else subtractive_gcd(a - b, b))


# ---- A nested comprehension reading a matrix by both loop variables -------


@ctx.batch
def transpose(m):
    rows, cols = len(m), len(m[0])
    return [[m[j][i] for j in range(rows)] for i in range(cols)]


# ---- An int on one path, a float on another --------------------------------


@ctx.batch
def median(v):
    """The textbook median: an item of an int vector, or the mean of two."""
    s = sorted(v)
    n = len(s)
    if n % 2 == 1:
        return s[n // 2]
    return (s[n // 2 - 1] + s[n // 2]) / 2


@ctx.batch
def halved_when_odd(n):
    x = n
    if n % 2 == 1:
        x /= 2
    return x


# ---- A list comprehension over a vector's items ----------------------------


@ctx.batch
def mean_and_variance(a):
    n = len(a)
    mean = sum(a) / n
    return mean, sum([(x - mean) ** 2 for x in a]) / n


@ctx.batch
def row_totals(m):
    return [sum(row) for row in m]


# ---- NumPy arithmetic with a list: the list is an array, elementwise -------


@ctx.batch
def list_operands(v, x):
    shifted = v + [1, 2, 3, 4]
    weights = [1.0, 0.5, 0.25, x]
    scaled = v * weights
    flipped = [10, 20, 30, 40] - v
    return shifted[1] + sum(scaled) + flipped[3] * [2, 3, 4, 5][x % 4]


# ---- NumPy's reduction methods: the example's array, not the batch --------


@ctx.batch
def grid_summary(g, t):
    hot = g > t
    column_peaks = g.max(axis=0)
    row_lows = g.min(1)
    return (
        g.sum(),
        column_peaks[1],
        row_lows[0],
        g.mean(),
        g.argmax(),
        hot.any(),
        hot.all(),
        hot.sum(),
        g.prod(axis=-1)[2],
        g.argmin(axis=0)[1],
        hot.mean(),
        g.mean(axis=1)[0],
    )


@ctx.batch
def grid_summary_by_functions(g, t):
    return np.sum(g), np.max(g, axis=0)[1], np.argmax(g), np.mean(g > t), np.any(g > t, 1)[0]


@ctx.batch
def list_summed_by_method(v):
    totals = [0] * 2
    totals[0] = v[0]
    return totals.sum()


@ctx.batch
def totals(v):
    return v.sum(), np.sum(v), np.max(v)


@ctx.batch
def jnp_totals(v):
    return jnp.sum(v), jnp.argmax(v)


@ctx.batch
def row_sums(m):
    return np.sum(m, axis=1)  # each row of the example's square matrix


@ctx.batch
def prefix_sums(v, m, lo):
    prefix = np.cumsum(v)
    total = prefix[-1]
    if lo > 0:
        total -= prefix[lo - 1]
    running = m.cumsum(axis=1)
    flat = m.flatten()
    return total, running[1, 2], flat.argmax(), v.cumprod()[2], np.ravel(m)[3], (v > 2).cumsum()[-1]


@ctx.batch
def nan_and_wide(v, w):
    return v.argmax(), np.argmin(v), v.max(), w.sum(), w.cumsum()[-1]


# ---- Arranging an array: transpose, sort along an axis, flip, roll --------------


@ctx.batch
def life_step(grid):
    """One step of Conway's Game of Life on a torus, as NumPy tutorials
    write it: the eight neighbours by rolling the grid."""
    up, down = np.roll(grid, 1, axis=0), np.roll(grid, -1, axis=0)
    neighbours = (
        np.roll(up, 1, axis=1) + up + np.roll(up, -1, axis=1)
        + np.roll(grid, 1, axis=1) + np.roll(grid, -1, axis=1)
        + np.roll(down, 1, axis=1) + down + np.roll(down, -1, axis=1)
    )
    alive = (neighbours == 3) | ((grid == 1) & (neighbours == 2))
    return alive.sum(), alive[0, 1], neighbours[2, 3]


@ctx.batch
def matrix_facts(m):
    symmetric = (m == m.T).all()
    column_medians = np.sort(m, axis=0)[len(m) // 2]
    top_two = np.flip(np.sort(m[0]))[:2].sum()
    return symmetric, column_medians[1], top_two, np.transpose(m)[0, 2], m.transpose()[1, 0]


@ctx.batch
def circular(v):
    steps = v - np.roll(v, 1)  # each item minus the one before it, the first minus the last
    order = np.sort(v)
    return steps[0], steps.max(), np.roll(v, -2)[0], order[0], order[-1], np.flip(v)[0]


@ctx.batch
def tuple_times_list(a, b):
    pair = (a, b)
    return pair * [2, 3]  # <-- a tuple times a list


# ---- Matrix products: `@`, np.dot, .dot, np.linalg.norm --------------------

TURN = np.array([[0.0, -1.0], [1.0, 0.0]])  # a quarter turn, a module constant


@ctx.batch
def dominant_eigenvalue(a):
    """Power iteration, as numerical-methods notes write it: until the
    Rayleigh quotient settles (a different number of steps per example)."""
    b = np.ones(len(a))
    value = 0.0
    for step in range(200):
        c = a @ b
        b = c / np.linalg.norm(c)
        new = b @ a @ b
        if abs(new - value) < 1e-10:
            return new, step
        value = new
    return value, -1


@ctx.batch
def gradient_descent(x, y):
    """Least squares by gradient descent until the gradient is small."""
    w = np.zeros(x.shape[1])
    steps = 0
    while steps < 300:
        grad = x.T @ (x @ w - y) / len(y)
        if abs(grad).max() < 1e-8:
            break
        w = w - 0.2 * grad
        steps += 1
    return w[0], w[1], steps


@ctx.batch
def products(v, w, m):
    """Each kind of operand: vector with vector, matrix with vector, vector
    with matrix (wrong on the batch as written: `v @ m` took the batch of
    vs for a matrix), a constant matrix, the methods and functions."""
    return (
        v @ w,
        (m @ v)[0],
        (v @ m)[2],
        (m @ m)[1, 2],
        np.dot(v, w) + v.dot(w) + np.inner(v, w),
        np.dot(m, v)[1] + m.dot(v)[2] + np.matmul(v, m)[0],
        (TURN @ v[:2])[0] + TURN.dot(w[:2])[1] + (v[:2] @ TURN)[1],
        np.dot(2, v)[1],
        np.linalg.norm(v),
        np.linalg.norm(m, axis=0)[1],
    )


@ctx.batch
def steps_to_reach(adj, start, goal):
    """Reachability by boolean matrix products: the walk length at which
    goal is first reachable from start."""
    reach = adj.copy()
    for k in range(1, len(adj) + 1):
        if reach[start, goal]:
            return k
        reach = reach | (reach @ adj)
    return -1


@ctx.batch
def walks(adj, n):
    """Walks of length n, counted by an int matrix power."""
    m = adj.copy()
    for _ in range(n - 1):
        m = m @ adj
    return m.sum()


@ctx.batch
def list_matmul(v):
    return [1, 2, 3] @ v  # <-- Python lists have no `@`


@ctx.batch
def number_matmul(x, v):
    return x @ v  # <-- NumPy refuses a number in matmul


@ctx.batch
def dot_of_stacks(s, m):
    return np.dot(s, m)[0, 0, 0]  # <-- np.dot of 3-d arrays


# ---- NumPy's elementwise functions on every backend -----------------------


@ctx.batch
def numpy_elementwise(v, w, k):
    """As tutorials write them: a stable softmax, a ReLU, a clip, NaNs masked
    out, integer floor division and modulo (each example's own; on the
    TensorFlow and JAX backends NumPy's functions run as their twins)."""
    e = np.exp(v - np.max(v))
    p = e / e.sum()
    relu = np.maximum(v, 0.0)
    clipped = np.clip(v, -1.0, 1.0)
    masked = np.where(np.isnan(w), 0.0, w)
    return (
        p.max(),
        relu.sum(),
        clipped[0],
        np.sqrt(np.abs(masked)).sum(),
        np.floor_divide(k, 3),
        np.mod(k, 4),
        np.minimum(w, 1.0)[1],
        np.isfinite(w).sum(),
    )


@ctx.batch
def newton_cube_root(a):
    """A loop whose test is a NumPy function of the example's value."""
    x = np.maximum(a, 1.0)
    steps = 0
    while np.abs(x * x * x - a) > 1e-9 * np.maximum(a, 1.0):
        x = x - (x * x * x - a) / (3.0 * x * x)
        steps += 1
    return x, steps


# ---- Joining arrays: concatenate, stack, append, hstack, vstack ----------


@ctx.batch
def joined(a, b, m, k, x):
    """As NumPy code joins arrays: the example's own (on the batch, NumPy's
    default axis 0 was the batch's)."""
    both = np.concatenate([a, b])
    padded = np.concatenate(([0.0], a, np.zeros(2)))
    rows = np.stack([a, b])
    columns = np.stack((a, b), axis=-1)
    grown = np.append(a, x)
    flat = np.append(m, k)
    wide = np.concatenate([m, m], axis=1)
    tall = np.vstack([a, b, a])
    pair = np.stack([x, x * 2])
    return (
        both.sum(),
        both[3],
        padded[-1] + padded[1],
        rows[1, 0],
        columns[2, 1],
        grown[-1],
        len(grown),
        flat[-1],
        flat.dtype == np.float64,
        wide[1, 4],
        tall[2, 1],
        np.hstack([a, b])[4],
        np.hstack((x, k))[1],
        pair[1],
    )


@ctx.batch
def merge_sorted(a, b):
    """Merging two sorted arrays with np.concatenate, then a loop over the result."""
    merged = np.sort(np.concatenate([a, b]))
    runs = 1
    for i in range(1, len(merged)):
        if merged[i] != merged[i - 1]:
            runs += 1
    return runs, merged[len(merged) // 2]


# ---- Windows of per-example length, conversions ------------------------------


@ctx.batch
def window_means(v, k):
    """A trailing moving average as tutorials write it: the mean of a slice
    whose length differs per example (and its sum, as a method)."""
    out = np.zeros(len(v))
    for i in range(len(v)):
        lo = max(0, i - k + 1)
        out[i] = np.mean(v[lo : i + 1])
    head = v[:k]
    return out, head.sum(), np.sum(v[k:]), np.mean(v[len(v) :])


@ctx.batch
def converted(m, x):
    """`astype` of a per-example array (TensorFlow's tensors have none)."""
    a = m.astype(float) / 2
    flags = (m > 2).astype(int)
    return a.sum() * x, flags.sum(), m.astype(np.float32)[0, 0], (m[0, 0] > 2).astype(np.int64)
