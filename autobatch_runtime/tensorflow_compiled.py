"""The TensorFlow runtime's traced programs, and the eager start before them.

A program is traced once per mode, limits and per-example shapes and kept
(`compiled`, `release_compiled`); a program not traced yet is called op by
op first (`EagerTier`, `run_op_by_op`, `eager_call`), and hands what is left
of a long call to a traced `continuation`.  In a TF1 graph a program is
traced for that graph alone (`legacy_graph`).
"""

import functools

from autobatch_runtime.quiet import import_tensorflow

tf = import_tensorflow()  # without its start-up log lines (quiet.py)

from autobatch_runtime.tensorflow_loop import busiest_first, next_block, run
from autobatch_runtime.tensorflow_ops import batch_size
from autobatch_runtime.tensorflow_stacks import apply_write


# An eager call of a program not traced yet runs op by op for up to this
# many loop iterations per block of the program before it traces the rest
# (see `compiled`).  Tracing a block costs about as much as running it op
# by op this many times (TFP's NUTS client, a 13-block program: about 5 s
# to trace and run its graph the first time, 20 ms an iteration op by op),
# so a call that turns out long pays at most about twice the better of the
# two, and a short one never pays for a trace.
TRIPS_PER_BLOCK = 16
# A program whose first calls all ended op by op within their budget is
# traced at its next call: this many calls show that it is called again and
# again, and a trace then pays for itself.
EAGER_CALLS = 2


class EagerTier:
    """One eager call's plan (see `compiled`): op by op for up to `budget`
    loop iterations (None: no limit; "auto": TRIPS_PER_BLOCK per block of
    the program), then the traced rest of the loop; `continued` records
    whether the call needed it."""

    def __init__(self, budget):
        self.budget = budget
        self.continued = False

    def run(self, state, stacks, blocks, looping, parallel_iterations):
        """The loop of `run` for this call: `run_op_by_op` (handed to the
        loop as an object, so that tensorflow_loop.py needs nothing of this
        module's)."""
        return run_op_by_op(state, stacks, blocks, looping, parallel_iterations, self)


def run_op_by_op(state, stacks, blocks, looping, parallel_iterations, tier):
    """The loop of `run` in Python, one block per iteration, each executed
    eagerly (only the chosen block's ops run, and nothing is traced); once
    `tier.budget` iterations have run with examples still pending, the state
    and stacks go to `continuation`, the rest of the loop traced as a graph.

    The blocks are the same functions the traced loop runs, chosen in the
    same order (`next_block`), so an example's result does not depend on
    where the loop changed hands.
    """
    halt = len(blocks)
    choose = functools.partial(next_block, halt=halt, busiest=busiest_first(state))
    budget = TRIPS_PER_BLOCK * halt if tier.budget == "auto" else tier.budget
    index = int(choose(state.pc))
    iterations = 0
    while index < halt:
        if budget is not None and iterations >= budget:
            tier.continued = True
            rest = continuation(state, stacks, blocks, looping, parallel_iterations)
            state, stacks = rest(state, stacks)
            return state, stacks, None
        state, writes = blocks[index](state, stacks)
        applied = {name: apply_write(getattr(stacks, name), w) for name, w in writes.items()}
        stacks = stacks._replace(**applied)
        index = int(choose(state.pc))
        iterations += 1
    return state, stacks, None


def continuation(state, stacks, blocks, looping, parallel_iterations):
    """The graph loop of `run` (TF graph mode, no XLA) as a concrete function
    of the state and stacks: where an eager call goes on once its op-by-op
    budget is spent.  Traced once per program and shapes (the batch size
    left open: axis 0 of the state, axis 1 of the stacks) and reused by the
    program's later calls, which start it at their first iteration."""

    def spec(leaf, batch_axis):
        shape = leaf.shape.as_list()
        shape[batch_axis] = None
        return tf.TensorSpec(shape, leaf.dtype)

    signature = (
        tf.nest.map_structure(lambda leaf: spec(leaf, 0), state),
        tf.nest.map_structure(lambda leaf: spec(leaf, 1), stacks),
    )
    events = tuple((s.dtype, tuple(s.shape)) for s in tf.nest.flatten(signature))
    key = ("continuation", tuple(blocks), tuple(looping), parallel_iterations, events)
    if key not in _COMPILED:

        def rest(state, stacks):
            state, stacks, _ = run(
                state, stacks, blocks, looping, parallel_iterations=parallel_iterations
            )
            return state, stacks

        function = tf.function(rest, input_signature=signature, autograph=False)
        _COMPILED[key] = function.get_concrete_function()
    return _COMPILED[key]


_COMPILED = {}
_EAGER_CALLS = {}  # program key -> [calls run op by op, whether one continued]


def release_compiled():
    """Forgets every program traced so far, so that its graph and XLA code
    can be freed.

    The cache holds a concrete function per program, mode, limits and
    per-example shapes for the life of the process; a process that builds
    many programs (a test suite, a notebook re-running its cells) grows
    without bound otherwise.  The next call of each program traces it again.
    """
    _COMPILED.clear()
    _EAGER_CALLS.clear()


def compiled(
    program,
    xla,
    profile,
    leaves,
    max_stack_depth,
    max_iterations,
    parallel_iterations=10,
    trace_after=None,
):
    """`program` traced for these leaves: a function of the leaves alone.

    Traced once per program, mode, limits and leaf signature (dtypes and
    per-example shapes; the batch size is left open, so a new batch size
    compiles under XLA but is not traced again).  The result is a concrete
    function: a call hands it the tensors and nothing else.  tf.function's
    own dispatch inspects every argument of every call, which cost about
    200 us a call here (gcd on one example under XLA: 316 against 114 us),
    more than the whole loop at small batch sizes.

    In a TF1 graph (`legacy_graph`) the program is traced for that graph
    alone, and the cache is neither read nor written: a function traced
    elsewhere may hold another graph's tensors or another seed.

    Called eagerly (graph mode, no XLA, no profile or iteration limit), a
    program not traced yet runs op by op first (`eager_call`): tracing a
    program of a few thousand ops takes seconds, which a one-off call of a
    small batch (one NUTS step of a new kernel) never earns back.
    `trace_after` is the op-by-op budget in loop iterations (None: a number
    that grows with the program, see TRIPS_PER_BLOCK); 0 traces at once;
    with `tf.config.run_functions_eagerly(True)` nothing is traced.
    """
    events = tuple((leaf.dtype, tuple(leaf.shape)[1:]) for leaf in leaves)
    key = (
        program,
        bool(xla),
        bool(profile),
        max_stack_depth,
        max_iterations,
        parallel_iterations,
        events,
    )
    legacy = legacy_graph()
    eager = not (legacy or xla or profile or max_iterations is not None) and tf.executing_eagerly()
    if eager and tf.config.functions_run_eagerly():  # the user's debugging switch: never trace
        return functools.partial(
            eager_call, program, [0, False], None, max_stack_depth, parallel_iterations
        )
    if eager and trace_after != 0 and key not in _COMPILED:
        calls = _EAGER_CALLS.setdefault(key, [0, False])
        if calls[1] or calls[0] < EAGER_CALLS:
            budget = "auto" if trace_after is None else trace_after
            return functools.partial(
                eager_call, program, calls, budget, max_stack_depth, parallel_iterations
            )
    if legacy or key not in _COMPILED:
        signature = [tf.TensorSpec([None, *event], dtype) for dtype, event in events]

        def traced(*leaves):
            return program(
                *leaves,
                max_stack_depth=max_stack_depth,
                max_iterations=max_iterations,
                xla=bool(xla),
                profile=bool(profile),
                parallel_iterations=parallel_iterations,
            )

        if legacy:
            return traced_outside_legacy_graph(traced, signature, bool(xla))
        function = tf.function(
            traced, input_signature=signature, jit_compile=bool(xla), autograph=False
        )
        _COMPILED[key] = function.get_concrete_function()
    return _COMPILED[key]


def eager_call(program, calls, budget, max_stack_depth, parallel_iterations, *leaves):
    """One eager call of `program` op by op (see `compiled`), for up to
    `budget` loop iterations, then the traced rest of the loop.

    `calls`: [calls so far, whether one of them needed the traced rest].
    Once one has, the program has shown it runs long: later calls skip the
    op-by-op start (budget 0) and run the traced loop from the first
    iteration, which is traced once for the program's shapes, so the first
    call's trace serves them all.
    """
    tier = EagerTier(0 if calls[1] and budget is not None else budget)
    result = program(
        *leaves,
        max_stack_depth=max_stack_depth,
        max_iterations=None,
        xla=False,
        profile=False,
        parallel_iterations=parallel_iterations,
        tier=tier,
    )
    calls[0] += 1
    calls[1] = calls[1] or tier.continued
    return result


def legacy_graph():
    """Whether this call builds a TF1 graph (a `tf.compat.v1` Graph run by a
    Session), directly or inside a control-flow function of one.

    There a `Tensor`'s `==` and `!=` are Python's identity tests, not
    comparisons per element: `state.pc == 0` in every generated block, and
    each `==` of the user's code, would be a Python False, no example would
    ever leave its block, and the session's loop would never end.
    """
    return not tf.compat.v1.executing_eagerly_outside_functions()


def traced_outside_legacy_graph(function, signature, xla=False):
    """`function` as a concrete function traced with eager execution as its
    outermost context, so that `==` compares per element, for a call op in
    the TF1 graph being built (a session runs it).

    Tensors of the user's graph that `function` reads (a closed-over
    target's parameters) are captured from that graph, so the result serves
    that graph only: callers do not cache it.  The user's graph-level seed
    (`tf.compat.v1.set_random_seed`) is carried into the trace, so seeded
    random primitives draw as they would in the user's graph.
    """
    try:
        from tensorflow.python.eager import context
    except ImportError:  # a TensorFlow without it: say so at once, never hang
        raise RuntimeError(
            "batched calls in TF1 graph mode (tf.compat.v1 Graph and Session) need "
            "tensorflow.python.eager.context, which this TensorFlow lacks; call the "
            "function eagerly or inside tf.function"
        ) from None
    seed = tf.compat.v1.get_default_graph().seed

    def seeded(*leaves):
        tf.compat.v1.set_random_seed(seed)
        return function(*leaves)

    with context.eager_mode():
        return tf.function(
            seeded, input_signature=signature, jit_compile=xla, autograph=False
        ).get_concrete_function()


def static_batch(leaves, result):
    """The results, with the arguments' batch size in their static shapes.

    The program is traced once for any batch size, so inside the user's
    graph its results have shape [None, ...] even where the arguments' batch
    size is known; a `tf.while_loop` of the user's (TFP's `sample_chain`)
    then refuses a state that enters as [16, 3] and comes back as [None, 3].
    """
    if tf.executing_eagerly() or not leaves or leaves[0].shape[0] is None:
        return result
    for leaf in result:
        leaf.set_shape([leaves[0].shape[0]] + leaf.shape.as_list()[1:])
    return result


def run_stackless(program, leaves, xla):
    """A stackless program on all examples: eagerly, or under XLA if asked
    (in a TF1 graph, traced as `compiled` traces, for the same reason)."""

    def whole_batch(*leaves):
        return program(*leaves, tf.ones([batch_size(*leaves)], tf.bool))

    if legacy_graph():
        signature = [tf.TensorSpec([None, *leaf.shape[1:]], leaf.dtype) for leaf in leaves]
        return traced_outside_legacy_graph(whole_batch, signature, bool(xla))(*leaves)
    if not xla:
        return whole_batch(*leaves)
    key = (program, "stackless")
    if key not in _COMPILED:
        _COMPILED[key] = tf.function(whole_batch, jit_compile=True, autograph=False)
    return _COMPILED[key](*leaves)
