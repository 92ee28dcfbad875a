"""transpiler/closures.py: what compiling may do to the objects functions close over."""

import numpy as np

from transpiler import closures


class Model:
    def __init__(self):
        self.cache = np.zeros(3)
        self.calls = 0


def make(model):
    def target(x):
        return model

    return target


def test_left_as_found_restores_attributes_even_when_they_hold_arrays():
    model = Model()
    with closures.left_as_found([make(model)]):
        model.cache = np.ones(3)  # an array replaced: compared by identity, not ==
        model.calls += 1
        model.added = True
    assert model.cache.tolist() == [0.0, 0.0, 0.0]
    assert model.calls == 0 and not hasattr(model, "added")


def test_left_as_found_leaves_an_untouched_object_alone():
    model = Model()
    cache = model.cache
    with closures.left_as_found([make(model)]):
        pass
    assert model.cache is cache and model.calls == 0
