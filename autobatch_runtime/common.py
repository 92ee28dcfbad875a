"""Runtime helpers shared by both backends.

They use NumPy only: they run outside the batched loop, on its results.
Both backend modules re-export them, so generated code reaches every helper
as `rt.<name>` whichever backend it runs on.
"""

import linecache
import typing

import numpy as np

from autobatch_runtime import python_errors
from autobatch_runtime.errors import IterationLimitError, StackMemoryError, StackOverflowError

# Stacks larger than this are refused before they are allocated (4 GiB);
# transpiler.context.DEFAULT_MAX_STACK_BYTES is this figure.
DEFAULT_MAX_STACK_BYTES = 2**32


def field_helpers(select, save):
    """A backend's `select_fields` and `save_all`, written once over its
    `select` and `save` (generated blocks call them: rt.select_fields)."""

    def select_fields(active, state, **new):
        """`state` with each field in `new` replaced per example: the new
        value where `active`, else the field as it was (one `select` each)."""
        return state._replace(**{f: select(active, v, getattr(state, f)) for f, v in new.items()})

    def save_all(stacks, frame, active, **values):
        """`save` of each value onto the stack of its name, at level `frame`.

        Returns (writes, overflow): the writes by stack name (for
        `stack_writes(stacks, **writes)`) and the active examples whose
        stacks were full (the `|` of each save's).
        """
        writes, overflow = {}, None
        for name, value in values.items():
            writes[name], full = save(getattr(stacks, name), frame, value, active)
            overflow = full if overflow is None else overflow | full
        return writes, overflow

    return select_fields, save_all


def block_writes(writes):
    """`writes` (per block: the state fields and the stacks it writes) as
    pairs of tuples of names.  A generated module writes each block's as one
    string, the names apart by spaces, the stacks after a "|"
    ("pc fib_n return_sp | returns"); a pair of name lists is taken too."""
    if writes is None:
        return None
    out = []
    for written in writes:
        if isinstance(written, str):
            fields, _, stacks = written.partition("|")
            out.append((tuple(fields.split()), tuple(stacks.split())))
        else:
            out.append(tuple(tuple(names) for names in written))
    return tuple(out)


def check_results(function, errors, pc, error_lines, max_stack_depth, max_iterations):
    """Raises what stopped examples early, read off the loop's final state.

    errors: (overflow_at[, index_error_at]) and pc, as NumPy arrays;
    error_lines: (the block lines[, the source lines of the subscripts]).
    """
    check_errors(function, errors, error_lines, max_stack_depth)
    check_finished(function, pc, error_lines[0], max_iterations)


def check_errors(function, errors, error_lines, max_stack_depth):
    """Raises what stopped examples early.

    errors: (overflow_at[, index_error_at]), [batch] int32 each, -1 for an
    example that did not stop; error_lines: what each value means, (the
    block lines[, the source lines of the subscripts]).  Inside a traced
    function (stackless under XLA) the values are symbolic and cannot be
    read; the examples then keep their clipped values.
    """
    try:
        errors = [np.asarray(e) for e in errors]
    except (TypeError, NotImplementedError):  # a symbolic tensor
        return
    if len(errors) > 1:
        check_index(function, errors[1], error_lines[1])
    if max_stack_depth is not None:
        check_overflow(function, errors[0], error_lines[0], max_stack_depth)


# How an entry of a program's index lines marks a power, not a subscript:
# `2 ** k` with an int k that was negative for an example (negative_power).
NEGATIVE_POWER = "a negative power "


def check_index(function, index_error_at, index_lines):
    """Raises IndexError if an active example indexed out of range, the
    error Python raises where an example divided by zero, left a `math`
    function's domain or overflowed (python_errors.py), or ValueError if it
    raised an int to a negative int power (whose Python value, a float, the
    program's int cannot hold)."""
    examples = np.nonzero(index_error_at >= 0)[0]
    if examples.size:
        where = index_lines[index_error_at[examples[0]]]
        if where.startswith(python_errors.PYTHON_ERROR):
            python_errors.raise_entry(function, examples.tolist(), where)
        if where.startswith(NEGATIVE_POWER):
            raise ValueError(
                f"{function}: example(s) {examples.tolist()[:10]} raised an int to a negative "
                f"int power ({where[len(NEGATIVE_POWER):]}); Python's value there is a float "
                "(2 ** -1 == 0.5) and this program computes an int: write a float base "
                "(2.0 ** k) for a float power.  Each stopped there"
            )
        raise IndexError(
            f"{function}: example(s) {examples.tolist()[:10]} indexed out of range "
            f"({where}); each stopped there, as it would on its own"
        )


def check_overflow(function, overflow_at, block_lines, max_stack_depth):
    """Raises StackOverflowError if any example overflowed a stack."""
    overflow_at = np.asarray(overflow_at)
    examples = np.nonzero(overflow_at >= 0)[0]
    if examples.size:
        where = block_lines[overflow_at[examples[0]]]
        raise StackOverflowError(
            f"{function}: example(s) {examples.tolist()[:10]} recursed deeper than "
            f"max_stack_depth={max_stack_depth} ({where}); call again with a "
            f"larger max_stack_depth (e.g. max_stack_depth={2 * max_stack_depth})"
        )


def check_finished(function, pc, block_lines, max_iterations):
    """Raises IterationLimitError if the loop stopped at `max_iterations` early.

    `pc` is every example's next block after the loop.  The earliest block
    any example waits at is the likely endless loop: blocks run lowest
    first (or, with per-example vectors, busiest first, and an endless
    loop outlasts the other examples, which finish); examples at later
    blocks were waiting behind it.
    """
    if max_iterations is None:
        return
    pc = np.asarray(pc)
    unfinished = pc < len(block_lines)
    if unfinished.any():
        block = pc[unfinished].min()
        running = np.nonzero(pc == block)[0].tolist()
        behind = int(unfinished.sum()) - len(running)
        raise IterationLimitError(
            f"{function}: example(s) {running[:10]} still running after "
            f"max_iterations={max_iterations} loop iterations, {block_lines[block]}"
            + (f" ({behind} more example(s) waiting behind them)" if behind else "")
            + "; a loop that never ends? If they only need longer, call again with "
            f"a larger max_iterations (e.g. max_iterations={2 * max_iterations})"
        )


SIZE_PREFIX = "size_"  # a symbolic size's variable in generated code: size_n


def fits(shape, declared) -> bool:
    """True if a per-example `shape` has the `declared` one: its rank, and its
    sizes where they are numbers (a symbol, "n", takes any size)."""
    return len(shape) == len(declared) and all(
        isinstance(d, str) or s is None or int(s) == d for s, d in zip(shape, declared)
    )


def shape_text(declared) -> str:
    """A declared per-example shape for messages: (n, 3)."""
    return "(" + ", ".join(str(d) for d in declared) + ("," if len(declared) == 1 else "") + ")"


def bind_sizes(entry, leaves) -> dict:
    """{symbol: size} of a call, read off its argument leaves ([batch, *event]).

    A symbol names one size wherever it appears (`dot(u: float64[n], v:
    float64[n])`); arguments that disagree are refused here, naming both,
    rather than failing inside the program with a broadcasting error.
    """
    sizes, seen = {}, {}
    for name, (_, declared), leaf in zip(entry.params, entry.types, leaves):
        for axis, d in enumerate(declared):
            if not isinstance(d, str):
                continue
            size = leaf.shape[axis + 1]
            size = None if size is None else int(size)
            if d in sizes and size is not None and sizes[d] is not None and sizes[d] != size:
                raise TypeError(
                    f"{entry.name}: size {d} is {sizes[d]} in argument {seen[d]} but {size} in "
                    f"argument {name} (axis {axis}); the program is written for arguments "
                    "whose sizes named alike are equal"
                )
            if sizes.get(d) is None:
                sizes[d], seen[d] = size, name
    return sizes


def check_stack_bytes(function, leaves, max_stack_depth, level_bytes, max_stack_bytes):
    """Refuses stacks larger than `max_stack_bytes`, before they are allocated.

    Stacks take max_stack_depth x batch x `level_bytes` (the bytes one
    example stacks per level of recursion); past the machine's memory an
    allocator fails with an unhelpful message, or the machine swaps.
    """
    batch = leaves[0].shape[0] if leaves else 1
    if batch is None:
        return  # unknown while tracing a graph of unknown batch size
    needed = int(max_stack_depth) * int(batch) * level_bytes
    if needed > max_stack_bytes:
        raise StackMemoryError(
            f"{function}: the stacks would take {_size(needed)} (max_stack_depth="
            f"{max_stack_depth} x batch {batch} x {level_bytes} bytes per example and "
            f"level), over max_stack_bytes={_size(max_stack_bytes)}; lower "
            "max_stack_depth, split the batch, or raise max_stack_bytes"
        )


def _size(n):
    """A byte count for people: '12.0 GiB (12884901888 bytes)'."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit} ({n} bytes)"
    return f"{n} bytes"


def note_source_line(error, block_lines, block_prefix):
    """Adds the user's source line to an error raised inside a block function.

    Python errors raised by a primitive (in NumPy, or while TensorFlow traces)
    pass through a block function; the nearest `# file:line  text` comment
    above the failing generated line names the user's line.
    """
    frame, found = error.__traceback__, None
    while frame is not None:
        code = frame.tb_frame.f_code
        if block_prefix in code.co_name:
            found = (code.co_filename, frame.tb_lineno, code.co_name)
        frame = frame.tb_next
    if found is None:
        return
    filename, lineno, name = found
    for number in range(lineno, 0, -1):
        text = linecache.getline(filename, number).strip()
        if text.startswith("# ") and ":" in text.split()[1]:
            error.add_note(f"autobatch: raised by the batched code for {text[2:]}")
            return
    suffix = name.rsplit("_block_", 1)[-1]
    if suffix.isdigit() and int(suffix) < len(block_lines):
        error.add_note(f"autobatch: raised by the batched code for {block_lines[int(suffix)]}")


class Profile(typing.NamedTuple):
    """What one batched call did, block by block (from `profile=True`)."""

    block_lines: tuple  # where each block comes from in the source
    block_runs: tuple  # loop iterations that ran each block
    block_active: tuple  # examples at each block, summed over its runs
    batch: int
    deepest_call: int  # the deepest recursion any example reached

    @property
    def iterations(self):
        return sum(self.block_runs)

    @property
    def utilization(self):
        """Useful example-steps / (iterations x batch): 1.0 is perfect batching."""
        total = self.iterations * self.batch
        return sum(self.block_active) / total if total else 1.0

    def report(self):
        lines = [
            f"{self.iterations} iterations over {self.batch} examples, utilization "
            f"{self.utilization:.1%}, deepest call {self.deepest_call}",
            f"{'block':>5} {'runs':>8} {'active/run':>10}  source",
        ]
        for k, (where, runs, active) in enumerate(
            zip(self.block_lines, self.block_runs, self.block_active)
        ):
            mean = active / runs if runs else 0.0
            lines.append(f"{k:>5} {runs:>8} {mean:>10.1f}  {where}")
        return "\n".join(lines)


def make_profile(counters, block_lines, batch):
    runs, active, deepest = counters
    return Profile(
        tuple(block_lines),
        tuple(int(r) for r in np.asarray(runs)),
        tuple(int(a) for a in np.asarray(active)),
        int(batch),
        int(deepest),
    )


class Entry(typing.NamedTuple):
    """What a generated entry (`fib(n, **options)`) hands `call`: its program
    and the tables that check its arguments and explain its errors."""

    name: str  # the user's function, for messages
    params: tuple  # the argument leaves' names: ("n",), ("point[0]", "point[1]")
    # per leaf: (dtype name, per-example shape), e.g. ("int64", ()); a size
    # that is a symbol is its name, bound by the call: ("float64", ("n",))
    types: tuple
    program: typing.Callable  # leaves (+ limits) -> results, errors, pc, counters
    block_lines: tuple  # per block: "in fib at examples/fib.py:10: if n <= 1:"
    # bytes one example stacks per level of recursion; a function of the
    # sizes (`size_n=...`) when the stacks hold vectors of symbolic size
    stack_bytes: typing.Union[int, typing.Callable] = 0
    index_lines: tuple = ()  # per checked subscript: its source line, if any
    stackless: bool = False  # a stackless program (the host's recursion is the stack)


def call(
    backend,
    entry,
    values,
    max_stack_depth=15,
    xla=False,
    profile=False,
    max_iterations=None,
    max_stack_bytes=DEFAULT_MAX_STACK_BYTES,
    parallel_iterations=10,
    safety_checks=True,
    runner=None,
    trace_after=None,
):
    """Runs a generated program on a batch: (result leaves, Profile or None).

    What every generated entry does, kept here so the module holds only its
    program: the argument leaves (`values`, one per `entry.params`) become
    [batch, *event] arrays of their dtypes, size-1 batches broadcast; the
    stacks are refused if larger than `max_stack_bytes`; the program runs
    (traced once per signature, under XLA if `xla`); an error raised inside
    a block gets a note naming the user's line; examples that stopped early
    (stack overflow, index out of range, `max_iterations`) raise, unless
    `safety_checks=False`.  `backend` is the numpy_backend or
    tensorflow_backend module, whose helpers do the array work.

    `runner` (an `autobatch_runtime.distribute.Runner`, given by
    `shard_call`) runs the program in pieces, over a strategy's replicas or
    in chunks, and returns the outputs the program would have returned for
    the whole batch; the checks and the profile above then read them as
    one call's.  The generated module never names it: it reaches here among
    the entry's `**options`.


    `trace_after` (TensorFlow, eager calls): how many loop iterations a
    program not traced yet runs op by op before it is traced (None: the
    backend's default; 0: trace at once); see tensorflow_compiled.compiled.
    """
    leaves = [
        backend.to_leaf(entry.name, name, value, dtype, shape)
        for name, value, (dtype, shape) in zip(entry.params, values, entry.types)
    ]
    leaves = backend.broadcast_batch(entry.name, entry.params, leaves)
    sizes = bind_sizes(entry, leaves)
    if entry.stackless:
        if runner is not None:
            raise ValueError(
                f"{entry.name}: strategy= and max_batch= need the stack-based program "
                "(drop stackless=True)"
            )
        if profile:
            raise ValueError(f"{entry.name}: profile=True needs the stack-based program")
        if max_iterations is not None:
            raise ValueError(f"{entry.name}: max_iterations needs the stack-based program")
        try:
            return backend.run_stackless(entry.program, leaves, xla), None
        except Exception as error:
            note_source_line(error, entry.block_lines, "_block_")
            raise
    # A runner allocates one piece's stacks at a time: check its largest.
    largest = leaves if runner is None else runner.largest_piece(leaves)
    level_bytes = entry.stack_bytes
    if callable(level_bytes):  # 0: a size unknown while tracing a graph (checked when it runs)
        known = None not in sizes.values()
        level_bytes = level_bytes(**{SIZE_PREFIX + s: v for s, v in sizes.items()}) if known else 0
    check_stack_bytes(entry.name, largest, max_stack_depth, level_bytes, max_stack_bytes)
    try:
        program = backend.compiled(
            entry.program,
            xla,
            profile,
            leaves,
            max_stack_depth,
            max_iterations,
            parallel_iterations,
            trace_after if runner is None else 0,  # a runner's pieces run traced
        )
        if runner is None:
            result, errors, pc, counters = program(*leaves)
        else:  # every piece's outputs, concatenated in the caller's order
            result, errors, pc, counters = runner(program, leaves)
    except Exception as error:
        # Block functions are named like their program: fib_program, fib_block_3.
        prefix = entry.program.__name__.rsplit("program", 1)[0] + "block_"
        note_source_line(error, entry.block_lines, prefix)
        raise
    result = backend.static_batch(leaves, result)
    if safety_checks:
        # What errors[k] index: overflow_at a block, index_error_at a subscript.
        lines = (entry.block_lines,) + ((entry.index_lines,) if entry.index_lines else ())
        result = backend.checked(
            entry.name, result, errors, pc, lines, max_stack_depth, max_iterations
        )
    if profile:
        return result, make_profile(counters, entry.block_lines, errors[0].shape[0])
    return result, None


def with_profile(result, profile):
    """An entry's return value: the result, or (result, Profile) if profiled."""
    return result if profile is None else (result, profile)


# The helpers of builtins_numpy.py and builtins_tensorflow.py, which each
# backend re-exports (`rt.py_min`): Python's builtins, per example.
from autobatch_runtime.ragged import RAGGED_HELPERS  # noqa: E402

PYTHON_HELPERS = (
    "py_all",
    "py_any",
    "py_bit_length",
    "py_bool",
    "py_comb",
    "py_bound",
    "py_contains",
    "py_contains_constant",
    "py_decimal_length",
    "py_divisor",
    "py_factorial",
    "py_float",
    "py_int",
    "py_int_power",
    "py_isclose",
    "py_list_count",
    "py_list_equal",
    "py_list_index",
    "py_list_join",
    "py_lshift",
    "py_math",
    "py_max",
    "py_max_of",
    "py_min",
    "py_min_of",
    "py_none",
    "py_not",
    "py_nonempty",
    "py_not_none",
    "py_perm",
    "py_popcount",
    "py_power",
    "py_powmod",
    "py_range_step",
    "py_array_method",
    "py_join",
    "py_matmul",
    "py_round",
    "py_round_digits",
    "py_rshift",
    "py_shift_count",
    "py_some",
    "py_sorted",
    "py_sorted_elements",
    "py_sum",
    "py_times_flag",
    "python_error",
) + RAGGED_HELPERS  # autobatch_runtime/ragged.py: vectors of per-example length


def optional_argument(value, dtype):
    """An entry's argument for a parameter that is None in some examples
    (`def search(v, x, right=None)`, called recursively with numbers): the
    caller passes None, numbers, or an `Optional`; the program takes an
    `Optional(present, value)` whose leaves then go through `to_leaf`.
    None is a batch of one, broadcast."""
    from autobatch_runtime.optional import Optional

    if isinstance(value, Optional):
        return value
    if value is None:
        return Optional(np.zeros([1], bool), np.zeros([1], dtype))
    return Optional(np.ones(np.shape(value)[:1] or (1,), bool), value)


def python_numbers(function, name, value, dtype):
    """A leaf given as Python numbers (a number, a list or tuple, nested) as
    an ndarray of the program's `dtype`; any other value as it is.

    Python gives lists of ints and floats, which NumPy reads as int64 and
    float64 and TensorFlow as int32 and float32: neither need be the
    program's dtype.  The conversion is the one Python's own arithmetic
    would accept without loss: an int must fit the integer dtype (and be a
    whole number), a float never becomes an int, and a float dtype takes
    ints it holds exactly and floats (rounded to its precision, as any
    float32 program rounds).  Anything else is a TypeError naming the argument.
    """
    python = isinstance(value, (bool, int, float, complex)) or (
        isinstance(value, (list, tuple)) and not hasattr(value, "_fields")
    )
    if not python:
        return value
    array = np.asarray(value)
    target = np.dtype(dtype)
    if array.dtype == object or array.dtype == target:
        return array
    kinds = {"b": "b", "i": "biu", "u": "biu", "f": "biuf", "c": "biufc"}
    fits = array.dtype.kind in kinds.get(target.kind, "")
    if fits and target.kind in "iu" and array.size:
        info = np.iinfo(target)
        fits = bool(info.min <= array.min() and array.max() <= info.max)
    converted = array.astype(target) if fits else None
    if fits and array.dtype.kind in "iu" and target.kind in "fc" and array.size:
        # An int a float cannot hold exactly (2**53 + 1) would compute
        # otherwise than Python's exact int: compared as Python numbers.
        fits = bool(np.all(converted.astype(object) == array.astype(object)))
    if not fits:
        raise TypeError(
            f"{function}: argument {name} holds Python {array.dtype.name} values that "
            f"{target.name}, the dtype of this program, cannot hold exactly; pass "
            f"values that fit, or call it through its Context for a {array.dtype.name} program"
        )
    return converted


def join_batch(parts, kinds, rank, size):
    """The batch size of py_list_join's parts (None if none differs per
    example): a batched part's first axis, or a per-example item's."""
    for part, kind in zip(parts, kinds):
        if kind == "batched":
            return size(part)
        if kind == "items":
            for x in part:
                if rank(x) == 1:
                    return size(x)
    return None


def unpack_by(value, spec, rows):
    """`unpack_rows` of every backend: `spec` an int n (the value's n rows,
    `rows(value, n)`), a tuple (each element's spec), None (as it is)."""
    if spec is None:
        return value
    if isinstance(spec, tuple):
        return tuple(unpack_by(v, s, rows) for v, s in zip(value, spec))
    return rows(value, spec)


def list_join(xp):
    """`py_list_join` for an array module with NumPy's API (NumPy, jax.numpy):
    `a + b` of two lists per example.  Each part is "items" (a list
    display: per-example numbers [batch] or constants), "batched" (a list
    kept as an array, [batch, n]) or "constant" ([n], the same for every
    example) -> [batch, n_a + n_b] (or [n] if no part differs per
    example), of the dtype holding every part's numbers."""

    def py_list_join(parts, kinds):
        batch = join_batch(parts, kinds, xp.ndim, lambda x: xp.shape(x)[0])
        arrays = []
        for part, kind in zip(parts, kinds):
            if kind == "items":
                if part:
                    lead = () if batch is None else (batch,)
                    arrays.append(xp.stack([xp.broadcast_to(xp.asarray(x), lead) for x in part], axis=-1))
            elif kind == "batched" or batch is None:
                arrays.append(xp.asarray(part))
            else:
                constant = xp.asarray(part)
                arrays.append(xp.broadcast_to(constant, (batch,) + constant.shape))
        dtype = xp.result_type(*arrays)
        return xp.concatenate([a.astype(dtype) for a in arrays], axis=0 if batch is None else 1)

    return py_list_join
