"""Operations per second of the Python SDK's `BetaLocalFilesystemMemoryTool`, in-process.

The Rust side of this benchmark (`benches/handler.rs`) copies this workload exactly.

Workload
--------
One tool instance, `BetaLocalFilesystemMemoryTool(base_path=tempfile.mkdtemp())`, called with
`tool.call(input_dict)` as the SDK tool runner calls it. Setup, untimed, through the tool:

- `/memories/bench/notes.txt`: 100 lines, `line {i} of the benchmark file\\n` for i = 1..100;
- `/memories/bench/f00.txt` .. `f19.txt`: each `x\\n`;
- `/memories/bench/d0/` and `/memories/bench/d1/`: each holds `a0.txt` .. `a4.txt`, each `y\\n`.

The ops then run in this order on the same store, N iterations each (i = 0..N-1):

- `view_file`: view `/memories/bench/notes.txt`.
- `view_dir`: view `/memories/bench` (33 entries below it).
- `create`: create `/memories/bench/new/{i}.txt` with `file_text` = 1024 bytes of `a`.
- `str_replace`: on `/memories/bench/notes.txt`, replace `line 50 of` with `LINE 50 of` when i is
  even and `LINE 50 of` with `line 50 of` when i is odd.
- `insert`: insert `inserted line` at `insert_line` 1 in `/memories/bench/ins.txt`, created just
  before this op (untimed) with the same 100 lines as notes.txt.
- `delete`: before each call, create (untimed) `/memories/bench/del.txt` with `x`; then delete it.
- `rename`: rename `/memories/bench/r0.txt` to `/memories/bench/r1.txt` when i is even and back
  when i is odd; `r0.txt` (`x`) is created just before this op (untimed).
- `reject_traversal`: view `/memories/../secret.txt`, which must be refused (an error result).

Timing: `time.perf_counter()` read just before and just after each `tool.call`; `seconds` is the
sum over the N calls, so untimed preparation never counts. Every call is checked: a string result
for the ops, a `ToolError` for `reject_traversal`; anything else aborts the benchmark.

Output: one JSON line per op, `{"op":NAME,"iterations":N,"seconds":S,"ops_per_sec":X}`.

Run: python3 benches/python_sdk.py [--iterations N]   (default 2000; needs anthropic==2.14.0)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time

try:
    from anthropic.tools import BetaLocalFilesystemMemoryTool, ToolError
except ImportError as exc:
    sys.exit(f"benches/python_sdk.py needs the anthropic package (pip install anthropic==2.14.0): {exc!r}")

HUNDRED_LINES = "".join(f"line {i} of the benchmark file\n" for i in range(1, 101))


def ok(tool, tool_input):
    """Call as the runner does; fail loudly unless the call succeeded with a string."""
    result = tool.call(tool_input)
    if not isinstance(result, str):
        raise AssertionError(f"{tool_input} returned {result!r}")
    return result


def create(tool, path, text):
    ok(tool, {"command": "create", "path": path, "file_text": text})


def setup(tool):
    create(tool, "/memories/bench/notes.txt", HUNDRED_LINES)
    for n in range(20):
        create(tool, f"/memories/bench/f{n:02}.txt", "x\n")
    for d in ("d0", "d1"):
        for n in range(5):
            create(tool, f"/memories/bench/{d}/a{n}.txt", "y\n")


def timed(tool, make_input, iterations, expect_error=False, before=None):
    """Seconds spent inside tool.call over `iterations` calls, each result checked."""
    total = 0.0
    for i in range(iterations):
        if before is not None:
            before(i)
        tool_input = make_input(i)
        start = time.perf_counter()
        try:
            result = tool.call(tool_input)
        except ToolError as exc:
            total += time.perf_counter() - start
            if not expect_error:
                raise AssertionError(f"{tool_input} was refused: {exc.content!r}") from exc
            continue
        total += time.perf_counter() - start
        if expect_error or not isinstance(result, str):
            raise AssertionError(f"{tool_input} returned {result!r}")
    return total


def run(iterations):
    base = tempfile.mkdtemp(prefix="memcert-bench-")
    try:
        tool = BetaLocalFilesystemMemoryTool(base_path=base)
        setup(tool)

        def view(path):
            return lambda i: {"command": "view", "path": path}

        def swap(i):
            old, new = ("line 50 of", "LINE 50 of") if i % 2 == 0 else ("LINE 50 of", "line 50 of")
            return {"command": "str_replace", "path": "/memories/bench/notes.txt", "old_str": old, "new_str": new}

        def move(i):
            old, new = ("r0", "r1") if i % 2 == 0 else ("r1", "r0")
            return {
                "command": "rename",
                "old_path": f"/memories/bench/{old}.txt",
                "new_path": f"/memories/bench/{new}.txt",
            }

        yield "view_file", timed(tool, view("/memories/bench/notes.txt"), iterations)
        yield "view_dir", timed(tool, view("/memories/bench"), iterations)
        yield "create", timed(
            tool,
            lambda i: {"command": "create", "path": f"/memories/bench/new/{i}.txt", "file_text": "a" * 1024},
            iterations,
        )
        yield "str_replace", timed(tool, swap, iterations)
        create(tool, "/memories/bench/ins.txt", HUNDRED_LINES)
        yield "insert", timed(
            tool,
            lambda i: {
                "command": "insert",
                "path": "/memories/bench/ins.txt",
                "insert_line": 1,
                "insert_text": "inserted line",
            },
            iterations,
        )
        yield "delete", timed(
            tool,
            lambda i: {"command": "delete", "path": "/memories/bench/del.txt"},
            iterations,
            before=lambda i: create(tool, "/memories/bench/del.txt", "x"),
        )
        create(tool, "/memories/bench/r0.txt", "x")
        yield "rename", timed(tool, move, iterations)
        yield "reject_traversal", timed(tool, view("/memories/../secret.txt"), iterations, expect_error=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="Ops/s of the Python SDK memory handler (workload in the docstring)")
    parser.add_argument("--iterations", type=int, default=2000, metavar="N", help="calls per op (default 2000)")
    args = parser.parse_args()
    if args.iterations < 1:
        parser.error("--iterations must be at least 1")
    for op, seconds in run(args.iterations):
        line = {"op": op, "iterations": args.iterations, "seconds": seconds, "ops_per_sec": args.iterations / seconds}
        print(json.dumps(line, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
