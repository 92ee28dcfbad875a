# ruff: noqa: F821, F841
"""Templates for the per-program parts of a generated module (both backends).

(The helpers these templates call are defined in the generated module, from
runtime_*.py, and `batch` is read by the expressions filled in for INITIAL.)

Each function here is a template (see transpiler/emit/template.py): its
UPPER_CASE parameters are placeholders, its body is what gets generated.
The helpers they call (`run`, `select`, `compiled`, ...) are the runtime
helpers of runtime_tf.py / runtime_np.py, copied into the same module.
"""


def block_function(BLOCK, BODY, UPDATES, WRITES):
    def BLOCK(state, stacks):
        BODY
        return state._replace(**UPDATES), stack_writes(stacks, **WRITES)


def program_function(
    PROGRAM,
    LEAVES,
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
    def PROGRAM(LEAVES, max_stack_depth, max_iterations, xla, profile, parallel_iterations=10):
        """Arguments to results for a whole batch: what tf.function traces."""
        batch = batch_size(*LEAVES)
        state = STATE_TYPE(**INITIAL)
        stacks = STACKS_TYPE(**STACKS)
        state, stacks, counters = run(
            state,
            stacks,
            BLOCKS,
            xla,
            profile,
            LOOPING,
            max_iterations,
            WRITES,
            parallel_iterations,
        )
        return RESULT, ERRORS, state.pc, counters


def entry_function(
    ENTRY,
    PARAMS,
    DOC,
    NAME,
    LEAF_NAMES,
    LEAF_VALUES,
    LEAF_TYPES,
    PROGRAM,
    LINES,
    BLOCK_PREFIX,
    STACK_BYTES,
    ERROR_LINES,
    OUT,
):
    def ENTRY(
        PARAMS,
        max_stack_depth=15,
        xla=False,
        profile=False,
        max_iterations=None,
        max_stack_bytes=DEFAULT_MAX_STACK_BYTES,
        parallel_iterations=10,
        safety_checks=True,
        runner=None,
    ):
        DOC
        leaves = [
            to_leaf(NAME, name, value, dtype, shape)
            for name, value, (dtype, shape) in zip(LEAF_NAMES, LEAF_VALUES, LEAF_TYPES)
        ]
        leaves = broadcast_batch(NAME, LEAF_NAMES, leaves)
        # A runner (autobatch_runtime.distribute) runs the program in pieces:
        # the stacks it allocates at once are those of its largest piece.
        largest = leaves if runner is None else runner.largest_piece(leaves)
        check_stack_bytes(NAME, largest, max_stack_depth, STACK_BYTES, max_stack_bytes)
        try:
            program = compiled(
                PROGRAM, xla, profile, leaves, max_stack_depth, max_iterations, parallel_iterations
            )
            if runner is None:
                result, errors, pc, counters = program(*leaves)
            else:  # the outputs of every piece, in the caller's order
                result, errors, pc, counters = runner(program, leaves)
        except Exception as error:
            note_source_line(error, LINES, BLOCK_PREFIX)
            raise
        result = static_batch(leaves, result)
        if safety_checks:
            result = checked(NAME, result, errors, pc, ERROR_LINES, max_stack_depth, max_iterations)
        if profile:
            return OUT, make_profile(counters, LINES, errors[0].shape[0])
        return OUT


def stackless_program_function(
    PROGRAM,
    LEAVES,
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
        check_stackless(NAME, RECURSIVE)
        batch = batch_size(*LEAVES)
        state = STATE_TYPE(**INITIAL)
        stacks = STACKS_TYPE(**STACKS)
        state, stacks, _ = run(state, stacks, BLOCKS, False, False)
        check_errors(NAME, ERRORS, ERROR_LINES, None)
        return RESULT


def stackless_entry_function(
    ENTRY, PARAMS, DOC, NAME, LEAF_NAMES, LEAF_VALUES, LEAF_TYPES, PROGRAM, LINES, OUT
):
    def ENTRY(
        PARAMS,
        max_stack_depth=15,
        xla=False,
        profile=False,
        max_iterations=None,
        max_stack_bytes=DEFAULT_MAX_STACK_BYTES,
        parallel_iterations=10,
        safety_checks=True,
    ):
        DOC
        if profile:
            raise ValueError(NAME + ": profile=True needs the stack-based program")
        if max_iterations is not None:
            raise ValueError(NAME + ": max_iterations needs the stack-based program")
        leaves = [
            to_leaf(NAME, name, value, dtype, shape)
            for name, value, (dtype, shape) in zip(LEAF_NAMES, LEAF_VALUES, LEAF_TYPES)
        ]
        leaves = broadcast_batch(NAME, LEAF_NAMES, leaves)
        try:
            result = run_stackless(PROGRAM, leaves, xla)
        except Exception as error:
            note_source_line(error, LINES, "_block_")
            raise
        return OUT
