"""Calling a batched function through its Context: batching rules and errors.

The batched functions live in modules written to a tmp folder (the compiler
reads their source with `inspect`), each with its own
`Context(generated_dir=...)` under that folder, so the repository's
generated/ is never touched.  The folder is named `generated` because the
loader adds `__init__.py` files to every parent folder up to one of that name.

Mostly the NumPy backend; three tests run TensorFlow.
"""

import importlib.util
import itertools
import os
import sys
import textwrap

import numpy as np
import pytest

import transpiler
from tests.conftest import ROOT

_counter = itertools.count()

FUNCTIONS = """
@ctx.batch
def fib(n):
    if n <= 1:
        return 1
    return fib(n - 1) + fib(n - 2)


@ctx.batch
def mix(a, b):
    return a * 10 + b
"""

FIB = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]


def write_module(folder, body=FUNCTIONS):
    """Writes a module holding `ctx` and `body` into `folder`; imports it."""
    name = f"autobatch_calls_case_{next(_counter)}"
    path = folder / f"{name}.py"
    path.write_text(
        "import numpy as np\n"
        "from transpiler import Context\n\n"
        f"ctx = Context(generated_dir={str(folder / 'generated')!r})\n\n"
        + textwrap.dedent(body)
    )
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    """One module shared by the tests that only call (compiling once per signature)."""
    module = write_module(tmp_path_factory.mktemp("calls"))
    yield module
    sys.modules.pop(module.__name__, None)


@pytest.fixture
def fresh(tmp_path):
    """A module of its own, for tests that look at what gets written."""
    module = write_module(tmp_path)
    yield module
    sys.modules.pop(module.__name__, None)


def generated_files(module):
    folder = os.path.dirname(module.__file__)
    out = []
    for parent, _, files in os.walk(os.path.join(folder, "generated")):
        out.extend(os.path.join(parent, f) for f in files if f.endswith(".py"))
    return sorted(out)


# ---- batching rules -----------------------------------------------------


def test_batch_of_examples(mod):
    result = mod.fib(np.arange(11), backend="numpy")
    assert isinstance(result, np.ndarray)
    assert result.tolist() == FIB


def test_python_scalar_is_a_batch_of_one(mod):
    result = mod.fib(7, backend="numpy")
    assert np.shape(result) == (1,)
    assert np.asarray(result).tolist() == [21]


def test_scalars_for_every_argument(mod):
    result = mod.mix(3, 4, backend="numpy")
    assert np.shape(result) == (1,)
    assert np.asarray(result).tolist() == [34]


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (np.array([1]), np.array([1, 2, 3]), [11, 12, 13]),
        (np.array([1, 2, 3]), np.array([5]), [15, 25, 35]),
        (7, np.array([1, 2, 3]), [71, 72, 73]),  # a scalar broadcasts too
        (np.array([2]), np.array([9]), [29]),  # all of size 1: batch of one
    ],
    ids=["first_is_one", "second_is_one", "scalar_and_array", "both_one"],
)
def test_batch_of_size_one_broadcasts(mod, a, b, expected):
    result = mod.mix(a, b, backend="numpy")
    assert np.asarray(result).tolist() == expected


def test_mismatched_batch_sizes_name_both_arguments(mod):
    with pytest.raises(ValueError) as info:
        mod.mix(np.array([1, 2, 3]), np.array([1, 2, 3, 4]), backend="numpy")
    message = str(info.value)
    assert message.startswith("mix:")
    assert "a: 3" in message and "b: 4" in message


def test_empty_batch_returns_an_empty_result(mod):
    result = mod.fib(np.array([], dtype=np.int64), backend="numpy")
    assert isinstance(result, np.ndarray)
    assert result.shape == (0,)
    assert result.dtype == np.int64


def test_empty_batch_with_a_broadcast_argument(mod):
    result = mod.mix(np.array([], dtype=np.int64), np.array([5]), backend="numpy")
    assert np.asarray(result).shape == (0,)


def test_backend_object_and_name_give_the_same_result(mod):
    by_name = mod.fib(np.arange(11), backend="numpy")
    by_object = mod.fib(np.arange(11), backend=transpiler.NumpyBackend())
    assert type(by_object) is type(by_name)
    assert by_object.dtype == by_name.dtype
    assert by_object.tolist() == by_name.tolist() == FIB


# ---- dry runs -----------------------------------------------------------


def test_dry_run_runs_the_plain_function(fresh):
    result = fresh.fib(10, dry_run=True)
    assert result == 89
    assert type(result) is int  # plain Python in, plain Python out
    assert fresh.mix(3, 4, dry_run=True) == 34
    assert generated_files(fresh) == []  # nothing compiled


# ---- keyword and Context errors ------------------------------------------


def test_unknown_keyword_is_a_type_error_naming_it(mod):
    with pytest.raises(TypeError, match="unexpected keyword argument.*'bogus_option'"):
        mod.fib(np.array([1, 2]), backend="numpy", bogus_option=True)


def test_wrong_number_of_arguments_is_a_type_error(mod):
    with pytest.raises(TypeError, match=r"mix\(\).*missing a required argument: 'b'"):
        mod.mix(np.array([1, 2]), backend="numpy")
    with pytest.raises(TypeError, match=r"mix\(\) takes 2 positional argument\(s\) but 3"):
        mod.mix(np.array([1, 2]), np.array([1, 2]), np.array([1, 2]), backend="numpy")


def test_two_functions_with_one_name_in_one_context(fresh):
    def fib(n):  # same name as the module's batched `fib`
        return n

    with pytest.raises(ValueError, match="'fib' is already batched in this Context"):
        fresh.ctx.batch(fib)
    # The first one is still the one batched.
    assert fresh.ctx.function_names() == ["fib", "mix"]
    assert fresh.fib(10, dry_run=True) == 89
    # Names are unique per Context, not globally.
    other = transpiler.Context(generated_dir=fresh.ctx.generated_dir)
    assert other.batch(fib).name == "fib"


def test_program_of_an_unknown_name(mod):
    with pytest.raises(ValueError, match="'nope' is not a batched function of this Context"):
        mod.ctx.program("nope")


def test_xla_needs_tensorflow(mod):
    with pytest.raises(ValueError, match="xla=True needs the TensorFlow backend"):
        mod.fib(np.array([1, 2]), backend="numpy", xla=True)


@pytest.mark.parametrize("depth", [0, -3])
def test_max_stack_depth_must_be_positive(mod, depth):
    with pytest.raises(ValueError, match=f"max_stack_depth must be at least 1, got {depth}"):
        mod.fib(np.array([1, 2]), backend="numpy", max_stack_depth=depth)


def test_unknown_backend(mod):
    with pytest.raises(ValueError, match="unknown backend 'torch'.*'tensorflow', 'numpy', 'jax'"):
        mod.fib(np.array([1, 2]), backend="torch")


def test_stack_overflow_names_function_and_depth(mod):
    with pytest.raises(transpiler.StackOverflowError) as info:
        mod.fib(np.array([20]), backend="numpy", max_stack_depth=5)
    assert isinstance(info.value, RuntimeError)
    message = str(info.value)
    assert message.startswith("fib:")
    assert "max_stack_depth=5" in message
    # The control: deep enough, the same call succeeds.
    assert mod.fib(np.array([20]), backend="numpy", max_stack_depth=19).tolist() == [10946]


def test_stack_overflow_names_the_overflowing_examples(mod):
    with pytest.raises(transpiler.StackOverflowError, match=r"example\(s\) \[1, 3\]"):
        mod.fib(np.array([2, 20, 3, 21]), backend="numpy", max_stack_depth=5)


# ---- where generated code goes -------------------------------------------


def test_generated_module_goes_to_the_context_dir(fresh):
    assert generated_files(fresh) == []
    fresh.fib(np.array([3]), backend="numpy")
    name = fresh.__name__
    folder = os.path.dirname(fresh.__file__)
    assert os.path.join(folder, "generated", f"{name}_np.py") in generated_files(fresh)
    assert not os.path.exists(os.path.join(ROOT, "generated", f"{name}_np.py"))


# ---- TensorFlow (three tests: it is slower to start) ----------------------


def test_tensorflow_scalar_and_size_one_broadcast(mod):
    assert np.asarray(mod.fib(7, backend="tensorflow")).tolist() == [21]
    result = mod.mix(np.array([1]), np.array([1, 2, 3]), backend="tensorflow")
    assert np.asarray(result).tolist() == [11, 12, 13]


def test_tensorflow_mismatched_batch_sizes(mod):
    with pytest.raises(ValueError) as info:
        mod.mix(np.array([1, 2, 3]), np.array([1, 2, 3, 4]), backend="tensorflow")
    message = str(info.value)
    assert "a: 3" in message and "b: 4" in message


def test_tensorflow_empty_batch(mod):
    result = mod.fib(np.array([], dtype=np.int64), backend="tensorflow")
    assert np.asarray(result).shape == (0,)
