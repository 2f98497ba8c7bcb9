#!/usr/bin/env bash
# Regenerate the curated seed corpora under fuzz/seeds/ from the payload grammar: the depth-2
# payload of every (dot, slash) spelling and every data payload, as a path (vpath) and inside a
# tool_use input in a rotating path field (tool_input); and the command_sequence seeds, from a
# small fixed-seed coverage search (memcert::fuzz::sequence::seed_inputs); and the
# differential_reference seeds, the first sequences `memcert fuzz`'s generator draws with seed 1,
# written as bytes (memcert::fuzz::sequence::encode). Deterministic; commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release
bin=target/release/memcert
rm -rf fuzz/seeds/vpath fuzz/seeds/tool_input
mkdir -p fuzz/seeds/vpath fuzz/seeds/tool_input
python3 - "$bin" <<'PY'
import json, subprocess, sys, hashlib
out = subprocess.run([sys.argv[1], "payloads", "--format", "jsonl"], check=True, capture_output=True, text=True).stdout
fields = [("view", "path"), ("create", "path"), ("str_replace", "path"), ("insert", "path"),
          ("delete", "path"), ("rename", "old_path"), ("rename", "new_path")]
n = 0
for line in out.splitlines():
    p = json.loads(line)
    if p["family"] == "traversal" and p["depth"] != 2:
        continue
    text = p["text"].replace("{DOWN:2}", "base/").replace("{DOWN:99}", "tmp/run/base/")
    name = p["id"].replace("/", "__")
    open(f"fuzz/seeds/vpath/{name}", "wb").write(text.encode())
    cmd, field = fields[n % len(fields)]
    v = {"command": cmd, field: text}
    if cmd == "create": v["file_text"] = "x\n"
    if cmd == "str_replace": v.update(old_str="SECRET", new_str="x")
    if cmd == "insert": v.update(insert_line=0, insert_text="x")
    if cmd == "rename": v.setdefault("old_path", "/memories/a.md"); v.setdefault("new_path", "/memories/b.md")
    open(f"fuzz/seeds/tool_input/{name}", "w").write(json.dumps(v, ensure_ascii=False))
    n += 1
print(f"{n} seeds per target")
PY
cargo test --quiet -p memcert --features arbitrary --test fuzz_regressions -- --ignored write_command_sequence_seeds
cargo test --quiet -p memcert --features arbitrary --test fuzz_regressions -- --ignored write_differential_reference_seeds
