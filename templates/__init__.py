"""Code templates of the emitter: real Python, one file per construct and backend."""
