"""TensorFlow Probability's autobatched NUTS, run on `transpiler`.

The predecessor's real client, `tensorflow_probability/python/experimental/
mcmc/nuts_autobatching.py` (TFP 0.25.0), is read from the installed TFP
package -- nothing is fetched, nothing is copied into this repository -- and
loaded as a module of its own with one line changed:

    from tensorflow_probability.python.experimental import auto_batching as ab
    ->  import transpiler as ab

TFP is a test-only extra: `pip install -e ".[peer]"` then
`pip install --no-deps tf-keras==2.21.0` (TFP imports tf_keras; its own
requirement would pull the full `tensorflow` package beside `tensorflow-cpu`).
"""

import importlib.util
import inspect
import os
import sys

ORIGINAL_IMPORT = "from tensorflow_probability.python.experimental import auto_batching as ab"
OUR_IMPORT = "import transpiler as ab"
MODULE_NAME = "autobatch_peer_nuts_client"


def missing_reason():
    """Why the peer test cannot run here, or None when it can."""
    try:
        import tensorflow_probability  # noqa: F401
        from tensorflow_probability.python.experimental.mcmc import nuts_autobatching  # noqa: F401
    except Exception as error:  # noqa: BLE001 - any import failure means "not installed"
        return (
            "TFP's NUTS client is not importable ({}: {}); install the test-only extra: "
            'pip install -e ".[peer]" && pip install --no-deps tf-keras==2.21.0'.format(
                type(error).__name__, error
            )
        )
    return None


def original():
    """TFP's own module, on TFP's own auto_batching."""
    from tensorflow_probability.python.experimental.mcmc import nuts_autobatching

    return nuts_autobatching


def on_transpiler(folder):
    """The client with its one import changed, written to `folder` and imported.

    Written to a file, not exec'd from a string: the compiler reads each
    batched function's source, and a generated module imports the client's
    `Point` class from the client's module (registered in sys.modules).
    """
    if MODULE_NAME in sys.modules:
        return sys.modules[MODULE_NAME]
    source = inspect.getsource(original())
    if source.count(ORIGINAL_IMPORT) != 1:
        raise AssertionError("the client's auto_batching import is not where it was")
    path = os.path.join(folder, MODULE_NAME + ".py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source.replace(ORIGINAL_IMPORT, OUR_IMPORT))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module
