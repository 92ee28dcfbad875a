"""Updates tests/durations.json, the seconds each test file takes, from the
`--durations` output of pytest runs (tests/conftest.py runs the longest
files first from it).

    python -m pytest -q -n 0 tests/test_x.py --durations=0 > /tmp/x.txt
    python -m tools.test_durations /tmp/x.txt [more outputs...]

Each file named in an output gets the sum of its setup, call and teardown
times there (a file's entry is replaced, the others kept).  A file's time
alone is what counts: run it with `-n 0`, not beside others.
"""

import collections
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DURATIONS = os.path.join(ROOT, "tests", "durations.json")
LINE = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+?\.py)::")


def file_seconds(lines):
    seconds = collections.Counter()
    for line in lines:
        match = LINE.match(line)
        if match:
            seconds[match.group(3)] += float(match.group(1))
    return seconds


def main(paths):
    with open(DURATIONS, encoding="utf-8") as f:
        table = json.load(f)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for name, value in file_seconds(f).items():
                table["seconds"][name] = round(value)
                if name in table.get("estimated", ()):
                    table["estimated"].remove(name)
    table["seconds"] = dict(sorted(table["seconds"].items(), key=lambda kv: (-kv[1], kv[0])))
    with open(DURATIONS, "w", encoding="utf-8") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    for name, value in table["seconds"].items():
        print(f"{value:6d}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
