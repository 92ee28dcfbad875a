"""`python -m autobatch ...`: the `autobatch` command (check, generate, diff, demo)."""

from transpiler.cli import main

raise SystemExit(main())
