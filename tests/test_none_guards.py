"""A value ruled out as None is read as present (transpiler/frontend/narrowing.py).

`r = find(...); if r is None: return -1; return r` never returns None in
Python, so its batched version returns plain arrays, not an `Optional`;
where a value may still be None the result stays an `Optional`, with None
exactly where Python has it.  Every backend, several batch sizes.
"""

import numpy as np
import pytest

from autobatch_runtime.optional import Optional
from examples.corpus import example
from tests import none_guards as G
from tests.oracle import MODES, oracle_params

# tests/none_guards.py's modules are generated into a temporary folder and
# only run, never read: without black (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")


def vectors_and_targets(rng, n, targets=1):
    v = rng.integers(0, 6, (n, 5))
    return (v,) + tuple(rng.integers(0, 8, n) for _ in range(targets))


CASES = {
    "index_or_minus_one": lambda rng, n: vectors_and_targets(rng, n),
    "doubled_if_found": lambda rng, n: vectors_and_targets(rng, n),
    "first_of_two": lambda rng, n: vectors_and_targets(rng, n, 2),
    "assigned_again": lambda rng, n: vectors_and_targets(rng, n),
    "guard_in_and": lambda rng, n: vectors_and_targets(rng, n),
    "guard_in_or": lambda rng, n: vectors_and_targets(rng, n),
    "guard_in_conditional": lambda rng, n: vectors_and_targets(rng, n),
    "guard_negated": lambda rng, n: vectors_and_targets(rng, n),
    "flag_guard": lambda rng, n: vectors_and_targets(rng, n),
    "best_so_far": lambda rng, n: vectors_and_targets(rng, n),
    "chain_sum": lambda rng, n: linked_lists(rng, n),
}
NEVER_NONE = {
    "index_or_minus_one",
    "doubled_if_found",
    "first_of_two",
    "guard_in_and",
    "guard_in_or",
    "guard_in_conditional",
    "guard_negated",
    "flag_guard",
    "chain_sum",
}


def linked_lists(rng, n):
    """Per example, links[i] is the next node after i, or -1 at the end
    (a random permutation cut at a random length: no cycles)."""
    links = np.full((n, 6), -1)
    for k in range(n):
        order = rng.permutation(6)[: rng.integers(1, 7)]
        links[k, order[:-1]] = order[1:]
    return links, rng.integers(0, 6, n)


@pytest.mark.parametrize("name, batch, mode", oracle_params(CASES))
def test_guarded_values_are_read_as_present(name, batch, mode):
    # an Optional where a value may still be None: None exactly where Python has it
    rng = np.random.default_rng(batch * 31 + len(name))
    inputs = CASES[name](rng, batch)
    plain = G.ctx.plain(name)
    want = [plain(*example(inputs, i)) for i in range(batch)]
    result = getattr(G, name)(*inputs, **MODES[mode])
    if name in NEVER_NONE:
        assert not isinstance(result, Optional)  # Python's function never returns None
        assert np.asarray(result).tolist() == want
    else:
        assert isinstance(result, Optional)
        assert result.tolist() == want


UNGUARDED = ["unguarded_arithmetic", "unguarded_order", "unguarded_builtin", "unguarded_after_wrong_guard"]


@pytest.mark.parametrize("name, batch, mode", oracle_params(UNGUARDED))
def test_none_used_as_a_number_raises_type_error(name, batch, mode):
    # Python raises TypeError exactly in the examples where the value is None
    # and no guard kept it from being used; the batched call names them
    rng = np.random.default_rng(batch * 7 + len(name))
    v, x = vectors_and_targets(rng, batch)
    x[0] = 99  # at least one example where find gives None
    plain = G.ctx.plain(name)
    raising = []
    for i in range(batch):
        try:
            plain(*example((v, x), i))
        except TypeError:
            raising.append(i)
    assert raising
    with pytest.raises(TypeError) as caught:
        getattr(G, name)(v, x, **MODES[mode])
    message = str(caught.value)
    assert f"example(s) {raising[:10]} raised TypeError" in message
    assert "none_guards.py" in message and "None" in message


@pytest.mark.parametrize("mode", list(MODES))
def test_none_used_as_a_number_where_no_example_is_none(mode):
    # the same functions, where every example finds its target: no error
    v = np.array([[1, 2, 3, 4, 5]] * 4)
    x = np.array([1, 2, 3, 5])
    for name in UNGUARDED:
        plain = G.ctx.plain(name)
        want = [plain(*example((v, x), i)) for i in range(4)]
        assert np.asarray(getattr(G, name)(v, x, **MODES[mode])).tolist() == want
