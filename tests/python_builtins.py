"""Programs that call Python's builtins and `math` on per-example values.

Shared by tests/test_python_builtins.py; each must mean, batched, what it
means on one example in plain Python.  Generated modules go to a temporary
folder.
"""

import collections
import math
import tempfile

import numpy as np

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-builtins-"))

Point = collections.namedtuple("Point", ["x", "y"])

PRIMES = np.array([2, 3, 5, 7, 11, 13, 17, 19, 23, 29])
VOWELS = np.array([ord(c) for c in "aeiou"])


@ctx.batch
def clamp_distance(a, b):
    """min and max of two and three numbers, abs of a difference."""
    low = min(a, b)
    high = max(a, b, 0)
    return abs(high - low) + min(low, 3, high)


@ctx.batch
def mixed_extremes(x, n):
    """min/max mixing a float and an int (Python keeps the value)."""
    return max(x, n) - min(n, x, 0.5)


@ctx.batch
def vector_extremes(v):
    """min, max and sum over a per-example vector."""
    spread = max(v) - min(v)
    return spread + sum(v) + sum(v, 10)


@ctx.batch
def float_vector_extremes(v):
    return max(v) * 2.0 + min(v)


@ctx.batch
def digits_and_remainder(n, base):
    """divmod in a loop, the way digit-sum code is written."""
    total = 0
    n = abs(n)
    while n > 0:
        n, digit = divmod(n, base)
        total += digit
    return total


@ctx.batch
def conversions(x):
    """int() truncates toward zero, round() halves to even, float(), bool()."""
    whole = int(x)
    nearest = round(x)
    ratio = float(whole) / 3
    flag = bool(whole)
    return whole, nearest, ratio, flag, round(whole, 2)


@ctx.batch
def integer_square_root(n):
    """`int(math.sqrt(n))` as a loop bound, the way trial division is written."""
    if n < 2:
        return 0
    count = 0
    for d in range(2, int(math.sqrt(n)) + 1):
        if n % d == 0:
            count += 1
    return count + math.isqrt(n)


@ctx.batch
def math_functions(x):
    y = abs(x) + 1.0
    return (
        math.sqrt(y) + math.log(y) + math.log(y, 2) + math.exp(-y) + math.sin(x) * math.cos(x),
        math.floor(x),
        math.ceil(x),
        math.trunc(x),
        math.hypot(x, 2.0) + math.atan2(x, 1.0) + math.fabs(x) + math.log10(y) + math.log2(y),
    )


@ctx.batch
def exact_logarithms(k):
    """`int(math.log2(n))` and `int(math.log10(n))` at exact powers."""
    n = 2**k
    m = 10 ** (k % 15)
    return int(math.log2(n)), int(math.log10(m)), math.floor(math.log2(n + 1))


@ctx.batch
def gcd_lcm(a, b):
    return math.gcd(a, b), math.lcm(a, b), math.gcd(a, 0)


@ctx.batch
def modular_power(base, exponent, modulus):
    return pow(base, exponent, modulus), pow(base, 2)


@ctx.batch
def validate(n):
    """isinstance input checks, as public algorithm code writes them."""
    if not isinstance(n, int):
        return -1
    if isinstance(n, bool) or isinstance(n, float):
        return -2
    if n < 0:
        return -3
    return n * 2


@ctx.batch
def validate_float(x):
    if isinstance(x, (int, float)) and not isinstance(x, str):
        return x * 2.0
    return -1.0


@ctx.batch
def validate_vector(v):
    if isinstance(v, np.ndarray) and not isinstance(v, (list, tuple)):
        return len(v)
    return -1


@ctx.batch
def validate_point(p):
    if isinstance(p, Point) and isinstance(p, tuple):
        return p.x + p.y
    return 0.0


@ctx.batch
def identity_tests(n):
    found = n > 3
    result = 0
    if found is False:
        result += 1
    if found is not True:
        result += 10
    if n is None:
        result += 100
    if n is not None:
        result += 1000
    return result


@ctx.batch
def membership(n, v):
    """`in` a literal tuple, a per-example vector, a constant table, a range, a string's codes."""
    score = 0
    if n in (1, 2, 3):
        score += 1
    if n not in [4, 5]:
        score += 2
    if n in v:
        score += 4
    if n in PRIMES:
        score += 8
    if n in range(2, 10, 3):
        score += 16
    if n not in range(10, 0, -2):
        score += 32
    if n + 90 in VOWELS:  # text held as codes: 'a' is 97
        score += 64
    return score


@ctx.batch
def digit_count(n):
    """len(str(n)): the number of decimal digits, a minus sign counted."""
    return len(str(n)) + len(str(n > 0))


@ctx.batch
def bit_count(n):
    return bin(n).count("1")


@ctx.batch
def reductions(v):
    ok = all(v)
    some = any(v)
    ordered = sorted(v)
    backwards = sorted(v, reverse=True)
    return ok, some, ordered[0] + backwards[0], list(v)[1]


@ctx.batch
def tuple_builtins(a, b, c):
    t = (a, b, c)
    return min(t), max(t), sum(t), any(t), all((a, b)), a in t


@ctx.batch
def type_test(x):
    if type(x) == float:
        return 1
    return 0


def own_min(a, b):
    """A user's own helper named like a builtin, already batched."""
    return np.minimum(a, b) * 10


@ctx.batch
def shadowed_builtin(a, b):
    return own_min(a, b) + max(a, b)


@ctx.batch
def constant_builtins(n):
    """Builtins of constants keep their Python meaning."""
    limit = max(3, len(PRIMES)) + int(math.sqrt(16)) + min(2.5, 4)
    return n + limit


# ---- refused at build time, naming the line ----------------------------------


@ctx.batch
def text_of_value(n):
    return str(n)


@ctx.batch
def formatted(n):
    label = f"n={n}"
    return len(label)


@ctx.batch
def prints(n):
    print(n)
    return n


@ctx.batch
def identity_of_values(a, b):
    return a is b


@ctx.batch
def key_function(a, b):
    return min(a, b, key=abs)


@ctx.batch
def no_translation(n):
    return hash(n)


@ctx.batch
def text_of_float(x):
    return len(str(x))


@ctx.batch
def extremes_of_a_matrix(m):
    return max(m)


@ctx.batch
def number_in_text(n):
    return n in "aeiou"


# ---- None as a per-example value (an optional) -------------------------------


@ctx.batch
def linear_search(v, target):
    """Returns the index of target, or None when it is not there."""
    for i in range(len(v)):
        if v[i] == target:
            return i
    return None


@ctx.batch
def search_or_default(v, target):
    index = linear_search(v, target)
    if index is None:
        return -1
    return index * 10


@ctx.batch
def best_so_far(v, limit):
    """`best = None`, then a value once one qualifies."""
    best = None
    for i in range(len(v)):
        if v[i] < limit and (best is None or v[i] > best):
            best = v[i]
    if best is not None:
        return best + 0.5
    return -1.0


@ctx.batch
def first_negative(x, y):
    """An optional from a choice, and `== None`."""
    found = x if x < 0 else None
    if found == None:  # noqa: E711 - as public code writes it
        found = y if y < 0 else None
    return found



@ctx.batch
def binary_search(v, target, low, high):
    """Recursive, None when the range is empty."""
    if low > high:
        return None
    mid = (low + high) // 2
    if v[mid] == target:
        return mid
    if v[mid] < target:
        return binary_search(v, target, mid + 1, high)
    return binary_search(v, target, low, mid - 1)


@ctx.batch
def truth_of_optional(n):
    """`if r:`, `r or -1`, `not r`: None is false, a value its own truth."""
    r = n - 2 if n > 1 else None
    fallback = r or -1
    missing = not r
    if r:
        return fallback * 10 + int(missing)
    return fallback * 100 + int(missing)


@ctx.batch
def optional_argument(n, d):
    """One call passes None, the other a value: the callee's parameter is optional."""
    if n > 0:
        return add_or_default(n, d)
    return add_or_default(None, d)


@ctx.batch
def add_or_default(x, d):
    if x is None:
        return d
    return x + d


# ---- lists as fixed-size arrays ------------------------------------------------


@ctx.batch
def most_common_letter(word):
    """`[0] * 26` counts, indexed by a per-example code."""
    counts = [0] * 26
    for k in range(len(word)):
        counts[word[k] - 97] += 1
    best = 0
    for k in range(26):
        if counts[k] > counts[best]:
            best = k
    return best


@ctx.batch
def longest_increasing(v):
    """`[1] * len(v)` as a DP table."""
    dp = [1] * len(v)
    for i in range(1, len(v)):
        for j in range(i):
            if v[j] < v[i] and dp[j] + 1 > dp[i]:
                dp[i] = dp[j] + 1
    return max(dp)


@ctx.batch
def shared_rows(n):
    grid = [[0] * 3] * 2
    grid[0][1] = n
    return grid[1][1]


@ctx.batch
def float_literal_after_an_int(v, n):
    """`x` holds an int, then a float literal: in Python x is 0.5, never 0."""
    x = v[0]
    if n > 1:
        x = 0.5
    return x


# ---- operators with Python's meaning ---------------------------------------------


@ctx.batch
def bits(n, k):
    """Shifts and bit operators on ints, as bit-manipulation code writes them."""
    shifted = (n << k) + (n >> 1) + (-n >> k)
    mixed = (n & 0xF) | (k ^ 3)
    gray = n ^ (n >> 1)
    return shifted, mixed, gray, ~n, n & -n


@ctx.batch
def reverse_bits(n):
    result = 0
    for _ in range(8):
        result = (result << 1) | (n & 1)
        n >>= 1
    return result


@ctx.batch
def bools_as_ints(a, b):
    """`True + True` is 2, `-flag` is -1, `~flag` is -2: bools are ints."""
    both = (a > 0) + (b > 0)
    count = 0
    count += a == b
    flag = a < b
    return both, count, -flag, ~flag, flag * 3 + (a != b), flag & (a > 0)


@ctx.batch
def divide_after_a_guard(a, b):
    """The divisor is zero only in examples that returned already: the
    others must never raise (TF raises on integer division by zero even in
    lanes whose result is thrown away)."""
    if a == b:
        return 0
    return 100 // (a - b) + 100 % (b - a)


@ctx.batch
def triangle_kind(a, b, c):
    """`sorted()` of a tuple of numbers, unpacked."""
    a, b, c = sorted((a, b, c))
    if a + b <= c:
        return 0
    high, middle, low = sorted([a, b, c], reverse=True)
    return 1 + (a == c) + (high == middle) + low


@ctx.batch
def round_float_to_digits(x):
    return round(x, 2)
