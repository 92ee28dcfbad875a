"""Templates: placeholders are checked, and expansion produces valid Python."""

import ast

import pytest

from templates import program as program_templates
from transpiler.emit.template import comment, expand, render_comments


def test_missing_and_unexpected_placeholders_are_errors():
    with pytest.raises(TypeError, match="missing.*BODY"):
        expand(program_templates.block_function, BLOCK="b", UPDATES=[], WRITES=[])
    with pytest.raises(TypeError, match="unexpected.*EXTRA"):
        expand(program_templates.block_function, BLOCK="b", BODY=[], UPDATES=[], WRITES=[], EXTRA=1)


def test_statement_keyword_and_name_placeholders():
    body = [ast.parse("x = state.pc + 1").body[0], comment("a note")]
    updates = [ast.keyword("pc", ast.Name("x", ast.Load()))]
    stmts = expand(
        program_templates.block_function, BLOCK="my_block", BODY=body, UPDATES=updates, WRITES=[]
    )
    text = render_comments(ast.unparse(ast.fix_missing_locations(ast.Module(stmts, []))))
    assert "def my_block(state, stacks):" in text
    assert "    x = state.pc + 1\n    # a note\n" in text
    assert "return (state._replace(pc=x), rt.stack_writes(stacks))" in text
    compile(text, "<generated>", "exec")


def test_templates_are_not_modified_by_expansion():
    first = expand(program_templates.block_function, BLOCK="a", BODY=[], UPDATES=[], WRITES=[])
    second = expand(program_templates.block_function, BLOCK="b", BODY=[], UPDATES=[], WRITES=[])
    assert ast.unparse(first[0]).startswith("def a(")
    assert ast.unparse(second[0]).startswith("def b(")


def test_runtime_stack_helpers_agree_between_backends():
    import numpy as np
    import tensorflow as tf

    from autobatch_runtime import numpy_backend as runtime_np
    from autobatch_runtime import tensorflow_backend as runtime_tf

    stack = np.zeros((3, 4), np.int64)
    sp = np.array([0, 2, 3, 1], np.int32)
    active = np.array([True, True, True, False])
    value = np.array([5, 6, 7, 8])

    sp_np, write_np, over_np = runtime_np.push(stack, sp, value, active)
    stack_np = stack.copy()
    runtime_np.apply_write(stack_np, write_np)
    t = tf.constant
    sp_tf, write_tf, over_tf = runtime_tf.push(t(stack), t(sp), t(value), t(active))
    stack_tf = runtime_tf.apply_write(t(stack), write_tf).numpy()

    assert np.array_equal(stack_np, stack_tf)
    assert np.array_equal(sp_np, sp_tf.numpy())
    assert over_np.tolist() == over_tf.numpy().tolist() == [False, False, True, False]
    assert stack_np[:, 0].tolist() == [5, 0, 0] and stack_np[2, 1] == 6
    assert stack_np[:, 3].tolist() == [0, 0, 0]  # inactive: untouched

    top_np, sp2 = runtime_np.pop(stack_np, sp_np, active)
    top_tf, _ = runtime_tf.pop(t(stack_tf), sp_tf, t(active))
    assert top_np[:2].tolist() == top_tf.numpy()[:2].tolist() == [5, 6]
    assert sp2.tolist() == [0, 2, 2, 1]


def test_xla_stack_writes_drop_the_idle_examples_rows():
    """Under XLA a write sends idle examples' rows past the last level,
    where the scatter drops them; the result must match NumPy's write, for
    stacks of scalars and of vectors, with full stacks in the batch."""
    import numpy as np
    import tensorflow as tf

    from autobatch_runtime import numpy_backend as runtime_np
    from autobatch_runtime import tensorflow_backend as runtime_tf

    rng = np.random.default_rng(3)
    sp = np.array([0, 2, 3, 1, 2], np.int32)  # depth 3: example 2's stack is full
    active = np.array([True, True, True, False, True])
    for event in ((), (4,)):
        stack = rng.integers(-9, 9, (3, 5) + event)
        value = rng.integers(10, 99, (5,) + event)
        _, write_np, _ = runtime_np.push(stack, sp, value, active)
        expected = stack.copy()
        runtime_np.apply_write(expected, write_np)

        @tf.function(jit_compile=True)
        def written(stack, sp, value, active):
            _, write, _ = runtime_tf.push(stack, sp, value, active)
            return runtime_tf.apply_write(stack, write, xla=True)

        got = written(tf.constant(stack), tf.constant(sp), tf.constant(value), tf.constant(active))
        assert np.array_equal(got.numpy(), expected)
        assert not np.array_equal(expected, stack)  # something was written
        assert np.array_equal(expected[:, 3], stack[:, 3])  # inactive: untouched


def test_select_fields_save_all_and_block_writes_mean_the_same_on_every_backend():
    """rt.select_fields is one rt.select per field; rt.save_all one rt.save
    per stack, its overflow their `|`; WRITES strings split into names."""
    import typing

    import numpy as np

    from autobatch_runtime import common
    from autobatch_runtime import jax_backend as runtime_jax
    from autobatch_runtime import numpy_backend as runtime_np
    from autobatch_runtime import tensorflow_backend as runtime_tf

    class State(typing.NamedTuple):
        a: object
        b: object
        c: object

    class Stacks(typing.NamedTuple):
        s: object
        v: object

    active = np.array([True, False, True])
    frame = np.array([0, 1, 2], np.int32)  # depth 2: example 2's stacks are full
    state = State(np.zeros(3), np.zeros((3, 2)), np.arange(3))
    stacks = Stacks(np.zeros((2, 3)), np.zeros((2, 3, 2)))
    for rt in (runtime_np, runtime_tf, runtime_jax):
        new = rt.select_fields(active, state, a=np.ones(3), b=np.full((3, 2), 2.0))
        assert np.array_equal(np.asarray(new.a), [1, 0, 1])
        assert np.array_equal(np.asarray(new.b), [[2, 2], [0, 0], [2, 2]])
        assert new.c is state.c
        writes, overflow = rt.save_all(stacks, frame, active, s=np.ones(3), v=np.ones((3, 2)))
        assert list(writes) == ["s", "v"]
        assert np.array_equal(np.asarray(overflow), [False, False, True])
        alone, full = rt.save(stacks.v, frame, np.ones((3, 2)), active)
        assert np.array_equal(np.asarray(writes["v"][0]), np.asarray(alone[0]))
        assert np.array_equal(np.asarray(full), np.asarray(overflow))
    assert common.block_writes(("pc a_b", "pc c | returns s", (("pc",), ()))) == (
        (("pc", "a_b"), ()),
        (("pc", "c"), ("returns", "s")),
        (("pc",), ()),
    )
