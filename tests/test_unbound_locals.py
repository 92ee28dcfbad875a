"""A local read before any assignment on an example's path raises
UnboundLocalError for that example, as in Python, naming the line; the
examples that assigned it run on (tests/unbound_locals.py)."""

import re

import numpy as np
import pytest

from tests import unbound_locals as P
from tests.oracle import MODES

V = np.array([[5, 6, 1], [7, 8, 2], [1, 9, 9], [4, 4, 3]])


def plain(name, *columns):
    function = P.ctx.plain(name)
    out = []
    for k in range(len(columns[0])):
        try:
            out.append(
                function(*[np.array(c[k]) if np.ndim(c[k]) else c[k].item() for c in columns])
            )
        except UnboundLocalError:
            out.append(UnboundLocalError)
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "name, second, unbound",
    [("assigned_in_one_arm", [9, 1, 4, 0], [1, 3]), ("loop_variable_after", [2, 0, 3, -1], [1, 3])],
)
def test_an_unassigned_read_raises_for_those_examples(name, second, unbound, mode):
    second = np.array(second)
    want = plain(name, V, second)
    assert [k for k, w in enumerate(want) if w is UnboundLocalError] == unbound
    with pytest.raises(
        UnboundLocalError,
        match=re.escape(f"example(s) {unbound}") + r".*unbound_locals\.py:\d+: return",
    ):
        getattr(P, name)(V, second, **MODES[mode])
    keep = [k for k in range(len(V)) if k not in unbound]
    got = np.asarray(getattr(P, name)(V[keep], second[keep], **MODES[mode])).tolist()
    assert got == [want[k] for k in keep]


@pytest.mark.parametrize("mode", MODES)
def test_reads_that_every_path_or_every_trip_assigns_run(mode):
    x = np.array([6, 2, 5, 3])
    assert np.asarray(P.last_match(V, x, **MODES[mode])).tolist() == plain("last_match", V, x)
    got = np.asarray(P.first_pass_sets_previous(V, **MODES[mode])).tolist()
    assert got == plain("first_pass_sets_previous", V)


def test_only_a_local_that_may_be_unassigned_gets_a_flag():
    P.last_match(V, np.array([1, 1, 1, 1]), backend="numpy")
    P.assigned_in_one_arm(V, np.array([9, 9, 9, 9]), backend="numpy")
    text = open(P.ctx._generated_dir(None) + "/tests/unbound_locals_np.py").read()
    assert "y_assigned" in text and "found_assigned" not in text
