"""Programs that use Python's operators as written, on per-example values.

Shared by tests/test_python_operators.py; each must mean, batched, what it
means on one example in plain Python:

- integer `//`, `%` and `**` whose divisor or exponent differs per example:
  straight-line code runs for every example, so an example that is
  elsewhere in the program (or on the other side of `b != 0 and ...`)
  divides by its junk, which must never raise;
- bit operators on ints (and on bools, which are ints in Python);
- bools in arithmetic (`count + (x > 0)`, `True + True == 2`, `-flag`).

Generated modules go to a temporary folder.
"""

import tempfile

import numpy as np
import tensorflow as tf

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-operators-"))


# ---- idle lanes never raise -----------------------------------------------


@ctx.batch
def gcd(a, b):
    """Euclid by tail recursion: `a % b` in a block that other examples
    pass through with their own (zero) `b`."""
    if b == 0:
        return a
    return gcd(b, a % b)


@ctx.batch
def gcd_loop(a, b):
    while b:
        a, b = b, a % b
    return a


@ctx.batch
def gcd_through_recursion(a, b, depth):
    """Values passed through recursion (swapped on the way), then the loop."""
    if depth > 0:
        return gcd_through_recursion(b, a, depth - 1) + 1
    while b:
        a, b = b, a % b
    return a


@ctx.batch
def quotient_sum(a, b):
    """`a // b` after a recursive call: its `b` is read from a stack, where
    examples that never saved one hold zeros."""
    if b == 0:
        return a
    g = quotient_sum(b, a % b)
    return g + a // b


@ctx.batch
def harmonic(x, n):
    """A divisor computed in the block (`n - 1`): an example not in the loop
    has junk there, zero among it."""
    total = 0
    while n > 1:
        total += x // (n - 1)
        n -= 1
    return total


@ctx.batch
def divisible(a, b):
    """Python never evaluates `a % b` where `b == 0`; the batch does."""
    return b != 0 and a % b == 0


@ctx.batch
def quotient(a, b):
    return a // b if b != 0 else 0


@ctx.batch
def lcm(a, b):
    if a == 0 or b == 0:
        return 0
    return a // gcd(a, b) * b


@ctx.batch
def power(x, k):
    """An integer to a per-example power: NumPy and TensorFlow raise on a
    negative integer exponent, which the other side's examples have."""
    if k < 0:
        return -1
    return x**k


@ctx.batch
def vector_quotients(v, w, n):
    """A per-example vector divisor read back from a stack."""
    if n == 0:
        return v % w
    inner = vector_quotients(v, w, n - 1)
    return inner + v // w


# ---- bit operators ------------------------------------------------------------


@ctx.batch
def bit_ops(a, b):
    return (a << b, a >> b, a & b, a | b, a ^ b, ~a, a >> (b + 60), (a & 255) << 3)


@ctx.batch
def popcount(n):
    count = 0
    while n:
        count += n & 1
        n >>= 1
    return count


@ctx.batch
def bool_bits(a, b):
    """Bools are ints: `p & 1` is an int, `~p` is -2 or -1; bool with bool
    stays a bool."""
    p = a > 0
    q = b > 0
    return (p & q, p | q, p ^ q, p & 1, ~p, p << 2, True & q, q ^ True, 3 | p)


STRICT = True  # a module-level bool: an int in arithmetic, as in Python


@ctx.batch
def global_flag(n):
    return (n << STRICT) + (STRICT & n) - STRICT * (n > 0) + (n >> STRICT)


@ctx.batch
def shifted_vector(v, k):
    """A per-example vector shifted by a per-example count."""
    return (v << k) | (v >> k)


@ctx.batch
def narrow_bits(n):
    """int32 stays int32 (`n << 2`, `n & 7`)."""
    return (n << 2) + (n & 7) - (n >> 1)


# ---- bools in arithmetic ----------------------------------------------------


@ctx.batch
def count_positive(v):
    count = 0
    for i in range(len(v)):
        count += v[i] > 0
    return count


@ctx.batch
def count_zeros(v):
    total = 0
    for i in range(len(v)):
        total += v[i] == 0
    return total


@ctx.batch
def edit_distance(s, t):
    """Levenshtein distance, one row at a time: `prev[j - 1] + (a != b)`."""
    prev = np.zeros(len(t) + 1, dtype=np.int64)
    for j in range(len(t) + 1):
        prev[j] = j
    for i in range(1, len(s) + 1):
        cur = np.zeros(len(t) + 1, dtype=np.int64)
        cur[0] = i
        for j in range(1, len(t) + 1):
            best = prev[j] + 1
            if cur[j - 1] + 1 < best:
                best = cur[j - 1] + 1
            substitute = prev[j - 1] + (s[i - 1] != t[j - 1])
            if substitute < best:
                best = substitute
            cur[j] = best
        prev = cur
    return prev[len(t)]


@ctx.batch
def bool_arithmetic(x, y):
    p = x > 0
    q = y > 0
    return (
        p + q,
        p * q,
        p - q,
        -(x > y),
        +(x > y),
        True + p,
        p + True + True,
        (x > y) ** 2,
        p // True,
        p % 2,
        p / 2,
        p * 1.5,
        p + x,
        p == 1,
        q != 0.0,
    )


@ctx.batch
def masked(x, v, t):
    """A float times a bool, as masks are written (`x * (x > t)`, a ReLU as
    `v * (v > 0)`): Python's product, where `nan * False` and `inf * False`
    are nan (XLA's simplifier made them 0)."""
    return x * (x > t), (x < t) * x, (v * (v > 0)).sum(), (v > t) * 2.5


@ctx.batch
def sign(x):
    return (x > 0) - (x < 0)


@ctx.batch
def literal_bools(x):
    return True + True + x, x * (True + True), x - True


@ctx.batch
def narrow_count(n):
    """An int32 plus a bool stays int32."""
    return n + (n > 0) - (n < -3)


# ---- calls the mixing probe cannot run per example --------------------------


def pick(v, i):
    """v[b][i[b]] for each example b: a helper that is batched already (the
    predecessor's way), given the whole batch."""
    if isinstance(v, np.ndarray):
        return np.take_along_axis(v, i[:, None], axis=-1)[:, 0]
    return tf.gather(v, i, batch_dims=1)


# A helper made by `exec` has no module: the batch-axis checks took it for a
# builtin (its type's module) and called it per example.
_made = {"np": np, "tf": tf}
exec(  # noqa: S102
    compile(
        '''
def pick_rows(m, rows):
    """m[b][rows[b]]: each example's rows, in the order `rows` gives them."""
    if isinstance(m, np.ndarray):
        return m[np.arange(m.shape[0])[:, None], rows]
    return tf.gather(m, rows, batch_dims=1)
''',
        "<helper>",
        "exec",
    ),
    _made,
)
pick_rows = _made["pick_rows"]


@ctx.batch
def picked(v, i):
    if i > 0:
        return pick(v, i) * 2
    return pick(v, i)


@ctx.batch
def picked_rows(m, rows):
    return pick_rows(m, rows) + 1


@ctx.batch
def halving_sum(n):
    """Python's `2 ** k` for a negative int k is a float (0.5, 0.25, ...),
    which this int power cannot be: refused for those examples at run time."""
    total = 0
    k = -n
    while k <= n:
        total = total + 2**k  # <-- negative k for n > 0
        k = k + 1
    return total


@ctx.batch
def guarded_power(k, n):
    """The power runs only where Python evaluates it (`and` short-circuits)."""
    return k >= 0 and 2**k > n
