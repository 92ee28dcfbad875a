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
}
NEVER_NONE = {"index_or_minus_one", "doubled_if_found", "first_of_two"}


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
