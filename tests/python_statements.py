"""Programs exercising Python statements as written (issue 29): tuple
targets with items (swaps), `for` over arrays and their `enumerate`, `zip`
and `reversed`, and lists of a fixed size built by comprehensions.

Shared by tests/test_python_statements.py; generated modules go to a
temporary folder.  A line the tests expect an error on ends with
`# <-- name`.
"""

import tempfile

import numpy as np

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-statements-"))
batch = ctx.batch

TABLE = np.array([4, 9, 1, 7, 3])
WEIGHTS = (0.5, -1.0, 2.0)
SIZE = 4


# ---- tuple targets with items: the value first, then each target in turn ----


@batch
def swap_items(v, i, j):
    v[i], v[j] = v[j], v[i]
    if v[0] > v[-1]:
        v[0], v[-1] = v[-1], v[0]
    return v


@batch
def swap_item_and_name(a, i, b):
    a[i], b = b, a[i]
    return a, b


@batch
def swap_matrix_entries(m, i, j):
    m[i][j], m[j][i] = m[j][i], m[i][j]
    m[i, 0], m[0, j] = m[0, j], m[i, 0]
    return m


@batch
def targets_in_order(v, i, j, x):
    i, v[i] = j, x  # v[j] = x: `i` is assigned first
    v[i], i = x + 1, 0  # v[j] again (the old i), then i = 0
    v[i], (w, v[-1]) = 5, (v[i], 7)  # w is v[0] before the assignment
    v[1], *rest = (x, 2, 3)
    return v, i, w, rest[0] + rest[1]


@batch
def chained(v, i, j, x):
    v[i] = v[j] = x
    k = v[0] = x + 1
    a, b = c, d = (x, j)
    return v, k, a + b + c + d


@batch
def bubble_sort(v):
    n = len(v)
    for i in range(n):
        for j in range(n - 1 - i):
            if v[j] > v[j + 1]:
                v[j], v[j + 1] = v[j + 1], v[j]
    return v


@batch
def reverse_in_place(v):
    i, j = 0, len(v) - 1
    while i < j:
        v[i], v[j] = v[j], v[i]
        i, j = i + 1, j - 1
    return v


@batch
def ordered(a, b):
    if a > b:
        return b, a
    return a, b


@batch
def swap_by_call(v, i, j):
    v[i], v[j] = ordered(v[i], v[j])
    return v


# ---- for over arrays --------------------------------------------------------


@batch
def sum_until(v, limit):
    total = 0
    for x in v:
        if x % 3 == 0:
            continue
        if total + x > limit:
            break
        total += x
    else:
        total = -total
    return total


@batch
def find_index(v, key):
    for i, x in enumerate(v):
        if x == key:
            return i
    return -1


@batch
def weighted(v, start):
    total = 0
    for i, x in enumerate(v, 1):
        total += i * x
    for i, x in enumerate(v, start=start):
        total += i - x
    return total


@batch
def dot_of_shorter(v, w):
    # v has 6 elements, w 4: zip stops at the shorter
    total = 0.0
    for a, b in zip(v, w):
        total += a * b
    for a, b, t in zip(w, v, TABLE):
        total += a * t - b
    return total


@batch
def digits_backwards(v, n):
    out = 0
    for d in reversed(v):
        out = out * 10 + d
    for i in reversed(range(n)):
        out = out * 3 + i
    for i in reversed(range(n, 2 * n)):
        out -= i
    for i, k in zip(range(1, 20, 3), reversed(v)):
        out += i * k
    for i in reversed(range(1, n + 3, 2)):
        out = out * 2 - i
    for i, k in zip(range(n + 6, 0, -3), v):
        out += i - k
    return out


@batch
def row_stats(m):
    best, at = -1, -1
    for r, row in enumerate(m):
        total = 0
        for x in row:
            total += x
        if total > best:
            best, at = total, r
    count = 0
    for row in m:
        if row[0] > row[-1]:
            count += 1
    return best, at, count


@batch
def count_vowels(word):
    count = 0
    for c in word:
        if c == 97 or c == 101 or c == 105 or c == 111 or c == 117:
            count += 1
    return count


@batch
def small_factors(n):
    count = 0
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
            count += 1
    return n, count


@batch
def table_walk(x):
    total = 0
    for k in TABLE:
        if k > x:
            break
        total += k
    else:
        total = -total
    score = 0.0
    for w in WEIGHTS:
        score = score * 2 + w * x
    return total, score


@batch
def iterates_the_original(v):
    # Python iterates the array the loop started with: the rebinding does
    # not change what `x` runs over
    total = 0
    for x in v:
        v = v * 2
        total += x
    return total, v


@batch
def sees_item_assignments(v):
    # no rebinding: NumPy's iteration sees the items the body assigned
    k = 0
    for x in v:
        if k + 1 < len(v):
            v[k + 1] += x
        k += 1
    return v


@batch
def sees_augmented(v):
    total = 0
    for x in v:
        v += 1  # in place on a NumPy array: the next x is one more
        total = total * 5 + x
    return total


@batch
def count_down(n):
    if n <= 0:
        return 0
    return count_down(n - 1) + 1


@batch
def loop_with_call(v):
    total = 0
    for x in v:
        total += count_down(x)
    return total


@batch
def nested_iterables(v, w):
    total = 0
    for i, (a, b) in enumerate(zip(v, reversed(w))):
        total += i * (a - b)
    for x in v[1:4] * 2:
        total += x
    for y in [0.5 for _ in range(3)]:
        total += y
    return total


@batch
def doubled(v):
    return v * 2


@batch
def over_a_call(v):
    total = 0
    for x in doubled(v):
        total = total * 3 + x
    return total


@batch
def last_element(v):
    x = -1.0
    for x in v:
        pass
    return x


# ---- lists of a fixed size ---------------------------------------------------


@batch
def longest_common_subsequence(a, b):
    n, m = len(a), len(b)
    dp = [[0 for _ in range(m + 1)] for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                dp[i][j] = dp[i - 1][j - 1] + 1
            elif dp[i - 1][j] >= dp[i][j - 1]:
                dp[i][j] = dp[i - 1][j]
            else:
                dp[i][j] = dp[i][j - 1]
    return dp[len(dp) - 1][len(dp[0]) - 1]


@batch
def edit_distance(a, b):
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        dp[i][0] = i
    for j in range(m + 1):
        dp[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = dp[i - 1][j - 1] + cost
            if dp[i - 1][j] + 1 < best:
                best = dp[i - 1][j] + 1
            if dp[i][j - 1] + 1 < best:
                best = dp[i][j - 1] + 1
            dp[i][j] = best
    return dp[n][m], len(dp), len(dp[0])


@batch
def rows_of_a_value(x, v):
    rows = [v + 0 for _ in range(3)]
    rows[1][0] = x
    scaled = [x * 0.5 for _ in range(SIZE)]
    size = len(v) + 1
    flags = [False for _ in range(size)]
    flags[x % size] = True
    return rows, scaled, flags


@batch
def from_the_loop_variable(x, v):
    squares = [i * i for i in range(5)]
    shifted = [x + i for i in range(len(v))]
    twice = [v[i] * 2 for i in range(len(v))]
    grid = [[i * 10 + j for j in range(3)] for i in range(SIZE)]
    return squares, shifted, twice, grid


@batch
def histogram(v):
    counts = [0 for _ in range(SIZE)]
    for x in v:
        counts[x % SIZE] += 1
    return counts


@batch
def weighted_edges(edges, w):
    """Rows unpacked as Python unpacks them: `for a, b in edges`, and with
    an index, `for k, (a, b) in enumerate(edges)`."""
    total = 0
    for a, b in edges:
        total += a * w[b % 3]
    for k, (a, b) in enumerate(edges):
        if a > b:
            total -= k
    first, second = edges[0]
    return total + first - second


# ---- assignment by lists of positions (NumPy's row swap) ---------------------


@batch
def determinant_by_elimination(m):
    """Gaussian elimination with partial pivoting, as NumPy code swaps rows:
    `a[[col, pivot]] = a[[pivot, col]]`."""
    a = m.astype(float)
    n = len(a)
    det = 1.0
    for col in range(n):
        pivot = col
        for r in range(col + 1, n):
            if abs(a[r, col]) > abs(a[pivot, col]):
                pivot = r
        if a[pivot, col] == 0:
            return 0.0
        if pivot != col:
            a[[col, pivot]] = a[[pivot, col]]
            det = -det
        det *= a[col, col]
        for r in range(col + 1, n):
            a[r] = a[r] - a[r, col] / a[col, col] * a[col]
    return det


@batch
def positions_assigned(v, i, j):
    """A swap of two items (equal positions too), then items from a list."""
    v = v.copy()
    v[[i, j]] = v[[j, i]]
    v[[0, -1]] = [i, j]
    return v


@batch
def positions_read(m, v, i, j):
    """Reads by lists of positions: rows of a matrix, items of a vector
    (a negative position counts from the end)."""
    rows = m[[i, j]]
    picked = v[[0, -1, i]]
    return rows.sum(), rows[1, 0], picked[2], picked.sum()


# ---- reductions of comprehensions, as one-liners write them ------------------

PRIMES = (2, 3, 5, 7)


@batch
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@batch
def number_facts(n):
    """Trial division and perfect numbers, the way tutorials write them:
    `all` stops at the first divisor, and `n > 1 and` keeps it from running
    for 0 and 1."""
    prime = n > 1 and all(n % d for d in range(2, n))
    perfect = sum(d for d in range(1, n) if n % d == 0) == n
    return prime, perfect, all(n % p != 0 for p in PRIMES), sum(fib(k) for k in range(n % 9))


@batch
def comprehension_scope(v, t):
    """A comprehension's variable is its own: `x` keeps its value."""
    x = t * 100
    s = sum(x for x in v)
    return x + s, sum(x > t for x in v), sum(1 for x in v if x > t), len([x for x in v if x < t])


@batch
def adjacent_pairs(v, w):
    """`any` that indexes by the loop variable, pairs with two `for`s,
    `max` over `zip`, `min` with a default."""
    n = len(v)
    sorted_already = not any(v[i] > v[i + 1] for i in range(n - 1))
    pairs = sum(v[i] * v[j] for i in range(n) for j in range(i + 1, n))
    spread = max(abs(a - b) for a, b in zip(v, w))
    return sorted_already, pairs, spread, min((x for x in v if x > w[0]), default=-1)


@batch
def passes_to_sort(v):
    """A `while` whose test is a comprehension, evaluated again each trip."""
    v = v.copy()
    passes = 0
    while any(v[i] > v[i + 1] for i in range(len(v) - 1)):
        for i in range(len(v) - 1):
            if v[i] > v[i + 1]:
                v[i], v[i + 1] = v[i + 1], v[i]
        passes += 1
    return passes


@batch
def nested_comprehensions(m, t):
    """Rows of a matrix, a reduction inside a reduction."""
    return (
        max(sum(x for x in row) for row in m),
        any(any(x == t for x in row) for row in m),
        sum(float(x) for x in m[0]) / 2,
        max([m[i][i] for i in range(len(m))]),
    )


@batch
def smallest_above_or_none(v, t):
    """`default=None`: never compared with the elements (an error before)."""
    r = min((x for x in v if x > t), default=None)
    if r is None:
        return -1
    return r


@batch
def largest_above(v, t):
    return max(x for x in v if x > t)  # <-- largest_above: empty where nothing is above t


# ---- refused when the program is built (BatchTypeError) ----------------------


@batch
def iterate_a_number(n):
    total = 0
    for x in n:  # <-- iterate_a_number
        total += x
    return total
