"""The `autobatch` command line (also `python -m transpiler`).

    autobatch demo                 batch every example, check it, time it
    autobatch generate [PATHS...]  write the modules that are stale or missing,
                                   remove orphans; --force compiles every module
                                   again (== rm -rf generated && autobatch generate)
    autobatch check [PATHS...]     write nothing; exit 1 printing one line per problem
                                   (missing, stale, hand-edited, a program missing or
                                   undeclared, orphan, unreached function, bad lock line)
                                   and the command that fixes it
    autobatch diff [PATHS...]      print what `generate` would change; exit 1 if anything
    autobatch profile MODULE:FUNCTION --args A [B ...]
                                   per-block counts and utilization of one call

PATHS are source files or folders (default: `sources` in [tool.autobatch]).
Programs come from inputs only: signature=, [tool.autobatch.signatures] and
autobatch.lock (transpiler/inputs.py); check reads hashes (transpiler/gate.py).
Exit codes: 0 success; 1 a problem (check), a difference (diff), refused
(generate over a hand-edited module without --force), a mismatch (demo) or a
user mistake (profile); 2 usage; 123 internal error.
Results go to stdout (diff's text); progress, logs and check's problem lines
(printed even with --quiet) to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys

REGENERATE = "autobatch generate"


def _parser():
    parser = argparse.ArgumentParser(
        prog="autobatch", description="Batch per-example Python into readable generated code."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="batch every example, check it, time it")
    demo.add_argument("--batch", type=int, default=256, help="examples per program")
    demo.add_argument("--headline-batch", type=int, default=4096, help="examples for the headline (Collatz) and for fib")
    profile = sub.add_parser("profile", help="per-block counts and utilization of one call")
    profile.add_argument("target", help="MODULE:FUNCTION, e.g. examples.fib:fib")
    profile.add_argument(
        "--args", nargs="+", required=True, help="one Python literal per argument, e.g. '[3, 7, 4]'"
    )
    profile.add_argument(
        "--backend", default=None, choices=["numpy", "tensorflow", "jax"],
        help="default: the library's (TensorFlow)",
    )
    profile.add_argument("--xla", action="store_true")
    profile.add_argument("--max-stack-depth", type=int, default=15)
    for name, text in (
        ("generate", "write the generated modules that are stale"),
        ("check", "write nothing; exit 1 naming each problem and the command that fixes it"),
        ("diff", "print what `generate` would change"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("paths", nargs="*", help="source files or folders")
        p.add_argument("--root", default=os.getcwd(), help="the project folder")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
        p.add_argument("--verbose", "-v", action="store_true", help="more progress")
        if name == "generate":
            p.add_argument(
                "--force", action="store_true",
                help="regenerate every module whatever its hashes say, hand-edited ones too "
                "(what `rm -rf generated && autobatch generate` gives)",
            )
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        if args.command == "demo":
            import_tensorflow_quietly()
            from transpiler import demo

            return demo.main(args.batch, args.headline_batch)
        if args.command == "profile":
            return _profile(args)
        from transpiler import decoration

        with decoration.frozen_checks_off():  # stale modules are what it reports
            return _generated(args)
    except KeyboardInterrupt:
        return 130
    except (SyntaxError, FileNotFoundError, ValueError, TypeError) as e:
        print(f"autobatch: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - reported, with the internal-error code
        print(f"autobatch: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 123


def _profile(args):
    import ast
    import importlib

    import numpy as np

    from transpiler import errors

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module_name, _, function_name = args.target.partition(":")
    if not function_name:
        raise ValueError("name the function as MODULE:FUNCTION, e.g. examples.fib:fib")
    backend = args.backend or ("tensorflow" if args.xla else None)
    if backend not in ("numpy", "jax"):
        import_tensorflow_quietly()
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import module {module_name!r}: {error}") from None
    except errors.StaleGeneratedCodeError as error:  # frozen: found when decorating
        print(f"autobatch: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    function = getattr(module, function_name, None)
    if function is None:
        raise ValueError(f"module {module_name!r} has no function {function_name!r}")
    try:
        values = [np.asarray(ast.literal_eval(text)) for text in args.args]
    except (ValueError, SyntaxError) as error:
        raise ValueError(f"--args takes Python literals, e.g. '[3, 7, 4]': {error}") from None
    try:
        result, profile = function(
            *values,
            backend=backend,
            xla=args.xla,
            max_stack_depth=args.max_stack_depth,
            profile=True,
        )
    except (
        errors.StackOverflowError,
        errors.IterationLimitError,
        errors.StackMemoryError,
        errors.StaleGeneratedCodeError,
    ) as error:
        print(f"autobatch: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(f"result: {np.asarray(result).tolist() if not isinstance(result, tuple) else result}")
    print(profile.report())
    return 0


def _log(args, message, verbose_only=False):
    if args.quiet or (verbose_only and not args.verbose):
        return
    print(f"autobatch: {message}", file=sys.stderr)


def _problem(message):
    """An error `check` fails on: printed even with --quiet."""
    print(f"autobatch: {message}", file=sys.stderr)


def import_tensorflow_quietly():
    """Imports TensorFlow with its start-up log lines filtered out of stderr
    (autobatch_runtime/quiet.py); a no-op when TensorFlow is not installed."""
    import importlib.util

    from autobatch_runtime import quiet

    if "tensorflow" in sys.modules or importlib.util.find_spec("tensorflow") is None:
        return
    quiet.import_tensorflow()


def _generated(args):
    """generate / check / diff: survey cheaply, regenerate only what changed."""
    from transpiler import config as configuration
    from transpiler import gate, loader

    config = configuration.load(os.path.abspath(args.root))
    force = getattr(args, "force", False)
    survey = gate.survey(config, args.paths or None, trust_hashes=not force)
    rel = lambda path: os.path.relpath(path, config.root).replace(os.sep, "/")  # noqa: E731
    for line in survey.bad_inputs:
        _problem(line)
    expected, failed = _expected_texts(args, config, survey)
    reached = set()
    for text in list(survey.current.values()) + list(expected.values()):
        reached.update(loader.header_functions(loader.read_header(loader.split_header(text)[0])))
    unreached = [(p, n) for p, n in survey.unreached if (p, n) not in reached]
    stale = [(path, text) for path, text in expected.items() if loader.read(path) != text]
    _log(args, f"{len(survey.current)} generated module(s) current by their input hashes",
         verbose_only=True)
    if args.command == "check":
        status = _check(args, survey, expected, unreached)
    elif args.command == "diff":
        for path, text in stale:
            sys.stdout.write(_diff(rel(path), loader.read(path), text))
        for path in survey.orphans:
            sys.stdout.write(_diff(rel(path), loader.read(path), ""))
        status = 1 if stale or survey.orphans else 0
    else:
        status = _write(args, config, survey, stale, rel)
        for relpath, name in unreached:
            _log(args, "warning: " + gate.unreached_problem(relpath, name))
        status = status or (1 if survey.bad_inputs else 0)
    if failed:  # the others are written or reported; now the first failure
        raise failed[0]
    if status == 0:
        _log(args, _summary(args.command, survey, expected, stale, config))
    return status


def _summary(command, survey, expected, stale, config):
    """The one line a successful generate / check / diff ends with: how many
    modules and programs it vouched for, and what it wrote or removed."""
    from transpiler import loader

    programs = 0
    for path in survey.expected:
        text = expected.get(path) or survey.current.get(path) or loader.read(path) or ""
        programs += len(loader.header_programs(loader.read_header(loader.split_header(text)[0])))
    output = os.path.relpath(config.output_dir, config.root).replace(os.sep, "/")
    tree = f"{len(survey.expected)} module(s), {programs} program(s) under {output}/"
    if command == "generate":
        changes = [f"wrote {len(stale)}"] if stale else []
        changes += [f"removed {len(survey.orphans)}"] if survey.orphans else []
        return f"{', '.join(changes) or 'nothing to write'}; {tree} current"
    return f"{tree} current" if command == "check" else f"no differences: {tree} current"


def _check(args, survey, expected, unreached):
    """Prints one line per problem (the bad inputs are printed already), each
    naming the module or source and the command that fixes it; 1 if any.

    No text diff: that is `autobatch diff`'s (a deleted module would be
    thousands of lines of it).
    """
    from transpiler import gate, loader

    problems = []
    unbuilt = {}
    for path in survey.candidates:
        old, new = loader.read(path), expected.get(path)
        problems.extend(gate.module_problems(survey, path, old, new))
        if new is not None:
            source = survey.expected[path][0]
            unbuilt.setdefault(source, gate.unbuilt_declarations(survey, source, new))
    problems.extend(line for lines in unbuilt.values() for line in lines)
    problems.extend(gate.orphan_problem(survey, path) for path in survey.orphans)
    problems.extend(gate.unreached_problem(relpath, name) for relpath, name in unreached)
    for line in problems:
        _problem(line)
    return 1 if problems or survey.bad_inputs else 0


def _expected_texts(args, config, survey):
    """{module path: the text it should hold} for the modules the survey could
    not vouch for, and the failures.  This is where the compiler runs.

    A module that fails to generate is left as it is and does not stop the
    others: one broken function must not hold back (or damage) the rest.
    """
    if not survey.candidates:
        return {}, []
    if any(survey.expected[p][1] == "tensorflow" for p in survey.candidates):
        import_tensorflow_quietly()  # ~3 s here: not for NumPy modules, which never need it
    from transpiler import regenerate

    sources = sorted({survey.expected[p][0] for p in survey.candidates})
    targets = {t.path: t for t in regenerate.targets(config, sources)}
    expected, failed = {}, []
    for path in survey.candidates:
        target = targets.get(path)
        if target is None:
            error = ValueError(_unbuildable_message(config, path, survey.expected[path][0]))
            _log(args, str(error))
            failed.append(error)
            continue
        _log(args, f"generating {target.relpath} ({target.backend.name})", verbose_only=True)
        try:
            expected[path] = regenerate.expected_text(target)
        except Exception as error:  # noqa: BLE001 - re-raised once the rest is done
            _log(args, f"cannot generate {target.relpath} ({target.backend.name}): {error}")
            failed.append(error)
    return expected, failed


def _unbuildable_message(config, path, relpath):
    """Why a module's programs cannot be compiled, and the fix: its batched
    functions are registered by no module-level Context once the source is
    imported, usually because they are closures of a factory nobody calls."""
    from transpiler import inputs

    message = (
        f"cannot generate {os.path.relpath(path, config.root)}: no module-level "
        f"Context of {relpath} holds the functions its inputs name"
    )
    closures = inputs.factory_batched(os.path.join(config.root, *relpath.split("/")))
    if closures:
        named = ", ".join(f"{name} (in {factory})" for name, factory in closures)
        factory = closures[0][1]
        message += (
            f"; {named} closes over values of a factory that importing {relpath} does "
            "not call, and the compiler needs those values (their types shape the "
            "program): declare representative ones in pyproject.toml, e.g.\n"
            "    [tool.autobatch.closures]\n"
            f'    "{relpath}::{factory}" = {{ name = 0.5, other = "package.module:name" }}\n'
            f"(numbers as they are, objects as `module:name`; the factory is not called), "
            f"then run `autobatch generate {relpath}` (the generated factory still takes "
            "any values of those types)"
        )
    return message


def _diff(rel, actual, expected):
    import difflib

    return "".join(
        difflib.unified_diff(
            (actual or "").splitlines(keepends=True),
            expected.splitlines(keepends=True),
            rel,
            rel + " (expected)",
        )
    )


def _write(args, config, survey, stale, rel):
    """Writes the stale modules and removes the orphans, except hand-edited
    ones without --force, each named (even with --quiet: the exit is 1)."""
    from transpiler import loader

    refused = []
    for path, text in stale:
        old = loader.read(path)
        if old is not None and loader.is_hand_edited(old) and not args.force:
            refused.append((path, survey.expected[path][0]))
            continue
        loader.write_atomic(path, text, package_root=config.output_dir)
        _log(args, f"wrote {rel(path)}")
    for path in survey.orphans:
        old = loader.read(path)
        if old is not None and loader.is_hand_edited(old) and not args.force:
            refused.append((path, ""))
            continue
        os.unlink(path)
        _prune_packages(os.path.dirname(path), config.output_dir)
        _log(args, f"removed {rel(path)} (no input asks for it)")
    for path, source in refused:
        _problem(
            f"{rel(path)} was edited by hand; not overwritten (run "
            f"`{REGENERATE} --force{' ' + source if source else ''}`)"
        )
    return 1 if refused else 0


def _prune_packages(folder, output_dir):
    """Removes the package folders an orphan's removal left holding only an
    empty `__init__.py` (and byte code), up to the output folder: a fresh
    `autobatch generate` would not make them."""
    import shutil

    top = os.path.abspath(output_dir)
    folder = os.path.abspath(folder)
    while folder != top and os.path.commonpath([top, folder]) == top:
        names = set(os.listdir(folder)) - {"__pycache__"}
        init = os.path.join(folder, "__init__.py")
        if names != {"__init__.py"} or os.path.getsize(init):
            return
        shutil.rmtree(folder)
        folder = os.path.dirname(folder)


if __name__ == "__main__":
    sys.exit(main())
