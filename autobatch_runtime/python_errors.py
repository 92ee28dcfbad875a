"""Where Python raises on one example, the batched program stops that example.

`1.0 / d`, `a % d`, `math.sqrt(x)`, `math.exp(x)`, `int(x)` and `x ** y` on
per-example numbers raise in Python for some values (ZeroDivisionError,
ValueError "math domain error", OverflowError).  Array libraries return
inf, NaN or a wrapped int instead, which would be a wrong answer given
without an error.  So the generated block computes, beside each such
operation, a fault flag per error Python could raise there:

    fault_1 = rt.python_error(active, "ValueError", "sqrt", x)
    y = rt.py_math("sqrt", x)

and the examples whose flag is set stop at that block; the entry then
raises that error, naming the line (common.check_index).  The flags are
masked by `active`: examples elsewhere in the program compute with their
junk and never raise.

The rules follow CPython's math module (a NaN result from arguments that are
not NaN is a domain error; an infinite result from finite arguments is an
overflow for exp, expm1, cosh, sinh and pow, else a domain error) and its
float operators.  `errors_of` is the table the compiler reads (which flags
a site gets); `helpers(ops)` builds each backend's functions over its array
operations.
"""

import builtins

# An entry of a program's index lines that is a Python error, not a
# subscript: PYTHON_ERROR + "ZeroDivisionError: division by zero; in f at x.py:3: ...".
PYTHON_ERROR = "raises "

# `math` functions by the errors Python raises for some float arguments.
DOMAIN = frozenset(
    "sqrt log log2 log10 log1p sin cos tan asin acos acosh atanh fmod pow isqrt".split()
)
OVERFLOWING = frozenset("exp expm1 cosh sinh pow".split())
INT_CONVERSIONS = frozenset("floor ceil trunc".split())  # math.<name>: float -> int, as int() does
COUNTING = frozenset("factorial comb perm".split())  # of ints: ValueError below 0, beyond int64 stops

_DIVISION = ("ZeroDivisionError", "division by zero")
_DOMAIN = ("ValueError", "math domain error")
_RANGE = ("OverflowError", "math range error")
_NAN_TO_INT = ("ValueError", "cannot convert float NaN to integer")
_INF_TO_INT = (
    "OverflowError",
    "cannot convert float infinity to integer, or a float beyond the program's 64-bit ints",
)
_ZERO_POWER = ("ZeroDivisionError", "0.0 cannot be raised to a negative power")
_COMPLEX_POWER = (
    "ValueError",
    "a negative number to a fractional power: Python's value is a complex number, "
    "which the program does not compute",
)
_POWER_RANGE = ("OverflowError", "numerical result out of range")
_SHIFT = ("ValueError", "negative shift count")
_NOT_IN_LIST = ("ValueError", "the value is not in list")
_BEYOND_INT64 = "the result is beyond the program's 64-bit ints (Python's int would grow)"
# math.factorial, comb, perm: ((error, message, check), ...)
_COUNTING_ERRORS = {
    "factorial": (
        ("ValueError", "factorial() not defined for negative values", "factorial_negative"),
        ("OverflowError", _BEYOND_INT64, "factorial_range"),
    ),
    "comb": (
        ("ValueError", "n must be a non-negative integer", "counting_n"),
        ("ValueError", "k must be a non-negative integer", "counting_k"),
        ("OverflowError", _BEYOND_INT64, "comb_range"),
    ),
    "perm": (
        ("ValueError", "n must be a non-negative integer", "counting_n"),
        ("ValueError", "k must be a non-negative integer", "counting_k"),
        ("OverflowError", _BEYOND_INT64, "perm_range"),
    ),
}
_LARGEST_INT64 = 2**63 - 1
_FACTORIAL_STEPS = 20  # 20! is the largest factorial an int64 holds
# comb(n, j) for j = min(k, n - k) > 33 is beyond int64 for every n (comb(68, 34) > 2**63)
_COMB_STEPS = 33
_RANGE_STEP = ("ValueError", "range() arg 3 must not be zero")

_INT_LIMIT = 2.0**63  # int64 holds [-2**63, 2**63)
_INFINITY = float("inf")


def errors_of(operation, arity=1):
    """((error name, message[, check]), ...): what Python may raise for `operation`
    ("divide", "int", "power", "powmod" or a `math` function's name) with
    `arity` operands; () where it never raises on floats.  `check`, where
    given, names the runtime's test in place of `operation` (one operation,
    two tests for one error class)."""
    if operation == "divide":
        return (_DIVISION,)
    if operation == "shift":
        return (_SHIFT,)
    if operation == "int_power":
        return (("OverflowError", _BEYOND_INT64),)
    if operation == "not_found":
        return (_NOT_IN_LIST,)
    if operation in _COUNTING_ERRORS:
        return _COUNTING_ERRORS[operation]
    if operation == "range_step":
        return (_RANGE_STEP,)
    if operation == "powmod":
        return POWMOD_ERRORS
    if operation == "int" or operation in INT_CONVERSIONS:
        return (_NAN_TO_INT, _INF_TO_INT)
    if operation == "power":
        return (_ZERO_POWER, _COMPLEX_POWER, _POWER_RANGE)
    if operation == "log" and arity == 2:
        return (_DOMAIN, _DIVISION)  # log(x, 1) divides by log(1) == 0
    out = ()
    if operation in DOMAIN:
        out += (_DOMAIN,)
    if operation in OVERFLOWING:
        out += (_RANGE,)
    return out


# pow(b, e, m): the runtime squares residues in int64, exact for |m| up to this
_POWMOD_LIMIT = 3037000499  # isqrt(2**63 - 1)
POWMOD_ERRORS = (
    ("ValueError", "pow() 3rd argument cannot be 0", "powmod_zero"),
    (
        "ValueError",
        "pow() of a negative exponent with a modulus (a modular inverse) is not computed per "
        "example: write the extended Euclid algorithm as a helper",
        "powmod_inverse",
    ),
    (
        "OverflowError",
        f"a modulus beyond {_POWMOD_LIMIT} would overflow the program's 64-bit products",
        "powmod_range",
    ),
)


def unbound_errors(name):
    """What reading local `name` unassigned raises (passes/unbound.py)."""
    return (
        (
            "UnboundLocalError",
            f"cannot access local variable '{name}' where it is not associated with a value",
        ),
    )


def empty_errors(function):
    """What `max` or `min` of an empty comprehension raises (no default=:
    frontend/comprehensions.py), in this Python's words."""
    try:
        getattr(builtins, function)(())
    except ValueError as error:
        return (("ValueError", str(error)),)
    raise AssertionError(f"{function}(()) raised nothing")


def none_errors(name):
    """What using local `name` as a number raises where it is None
    (`r * 2`, `r < 3`, `abs(r)`: passes/python_comparisons.py)."""
    return (
        (
            "TypeError",
            f"'{name}' is None here, and None is not a number "
            "(unsupported operand type 'NoneType')",
        ),
    )


def power_errors(exponent=None):
    """What Python's float `base ** exponent` may raise; a literal exponent
    rules some out (`x ** 2` can only overflow, `x ** -1` can also divide
    by zero, `x ** 0.5` can go complex)."""
    if exponent is None:
        return errors_of("power")
    out = ()
    if exponent < 0:
        out += (_ZERO_POWER,)
    if exponent != int(exponent):
        out += (_COMPLEX_POWER,)
    return out + (_POWER_RANGE,)


def line_entry(error, message, location):
    """The index-line entry of a site that raises `error` (see PYTHON_ERROR)."""
    return f"{PYTHON_ERROR}{error}: {message}; {location}"


def raise_entry(function, examples, entry):
    """Raises the Python error an entry names, for `examples` (a list)."""
    error, rest = entry[len(PYTHON_ERROR) :].split(": ", 1)
    message, location = rest.split("; ", 1)
    raise getattr(builtins, error)(
        f"{function}: example(s) {examples[:10]} raised {error}: {message} ({location}); "
        "each stopped there"
    )


class ArrayOps:
    """What `helpers` needs of a backend, as plain functions of its arrays."""

    def __init__(
        self, asarray, as_float, is_float, isnan, isfinite, floor, where, ones_like, power, math
    ):
        self.asarray = (
            asarray  # any value (a Python number too, as int64 or float64) -> the backend's array
        )
        self.as_float = as_float  # array -> float64 array
        self.is_float = is_float  # array -> whether its dtype is a float (static)
        self.isnan, self.isfinite, self.floor, self.where = isnan, isfinite, floor, where
        self.ones_like = ones_like
        self.power = power  # float arrays -> float array, never raising
        self.math = math  # (name, *arrays) -> the backend's py_math


def array_ops(xp, math, power=None):
    """ArrayOps of NumPy or jax.numpy (`xp`), with the backend's py_math."""
    return ArrayOps(
        asarray=xp.asarray,
        as_float=lambda a: a.astype(xp.float64),
        is_float=lambda a: a.dtype.kind == "f",
        isnan=xp.isnan,
        isfinite=xp.isfinite,
        floor=xp.floor,
        where=xp.where,
        ones_like=xp.ones_like,
        power=power or xp.power,
        math=math,
    )


def helpers(ops):
    """`python_error`, `py_bound`, `py_not_none`, `py_divisor`, `py_power` (and
    `py_isclose`, whose infinities work like these) for one backend."""

    def py_divisor(value):
        """A per-example divisor (a number) with 1 where it is 0: those
        examples stop (python_error "divide"), and no lane divides by zero."""
        value = ops.asarray(value)
        return ops.where(value == 0, ops.ones_like(value), value)

    def py_power(base, exponent):
        """`base ** exponent` of per-example numbers, one a float: the array
        power, which gives NaN or inf where Python raises or goes complex
        (python_error "power" stops those examples)."""
        base, exponent = ops.as_float(ops.asarray(base)), ops.as_float(ops.asarray(exponent))
        result = ops.power(base, exponent)
        # NumPy (and XLA) take `x ** 0.5` for sqrt(x), NaN at -inf where
        # Python gives inf: -inf's powers are inf's, negated for odd ints.
        half = ops.floor(exponent * 0.5)
        odd = (exponent == ops.floor(exponent)) & (half * 2.0 != exponent)
        of_inf = ops.power(-base, exponent)  # used only where base is -inf
        of_minus_inf = ops.where(odd, -of_inf, of_inf)
        return ops.where(base == -_INFINITY, of_minus_inf, result)

    def py_isclose(a, b, rel_tol, abs_tol):
        """`math.isclose(a, b, rel_tol=..., abs_tol=...)`: equal, or (both
        finite) within the larger of the relative and absolute tolerance."""
        a, b = ops.as_float(ops.asarray(a)), ops.as_float(ops.asarray(b))
        rel_tol, abs_tol = ops.as_float(ops.asarray(rel_tol)), ops.as_float(ops.asarray(abs_tol))
        difference = abs(b - a)
        near = (difference <= abs(rel_tol * b)) | (difference <= abs(rel_tol * a))
        near = near | (difference <= abs_tol)
        finite = ops.isfinite(a) & ops.isfinite(b)
        return (a == b) | (finite & near)

    def python_error(active, error, operation, *operands):
        """[batch] bool: the active examples for which Python's `operation`
        on `operands` (per-example numbers, or Python numbers) raises `error`."""
        return active & _raises(error, operation, [ops.asarray(o) for o in operands])

    def py_shift_count(count):
        """A per-example shift count (an int), 0 where it is negative: those
        examples stop (python_error "shift", Python's ValueError)."""
        count = ops.asarray(count)
        return ops.where(count < 0, count * 0, count)

    def py_range_step(step):
        """`range()`'s per-example step, 1 where it is 0: those examples stop
        (python_error "range_step", Python's ValueError), and no loop runs
        forever."""
        step = ops.asarray(step)
        return ops.where(step == 0, ops.ones_like(step), step)

    def py_int_power(base, exponent):
        """`base ** exponent` of per-example ints (exponent >= 0: see
        exponent_or_zero), wrapped to int64 where Python's int grows
        (python_error "int_power" stops those examples)."""
        return ops.asarray(base) ** ops.asarray(exponent)

    def _int_power_overflows(base, exponent):
        """Whether the int power differs from the float power by more than
        rounding: wrapping moves it by a multiple of 2**64."""
        exact = ops.asarray(base) ** ops.asarray(exponent)
        estimate = ops.power(ops.as_float(ops.asarray(base)), ops.as_float(ops.asarray(exponent)))
        error = abs(estimate - ops.as_float(exact))
        return ~ops.isfinite(estimate) | (error > 1e-9 * abs(estimate))

    def py_bit_length(n):
        """`n.bit_length()` of a per-example int: how many of 2**0 .. 2**62
        are at most |n| (64 for -2**63, whose |n| int64 cannot hold)."""
        n = ops.asarray(n)
        magnitude = ops.where(n < 0, -n, n)
        length = n * 0
        for k in range(63):
            length = length + ops.where(magnitude >= 2**k, n * 0 + 1, n * 0)
        return ops.where(n == -(2**63), n * 0 + 64, length)

    def py_factorial(n):
        """`math.factorial(n)` of a per-example int: exact where it fits in
        int64 (n <= 20); beyond, and for n < 0, the example stops."""
        n = ops.asarray(n)
        result = ops.ones_like(n)
        for i in range(2, _FACTORIAL_STEPS + 1):
            result = ops.where(n >= i, result * i, result)
        return result

    def py_comb(n, k):
        """`math.comb(n, k)` of per-example ints (0 where k > n)."""
        return _comb(n, k)[0]

    def py_perm(n, k):
        """`math.perm(n, k)` of per-example ints (0 where k > n)."""
        return _perm(n, k)[0]

    def _comb(n, k):
        """(comb(n, k), whether it is beyond int64), exactly: comb(n - j + i, i)
        for i = 1 .. j = min(k, n - k), each step q * a + (r * a) // i where
        q, r = divmod(previous, i) and a = n - j + i (no step overflows unless
        the result does)."""
        n, k = ops.asarray(n), ops.asarray(k)
        zero = n * 0
        valid = (n >= 0) & (k >= 0) & (k <= n)
        j = ops.where(k + k > n, n - k, k)
        beyond = valid & (j > _COMB_STEPS)
        j = ops.where(valid & ~beyond, j, zero)
        base = n - j  # >= 0 wherever j > 0
        result = ops.ones_like(n)
        for i in range(1, _COMB_STEPS + 1):
            grows = (i <= j) & ~beyond
            a = ops.where(grows, base + i, zero + 1)
            q, r = result // i, result % i
            part = r * a // i
            over = grows & (q > (_LARGEST_INT64 - part) // a)
            beyond = beyond | over
            result = ops.where(grows & ~over, q * a + part, result)
        return ops.where(valid, result, zero), beyond

    def _perm(n, k):
        """(perm(n, k), whether it is beyond int64): n (n - 1) ... (n - k + 1),
        at least k!, so beyond int64 wherever 20 < k <= n."""
        n, k = ops.asarray(n), ops.asarray(k)
        zero = n * 0
        valid = (n >= 0) & (k >= 0) & (k <= n)
        beyond = valid & (k > _FACTORIAL_STEPS)
        result = ops.ones_like(n)
        for i in range(_FACTORIAL_STEPS):
            grows = valid & (i < k) & ~beyond
            a = ops.where(grows, n - i, zero + 1)
            over = grows & (result > _LARGEST_INT64 // a)
            beyond = beyond | over
            result = ops.where(grows & ~over, result * a, result)
        return ops.where(valid, result, zero), beyond

    def py_bound(assigned, name):
        """A local's flag, read where some path may not have assigned it
        (passes/unbound.py): the block stops the examples where it is False."""
        return assigned

    def py_nonempty(found, value, function):
        """`max` or `min` of a comprehension, `value`, read where it may have
        had no element (`found` False): the block stops those examples
        (python_error "empty"), as Python raises ValueError."""
        return value

    def py_not_none(present, value, name):
        """An optional's value, read as a number where Python would use it
        as one (passes/python_comparisons.py): the block stops the examples
        where it is None (python_error "none"), as Python raises TypeError."""
        return value

    def _raises(error, operation, operands):
        if operation in ("bound", "none", "empty"):
            return ~operands[0]
        if operation.startswith("powmod"):
            _, exponent, modulus = operands
            if operation == "powmod_zero":
                return modulus == 0
            if operation == "powmod_inverse":
                return (exponent < 0) & (modulus != 0)
            return (modulus > _POWMOD_LIMIT) | (modulus < -_POWMOD_LIMIT)
        if operation in ("divide", "range_step"):
            return operands[0] == 0
        if operation in ("shift", "not_found"):
            return operands[0] < 0
        if operation == "int_power":
            return _int_power_overflows(*operands)
        if operation == "factorial_negative":
            return operands[0] < 0
        if operation == "factorial_range":
            return operands[0] > _FACTORIAL_STEPS
        if operation == "counting_n":
            return operands[0] < 0
        if operation == "counting_k":
            return (operands[0] >= 0) & (operands[1] < 0)
        if operation in ("comb_range", "perm_range"):
            return (_comb if operation == "comb_range" else _perm)(*operands)[1]
        if operation == "int" or operation in INT_CONVERSIONS:
            (value,) = operands
            if not ops.is_float(value):
                return value != value  # ints and bools convert: all False
            if error == "ValueError":
                return ops.isnan(value)
            return ~ops.isnan(value) & ~((value >= -_INT_LIMIT) & (value < _INT_LIMIT))
        floats = [ops.as_float(o) for o in operands]
        finite = _all([ops.isfinite(f) for f in floats])
        if operation == "power":
            base, exponent = floats
            zero_power = (base == 0) & (exponent < 0)
            fractional = (base < 0) & finite & (exponent != ops.floor(exponent))
            if error == "ZeroDivisionError":
                return zero_power
            if error == "ValueError":
                return fractional
            result = ops.power(base, exponent)
            return finite & ~zero_power & ~fractional & ~ops.isfinite(result) & ~ops.isnan(result)
        if operation in ("log", "log2", "log10"):
            # log(x[, base]): x <= 0 (or base <= 0) is a domain error; base 1 divides by zero
            domain = _any([f <= 0 for f in floats])
            if error == "ValueError":
                return domain
            return ~domain & (floats[1] == 1)
        if operation == "isqrt":
            return operands[0] < 0
        result = ops.math(operation, *floats)
        infinite = ~ops.isfinite(result) & ~ops.isnan(result)
        if error == "OverflowError":
            overflow = finite & infinite
            if operation == "pow":  # pow(0.0, -1.0) is a domain error
                overflow = overflow & ~((floats[0] == 0) & (floats[1] < 0))
            return overflow
        none_nan = ~_any([ops.isnan(f) for f in floats])
        domain = ops.isnan(result) & none_nan
        if operation not in OVERFLOWING:
            domain = domain | (finite & infinite)  # atanh(1.0), log1p(-1.0)
        elif operation == "pow":
            domain = domain | ((floats[0] == 0) & (floats[1] < 0))
        return domain

    return {
        "python_error": python_error,
        "py_bound": py_bound,
        "py_divisor": py_divisor,
        "py_isclose": py_isclose,
        "py_power": py_power,
        "py_bit_length": py_bit_length,
        "py_factorial": py_factorial,
        "py_int_power": py_int_power,
        "py_comb": py_comb,
        "py_perm": py_perm,
        "py_range_step": py_range_step,
        "py_shift_count": py_shift_count,
        "py_not_none": py_not_none,
        "py_nonempty": py_nonempty,
    }


def _all(flags):
    out = flags[0]
    for flag in flags[1:]:
        out = out & flag
    return out


def _any(flags):
    out = flags[0]
    for flag in flags[1:]:
        out = out | flag
    return out
