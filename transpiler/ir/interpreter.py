"""The reference interpreter: the meaning of a (not yet lowered) program.

Runs ONE example through the CFG with plain Python values and Python's own
recursion.  It is the semantic spec that the batched code must agree with;
tests compare it with the user's function and with the generated modules.
"""

from __future__ import annotations

from transpiler.ir import instructions as ir


def run(program: ir.Program, namespaces, function: str, args, max_steps=1_000_000):
    """Calls `function` of `program` on one example's `args`."""
    budget = [max_steps]
    return _call(program, namespaces, function, list(args), budget)


def _bind(env, pattern, value):
    if pattern is None:
        return
    if isinstance(pattern, str):
        env[pattern] = value
        return
    values = tuple(value)
    starred = [i for i, p in enumerate(pattern) if isinstance(p, str) and p.startswith("*")]
    if starred:
        k = starred[0]
        tail = len(pattern) - k - 1
        values = values[:k] + (list(values[k : len(values) - tail]),) + values[len(values) - tail :]
        pattern = pattern[:k] + (pattern[k][1:],) + pattern[k + 1 :]
    if len(values) != len(pattern):
        raise ValueError(f"cannot unpack {len(values)} values into {len(pattern)} names")
    for p, v in zip(pattern, values):
        _bind(env, p, v)


def _value(env, pattern):
    if isinstance(pattern, str):
        return env[pattern]
    return tuple(_value(env, p) for p in pattern)


def _call(program, namespaces, name, args, budget):
    fn = program.function(name)
    env = dict(zip(fn.params, args))
    block = fn.blocks[0]
    while True:
        budget[0] -= 1
        if budget[0] < 0:
            raise RuntimeError("reference interpreter: step budget exhausted")
        for ins in block.instructions:
            if isinstance(ins, ir.PrimOp):
                scope = {v: env[v] for v in ins.vars_in}
                _bind(env, ins.vars_out, eval(ins.expr, namespaces[name], scope))  # noqa: S307
            elif isinstance(ins, ir.Select):
                scope = {v: env[v] for v in ins.vars_in}
                chosen = ins.if_true if eval(ins.condition, namespaces[name], scope) else ins.if_false  # noqa: S307
                env[ins.vars_out] = eval(chosen, namespaces[name], scope)  # noqa: S307
            elif isinstance(ins, ir.Call):
                values = [env[v] for v in ins.vars_in]
                _bind(env, ins.vars_out, _call(program, namespaces, ins.function, values, budget))
            else:
                raise TypeError(f"not a high-level instruction: {ins!r}")
        t = block.terminator
        if isinstance(t, ir.Return):
            return None if t.value is None else _value(env, t.value)
        if isinstance(t, ir.Goto):
            block = fn.block(t.target)
        elif isinstance(t, ir.Branch):
            block = fn.block(t.true_target if env[t.condition] else t.false_target)
        else:
            raise TypeError(f"not a high-level terminator: {t!r}")
