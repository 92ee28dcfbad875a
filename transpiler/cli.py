"""The `autobatch` command line (also `python -m transpiler`).

    autobatch demo                 batch every example, check it, time it
    autobatch generate [PATHS...]  write the generated modules that are stale
    autobatch check [PATHS...]     write nothing; exit 1 with a diff if stale
    autobatch diff [PATHS...]      print what `generate` would change
    autobatch profile MODULE:FUNCTION --args A [B ...]
                                   per-block counts and utilization of one call

PATHS are source files or folders (default: `sources` in [tool.autobatch]).
Exit codes: 0 success; 1 stale (check), refused (generate over a hand-edited
module without --force) or a mismatch (demo); 2 usage; 123 internal error.
Results go to stdout; progress and logs to stderr.
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
    demo.add_argument("--headline-batch", type=int, default=4096, help="examples for fib")
    profile = sub.add_parser("profile", help="per-block counts and utilization of one call")
    profile.add_argument("target", help="MODULE:FUNCTION, e.g. examples.fib:fib")
    profile.add_argument(
        "--args", nargs="+", required=True, help="one Python literal per argument, e.g. '[3, 7, 4]'"
    )
    profile.add_argument("--backend", default="numpy", choices=["numpy", "tensorflow"])
    profile.add_argument("--xla", action="store_true")
    profile.add_argument("--max-stack-depth", type=int, default=15)
    for name, text in (
        ("generate", "write the generated modules that are stale"),
        ("check", "write nothing; exit 1 with a diff when generated code is stale"),
        ("diff", "print what `generate` would change"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("paths", nargs="*", help="source files or folders")
        p.add_argument("--root", default=os.getcwd(), help="the project folder")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
        p.add_argument("--verbose", "-v", action="store_true", help="more progress")
        if name == "generate":
            p.add_argument("--force", action="store_true", help="overwrite hand-edited modules")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        if args.command == "demo":
            from transpiler import demo

            return demo.main(args.batch, args.headline_batch)
        if args.command == "profile":
            return _profile(args)
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

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module_name, _, function_name = args.target.partition(":")
    if not function_name:
        raise ValueError("name the function as MODULE:FUNCTION, e.g. examples.fib:fib")
    function = getattr(importlib.import_module(module_name), function_name)
    values = [np.asarray(ast.literal_eval(text)) for text in args.args]
    result, profile = function(
        *values,
        backend=args.backend,
        xla=args.xla,
        max_stack_depth=args.max_stack_depth,
        profile=True,
    )
    print(f"result: {np.asarray(result).tolist() if not isinstance(result, tuple) else result}")
    print(profile.report())
    return 0


def _log(args, message, verbose_only=False):
    if args.quiet or (verbose_only and not args.verbose):
        return
    print(f"autobatch: {message}", file=sys.stderr)


def _generated(args):
    from transpiler import config as configuration
    from transpiler import regenerate

    config = configuration.load(os.path.abspath(args.root))
    targets = regenerate.targets(config, args.paths or None)
    stale, failed = _stale(args, targets)
    status = _write_or_report(args, config, targets, stale)
    if failed:  # the others are written or reported; now the first failure
        raise failed[0]
    return status


def _stale(args, targets):
    """[(target, expected text)] that differ from their files, and the failures.

    A module that fails to generate is left as it is and does not stop the
    others: one broken function must not hold back (or damage) the rest.
    """
    from transpiler import loader, regenerate

    stale, failed = [], []
    for target in targets:
        _log(args, f"checking {target.relpath} ({target.backend.name})", verbose_only=True)
        try:
            expected = regenerate.expected_text(target)
        except Exception as error:  # noqa: BLE001 - re-raised once the rest is done
            _log(args, f"cannot generate {target.relpath} ({target.backend.name}): {error}")
            failed.append(error)
            continue
        if loader.read(target.path) != expected:
            stale.append((target, expected))
    return stale, failed


def _write_or_report(args, config, targets, stale):
    from transpiler import loader, regenerate

    refused = []
    if args.command in ("check", "diff"):
        for target, expected in stale:
            sys.stdout.write(regenerate.diff(target, expected))
        if args.command == "diff":
            return 0
        if stale:
            _log(args, f"{len(stale)} generated module(s) are stale or missing; run `{REGENERATE}`")
            return 1
        _log(args, f"{len(targets)} generated module(s) are current", verbose_only=True)
        return 0
    for target, expected in stale:
        old = loader.read(target.path)
        if old is not None and loader.is_hand_edited(old) and not args.force:
            refused.append(target)
            continue
        loader.write_atomic(target.path, expected, package_root=config.output_dir)
        _log(args, f"wrote {os.path.relpath(target.path, config.root)}")
    for target in refused:
        _log(
            args,
            f"{os.path.relpath(target.path, config.root)} was edited by hand; "
            f"not overwritten (use `{REGENERATE} --force`)",
        )
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
