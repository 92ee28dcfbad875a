# ruff: noqa: F821, F841
"""Templates for the per-program parts of a generated module (both backends).

Each function here is a template (see transpiler/emit/template.py): its
UPPER_CASE parameters are placeholders, its body is what gets generated.
`rt` is the runtime the generated module imports (autobatch_runtime's
tensorflow_backend or numpy_backend), and `batch` is read by the
expressions filled in for INITIAL.  FIRST is the first of LEAVES (none if
there are none): rt.batch_size reads the batch size off it.
"""


def block_function(BLOCK, BODY, UPDATES, WRITES):
    def BLOCK(state, stacks):
        BODY
        return state._replace(**UPDATES), rt.stack_writes(stacks, **WRITES)


def block_function_long(BLOCK, BODY, UPDATES, WRITES):
    """block_function for a return that would not fit on a line."""

    def BLOCK(state, stacks):
        BODY
        state = state._replace(**UPDATES)
        return state, rt.stack_writes(stacks, **WRITES)


def program_function(
    PROGRAM,
    LEAVES,
    FIRST,
    STATE_TYPE,
    INITIAL,
    STACKS_TYPE,
    STACKS,
    BLOCKS,
    LOOPING,
    WRITES,
    RESULT,
    ERRORS,
):
    def PROGRAM(LEAVES, max_stack_depth, **limits):
        """Arguments to results for a whole batch (`limits`: rt.run's keywords)."""
        batch = rt.batch_size(*FIRST)
        state = STATE_TYPE(**INITIAL)
        stack_shape = [max_stack_depth, batch]
        stacks = STACKS_TYPE(**STACKS)
        state, stacks, counters = rt.run(state, stacks, BLOCKS, LOOPING, WRITES, **limits)
        return RESULT, ERRORS, state.pc, counters


def stackless_program_function(
    PROGRAM,
    LEAVES,
    FIRST,
    STATE_TYPE,
    INITIAL,
    STACKS_TYPE,
    STACKS,
    BLOCKS,
    RESULT,
    ERRORS,
    NAME,
    ERROR_LINES,
    RECURSIVE,
):
    def PROGRAM(LEAVES, active):
        """One call for the examples where `active`; callees run inside its blocks."""
        rt.check_stackless(NAME, RECURSIVE)
        batch = rt.batch_size(*FIRST)
        state = STATE_TYPE(**INITIAL)
        stacks = STACKS_TYPE(**STACKS)
        state, stacks, _ = rt.run(state, stacks, BLOCKS)
        rt.check_errors(NAME, ERRORS, ERROR_LINES, None)
        return RESULT


def entry_function(ENTRY, TABLE, PARAMS, DOC, LEAF_VALUES, OUT):
    def ENTRY(PARAMS, **options):
        DOC
        result, profile = rt.call(TABLE, LEAF_VALUES, **options)
        return rt.with_profile(OUT, profile)


def entry_table(TABLE, NAME, LEAF_NAMES, LEAF_TYPES, PROGRAM, LINES, MODE):
    TABLE = rt.Entry(
        name=NAME,
        params=LEAF_NAMES,
        types=LEAF_TYPES,
        program=PROGRAM,
        block_lines=LINES,
        **MODE,
    )
