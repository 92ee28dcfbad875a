"""Hand-written JAX baselines for tools/bench.py: what an expert writes
with `lax.while_loop` for one program, the ceiling the generated JAX
modules are measured against (the TensorFlow ones are in handwritten.py,
and these follow them step for step).  Imports JAX only.
"""

import functools

import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_enable_x64", True)  # int64 examples, as the generated modules


@jax.jit
def collatz_jax(x):
    """Collatz step counts: one masked update of every example per iteration."""

    def pending(carry):
        x, _ = carry
        return jnp.any(x != 1)

    def step(carry):
        x, steps = carry
        active = x != 1
        following = jnp.where(x % 2 == 0, x // 2, 3 * x + 1)
        return jnp.where(active, following, x), steps + active.astype(steps.dtype)

    return lax.while_loop(pending, step, (x, jnp.zeros_like(x)))[1]


@functools.partial(jax.jit, static_argnames="depth")
def fib_jax(n, depth=32):
    """fib with an explicit stack and an accumulator (fib(0) = fib(1) = 1).

    Each iteration pops one pending call per example: a leaf adds 1 to the
    example's total, any other call pushes its two children (one scatter of
    two levels).  One iteration per call, one stack, no continuations: an
    expert's rewrite that a compiler of general recursion cannot assume.
    """
    batch = n.shape[0]
    examples = jnp.arange(batch)
    stack = jnp.zeros([depth, batch], n.dtype).at[0].set(n)
    sp = jnp.ones([batch], jnp.int32)
    total = jnp.zeros([batch], n.dtype)

    def pending(carry):
        return jnp.any(carry[1] > 0)

    def step(carry):
        stack, sp, total = carry
        active = sp > 0
        top = stack[jnp.maximum(sp - 1, 0), examples]
        leaf = top <= 1
        total = total + (active & leaf).astype(total.dtype)
        split = active & ~leaf
        sp = jnp.where(active, sp - 1, sp)
        level = jnp.where(split, sp, depth)  # idle examples: past the end, dropped
        stack = stack.at[level, examples].set(top - 1, mode="drop")
        stack = stack.at[level + 1, examples].set(top - 2, mode="drop")
        return stack, jnp.where(split, sp + 2, sp), total

    return lax.while_loop(pending, step, (stack, sp, total))[2]
