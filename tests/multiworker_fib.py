"""One worker of the two-process MultiWorkerMirroredStrategy test.

tests/test_distribute.py starts two of these on 127.0.0.1, each with its
own TF_CONFIG (the same cluster, its own task index).  Each imports only
the checked-in generated module and the runtime, as a deployment without
the compiler would, passes the whole batch (every worker does: shard_call
gives each replica its own shard by its global replica index), and prints
one JSON line: the gathered results, the profile's pieces and the message
of a stack overflow, which every worker must see naming the same caller
indices.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main():
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # TensorFlow's chatter to stderr; stdout holds the one reply
    import numpy as np
    import tensorflow as tf

    from autobatch_runtime.distribute import shard_call
    from autobatch_runtime.errors import StackOverflowError
    from generated.examples.fib_tf import fib

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    n = (np.arange(23) * 7 % 15).astype(np.int64)  # 23: uneven over 2 replicas
    out, profile = shard_call(fib, (n,), strategy=strategy, xla=True, profile=True)
    deep = np.array([3, 4, 30, 5, 6, 40, 7], np.int64)  # 2 and 5 overflow, one per replica
    try:
        shard_call(fib, (deep,), strategy=strategy, xla=True, max_stack_depth=10)
        overflow = ""
    except StackOverflowError as error:
        overflow = str(error)
    reply = dict(
        replicas=int(strategy.num_replicas_in_sync),
        n=n.tolist(),
        fib=np.asarray(out).tolist(),
        pieces=[[p.replica, p.start, p.stop, p.iterations] for p in profile.pieces],
        overflow=overflow,
        compiler_imported="transpiler.pipeline" in sys.modules,
    )
    replies.write(json.dumps(reply) + "\n")
    replies.flush()


if __name__ == "__main__":
    main()
