"""Differential fuzzing at scale: thousands of random programs, batched vs Python.

    python -m tools.fuzz --programs 2000 --seed 0 --backends numpy,tf,xla

Program k is `tools.fuzzgen.generate(random.Random(seed + k))`, so any
finding reproduces from its seed; a fraction (`--vectors`, drawn apart from the
program) also has per-example arrays, subscripts, item assignment and constant
tables, and may index out of range (the batched call must then raise
IndexError exactly when an example's plain run does).  `--features` picks the
Python constructs of issue 29 the programs use (builtins, `is`, `in`, bit
operators, bools as numbers, swaps, `for` over arrays, in-place helpers:
`fuzzgen.FEATURES`), each with its probability.  Every program runs on NumPy; a sample
runs on the TF graph and on XLA too (`--sample tf=0.1,xla=0.02`), since a
trace costs a second or two and an XLA compile several.  Programs run in
worker processes (`--jobs`), each with a time limit (`--timeout`): a hang is
reported, not waited for.  Every mismatch, crash or timeout is printed and
its program saved under `--out` with the inputs and the command to rerun it;
the run ends with how many programs and inputs each backend tried.

`--minimize FILE` shrinks a saved finding instead: fewer examples, fewer
statements, smaller expressions, as long as the batched call fails the same
way (on the backend in the file's name) and the plain function still runs.

Exit status: 0 when everything agreed, 1 when something did not.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

DEFAULT_SAMPLE = {"numpy": 1.0, "tf": 0.1, "xla": 0.02, "jax": 0.05}
# The construct families programs use unless --features says otherwise
# (tools/fuzzgen.py FEATURES): all of them.
DEFAULT_FEATURES = "all"


def plan(index: int, seed: int, backends, sample) -> list:
    """The backends program `index` runs on (a deterministic sample)."""
    rng = random.Random(f"{seed}:{index}")
    return [b for b in backends if rng.random() < sample.get(b, 1.0)]


def make_program(program_seed, options, note=""):
    """Program `program_seed` of a run with these options."""
    from tools import fuzzgen

    vectors = fuzzgen.uses_vectors(program_seed, options.vectors)
    avoid = () if options.allow_known else None
    return fuzzgen.generate(
        random.Random(program_seed), options.statements, options.max_depth, note=note, vectors=vectors,
        avoid=avoid, features=fuzzgen.parse_features(options.features),
    )


def _work(program_seed, backends, options, scratch):
    """In a worker: one program's counts and findings, as plain data."""
    from tools import fuzzgen, fuzzrun

    program = make_program(program_seed, options, note=f" (seed {program_seed})")
    counts = fuzzrun.Counts()
    try:
        findings = fuzzrun.run_program(program, backends, program_seed, scratch, counts=counts)
    except fuzzrun.InvalidProgram as e:
        findings = [fuzzrun.Finding("python", "invalid", str(e), (), program)]
    return counts, [(f.backend, f.kind, f.detail, f.report(), program.source) for f in findings]


def _worker(conn, options):
    from tools import fuzzrun

    scratch = tempfile.mkdtemp(prefix="autobatch-fuzz-")
    context = fuzzrun.unformatted_generation() if not options.black else _nothing()
    with context:
        while True:
            job = conn.recv()
            if job is None:
                return
            conn.send(_work(*job, options, scratch))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Worker:
    """A process running programs one at a time; killed and replaced on a hang."""

    def __init__(self, options):
        self.options = options
        self.context = multiprocessing.get_context("spawn")
        self._start()

    def _start(self):
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=_worker, args=(child, self.options), daemon=True)
        self.process.start()
        self.done = 0
        self.job = None
        self.started = None

    def submit(self, job):
        if self.done >= self.options.recycle:  # bounded memory: TF keeps traced graphs
            self.stop()
            self._start()
        self.job, self.started = job, time.monotonic()
        self.conn.send(job)

    def poll(self):
        """(job, result) when finished, (job, None) when over time, else None."""
        if self.job is None:
            return None
        if self.conn.poll():
            try:
                result = self.conn.recv()
            except EOFError:  # the worker died (a crash in native code)
                result = "died"
            job, self.job = self.job, None
            self.done += 1
            if result == "died":
                self._start()
                return job, None
            return job, result
        if time.monotonic() - self.started > self.options.timeout or not self.process.is_alive():
            job, self.job = self.job, None
            self.process.kill()
            self.process.join()
            self._start()
            return job, None
        return None

    def stop(self):
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()


def _save(out, program_seed, backend, kind, report, source, options):
    from tools import fuzzgen

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"seed{program_seed}_{backend}_{kind}.py")
    header = "".join(f"# {line}\n" for line in report.rstrip().splitlines())
    rerun = (
        f"# rerun: python -m tools.fuzz --programs 1 --seed {program_seed} --backends {backend} "
        f"--sample {backend}=1 --vectors {options.vectors:g} --statements {options.statements} "
        f"--max-depth {options.max_depth} "
        f"--features {fuzzgen.format_features(fuzzgen.parse_features(options.features))}"
        f"{' --allow-known' if options.allow_known else ''}\n"
    )
    with open(path, "w") as f:
        f.write(header + rerun + source)
    return path


def minimize(options) -> int:
    """`--minimize FILE`: the finding shrunk, printed with its inputs."""
    import numpy as np

    from tools import fuzzrun

    name = os.path.basename(options.minimize)
    parts = name[: -len(".py")].split("_")
    backend = parts[1] if len(parts) == 3 and parts[1] in DEFAULT_SAMPLE else options.backends.split(",")[0]
    source, entry, inputs = fuzzrun.read_finding(options.minimize)
    scratch = tempfile.mkdtemp(prefix="autobatch-shrink-")
    with fuzzrun.unformatted_generation():
        source, inputs, (kind, what) = fuzzrun.shrink(
            source, entry, inputs, backend, scratch, options.strict,
            log=lambda text: print(text, file=sys.stderr, flush=True),
        )
    args = ", ".join(f"np.array({np.asarray(a).tolist()!r})" for a in inputs)
    print(f"# {kind} on {backend}: {what}\n# inputs: {entry}({args})\n{source}")
    return 0


def parse_sample(text):
    sample = dict(DEFAULT_SAMPLE)
    for item in filter(None, (text or "").split(",")):
        name, _, value = item.partition("=")
        sample[name.strip()] = float(value)
    return sample


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="numpy,tf,xla")
    parser.add_argument("--sample", default="", help="fraction of programs per backend, e.g. tf=0.1,xla=0.02")
    parser.add_argument("--statements", type=int, default=20, help="about how many statements per program")
    parser.add_argument("--max-depth", type=int, default=2, help="the largest recursion depth argument")
    parser.add_argument("--vectors", type=float, default=0.5,
                        help="fraction of programs with per-example arrays, subscripts and tables "
                        "(0: the programs each seed gave before they existed)")
    parser.add_argument("--features", default="default",
                        help="the construct families of issue 29 and their probabilities: 'default' "
                        f"({DEFAULT_FEATURES}), 'all', 'none', or e.g. 'all,bits=0' or "
                        "'builtins=0.3,membership' (a bare name takes its default probability)")
    parser.add_argument("--allow-known", action="store_true",
                        help="generate the constructs of fuzzgen.KNOWN_BUGS too (left out by default)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per program")
    parser.add_argument("--recycle", type=int, default=100, help="programs per worker process")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "autobatch-fuzz-findings"),
                        help="where failing programs are saved")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop starting programs after this long, and report what ran")
    parser.add_argument("--black", action="store_true", help="format generated code with black (slower)")
    parser.add_argument("--minimize", metavar="FILE", help="shrink a saved finding and print it")
    parser.add_argument("--strict", action="store_true",
                        help="with --minimize: keep the values that differ, not only that some do")
    options = parser.parse_args(argv)
    if options.features.strip() == "default":
        options.features = DEFAULT_FEATURES
    from tools import fuzzgen

    try:
        fuzzgen.parse_features(options.features)
    except ValueError as e:
        parser.error(str(e))
    if options.minimize:
        return minimize(options)
    backends = [b.strip() for b in options.backends.split(",") if b.strip()]
    unknown = set(backends) - set(DEFAULT_SAMPLE)
    if unknown:
        parser.error(f"unknown backend(s) {sorted(unknown)}; choose from {', '.join(DEFAULT_SAMPLE)}")
    sample = parse_sample(options.sample)

    from tools.fuzzrun import Counts

    jobs = [
        (options.seed + k, plan(k, options.seed, backends, sample)) for k in range(options.programs)
    ]
    jobs = [j for j in jobs if j[1]]
    totals, findings, known, start = Counts(), 0, 0, time.monotonic()
    workers = [Worker(options) for _ in range(max(1, min(options.jobs, len(jobs))))]
    pending = list(reversed(jobs))
    finished = 0
    try:
        while finished < len(jobs):
            if options.max_seconds is not None and time.monotonic() - start > options.max_seconds:
                if pending:
                    print(f"time limit: {len(pending)} programs not started", file=sys.stderr)
                jobs = jobs[: len(jobs) - len(pending)]
                pending = []
                if all(w.job is None for w in workers):
                    break
            for w in workers:
                if w.job is None and pending:
                    w.submit(pending.pop())
                done = w.poll()
                if done is None:
                    continue
                finished += 1
                (program_seed, job_backends), result = done
                if result is None:
                    source = make_program(program_seed, options).source
                    what = f"timeout (> {options.timeout:g} s) or worker crash on {','.join(job_backends)}"
                    result = (Counts(), [("+".join(job_backends), "timeout", what, what + "\n", source)])
                counts, found = result
                totals.merge(counts)
                for backend, kind, detail, report, source in found:
                    if kind == "known":
                        known += 1
                        continue
                    findings += 1
                    path = _save(options.out, program_seed, backend, kind, report, source, options)
                    print(f"\n=== program seed {program_seed}: {report.rstrip()}\n    saved to {path}", flush=True)
                if finished % 100 == 0:
                    print(f"[{finished}/{len(jobs)} programs, {time.monotonic() - start:.0f} s] "
                          f"{totals.summary()}", file=sys.stderr, flush=True)
            time.sleep(0.01)
    finally:
        for w in workers:
            w.stop()
    elapsed = time.monotonic() - start
    print(f"\nprograms tried: {len(jobs)} (seeds {options.seed}..{options.seed + options.programs - 1}), "
          f"{elapsed:.0f} s; features {fuzzgen.format_features(fuzzgen.parse_features(options.features))}")
    for backend in backends:
        print(f"  {backend}: {totals.programs.get(backend, 0)} programs, "
              f"{totals.inputs.get(backend, 0)} inputs (examples), "
              f"{totals.raised.get(backend, 0)} batches expected to raise IndexError")
    print(f"findings: {findings}" + (f" (saved under {options.out}/)" if findings else ""))
    from tools.fuzzrun import KNOWN

    print(f"crashes of a known cause (not counted as findings): {known}; causes: {list(KNOWN)}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
