"""The `autobatch` command line.

    autobatch demo              batch every example, check and time it
    autobatch check             exit 1 (with a diff) if generated/ is not current
    autobatch generate          rewrite every stale module under generated/

Exit codes: 0 success, 1 stale (check) or mismatch (demo), 2 usage,
123 internal error.  Progress goes to stderr; stdout carries results only.
"""

from __future__ import annotations

import argparse
import os
import sys


def _parser():
    parser = argparse.ArgumentParser(prog="autobatch", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="batch every example, check it, time it")
    demo.add_argument("--batch", type=int, default=256)
    demo.add_argument("--headline-batch", type=int, default=4096)
    for name, text in (
        ("check", "exit 1 with a diff if generated/ is not current"),
        ("generate", "rewrite the stale modules under generated/"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--root", default=os.getcwd(), help="the project folder")
        p.add_argument("--quiet", action="store_true")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        if args.command == "demo":
            from transpiler import demo

            return demo.main(args.batch, args.headline_batch)
        return _check_or_generate(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - reported, with the internal-error code
        print(f"autobatch: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 123


def _check_or_generate(args):
    from transpiler import loader, regenerate

    root = os.path.abspath(args.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    stale = regenerate.stale_files(root)
    if args.command == "check":
        for _, diff, _ in stale:
            sys.stdout.write(diff)
        if stale and not args.quiet:
            print(
                f"autobatch: {len(stale)} generated module(s) are stale; "
                "run `autobatch generate` to rewrite them",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path, _, expected in stale:
        loader.write_atomic(path, expected)
        if not args.quiet:
            print(f"autobatch: wrote {os.path.relpath(path, root)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
