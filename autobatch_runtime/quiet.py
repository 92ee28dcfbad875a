"""TensorFlow imported without its start-up log lines.

TensorFlow's C++ libraries write lines to file descriptor 2 while they load
(oneDNN, CPU features, absl's "before InitializeLog" warning), whatever
TF_CPP_MIN_LOG_LEVEL says.  A user's script that calls a batched function
should print what the script prints, so the runtime imports TensorFlow
through here: stderr is captured for the import, and every line that is not
start-up noise is written through.  Standard library only.
"""

import os
import re
import sys
import tempfile

# The lines TensorFlow's loaders write before logging is configured.
_TF_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called"
    r"|[IWEF]\d{4} [\d:.]+\s+\d+ \S+:\d+\] "
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\.$)"
)


def import_tensorflow():
    """`import tensorflow`, with its start-up noise filtered out of stderr.

    Idempotent; a plain import when TensorFlow is already imported, or when
    stderr has no file descriptor to capture (an embedding host).  Returns
    the module; ImportError propagates as from a plain import.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        import tensorflow

        return tensorflow
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import tensorflow
        finally:
            try:
                sys.stderr.flush()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            captured.seek(0)
            for line in captured.read().decode(errors="replace").splitlines(keepends=True):
                if not _TF_NOISE.match(line):
                    sys.stderr.write(line)
    return tensorflow
