#!/usr/bin/env bash
# Compare what two revisions of memcert report, to prove a refactor behaviour-neutral.
#
#   scripts/compare-commits.sh OLD_REV NEW_REV
#
# For each revision: a detached git worktree in a temp folder, `cargo build --release --locked
# --bin memcert` there (works with the root package and with a workspace whose root has
# default-members), with one target dir per revision under
# ${MEMCERT_COMPARE_CACHE:-$HOME/.cache/memcert-compare}/<sha>/; the built binary is kept there
# and reused while the toolchain (`rustc -vV`, `cargo -V`) is the same (MEMCERT_COMPARE_REBUILD=1
# rebuilds). Each binary then runs three handlers at `--level standard --exclude 'race/*'`:
#   reference       the built-in reference handler
#   python-sdk      anthropic.tools:BetaLocalFilesystemMemoryTool, --profile python-sdk, with
#                   $MEMCERT_PYTHON or else this checkout's .venv/bin/python (as tests/common does)
#   typescript-sdk  @anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool,
#                   --profile typescript-sdk, --node-path this checkout's adapters/node
# collecting `certify --report-json` and `snapshot --out` of each. Outputs are normalised
# (memcert's redaction rules mirrored in the JSON, timing and version fields dropped, order kept)
# and compared: OLD twice first (the comparison must be stable), then OLD with NEW.
# The venv and node_modules are made by scripts/test.sh; this script creates nothing in the
# checkout except the temporary worktrees' entries in .git (removed at exit).
#
# Exit status: 0 all equal; 1 OLD and NEW differ (first 100 diff lines shown); 2 bad arguments or
# a missing prerequisite; 3 the comparison is unstable (OLD differs from itself); 4 a build or a
# memcert run failed. MEMCERT_COMPARE_KEEP=1 keeps the temp folder (raw and normalised outputs);
# on exit 1 or 3 the normalised outputs are kept anyway and their folder is printed.
# MEMCERT_COMPARE_DROP=key,key drops more JSON keys (a deliberate change, e.g. the citation ids).
set -euo pipefail

prog=compare-commits
usage="usage: scripts/compare-commits.sh OLD_REV NEW_REV"
die() {
  local code=$1
  shift
  echo "$prog: $*" >&2
  exit "$code"
}

if [[ $# -eq 1 && ($1 == -h || $1 == --help) ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
[[ $# -eq 2 ]] || die 2 "expected 2 arguments (OLD_REV NEW_REV), got $#; $usage"
for rev in "$1" "$2"; do
  [[ -n $rev && $rev != -* ]] || die 2 "bad revision '$rev'; $usage"
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || die 2 "$root is not a git checkout"
old_sha="$(git -C "$root" rev-parse --verify --quiet "$1^{commit}")" ||
  die 2 "OLD_REV '$1' is not a commit of $root"
new_sha="$(git -C "$root" rev-parse --verify --quiet "$2^{commit}")" ||
  die 2 "NEW_REV '$2' is not a commit of $root"

for tool in git cargo rustc python3 node diff; do
  command -v "$tool" >/dev/null 2>&1 || die 2 "$tool not found on PATH"
done

# The pinned SDKs, installed in the main checkout as scripts/test.sh installs them.
python_exe="${MEMCERT_PYTHON:-$root/.venv/bin/python}"
want_py="$(grep -v '^#' "$root/adapters/python/requirements.txt" | tr -d '[:space:]')"
want_py="${want_py#anthropic==}"
[[ -x $python_exe ]] ||
  die 2 "no $python_exe: make it as scripts/test.sh does (python3 -m venv .venv && .venv/bin/python -m pip install -r adapters/python/requirements.txt)"
have_py="$("$python_exe" -c 'import importlib.metadata as m; print(m.version("anthropic"))' 2>/dev/null)" ||
  die 2 "$python_exe has no anthropic package: pip install -r adapters/python/requirements.txt"
[[ $have_py == "$want_py" ]] || die 2 "$python_exe has anthropic $have_py, the pin is $want_py (adapters/python/requirements.txt)"
node_dir="$root/adapters/node"
want_node="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["node_modules/@anthropic-ai/sdk"]["version"])' "$node_dir/package-lock.json")"
have_node="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$node_dir/node_modules/@anthropic-ai/sdk/package.json" 2>/dev/null)" ||
  die 2 "no $node_dir/node_modules/@anthropic-ai/sdk: run (cd adapters/node && npm ci) as scripts/test.sh does"
[[ $have_node == "$want_node" ]] || die 2 "adapters/node/node_modules has @anthropic-ai/sdk $have_node, the lock pins $want_node: npm ci"

cache="${MEMCERT_COMPARE_CACHE:-$HOME/.cache/memcert-compare}"
work="$(mktemp -d "${TMPDIR:-/tmp}/memcert-compare.XXXXXX")"
worktrees=()
# shellcheck disable=SC2329 # invoked by the EXIT trap
cleanup() {
  local rc=$?
  local wt
  for wt in "${worktrees[@]}"; do
    git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || echo "$prog: could not remove worktree $wt" >&2
  done
  if [[ ${MEMCERT_COMPARE_KEEP:-} == 1 ]]; then
    echo "$prog: kept $work"
  elif [[ ($rc == 1 || $rc == 3) && -d $work/norm ]]; then
    rm -rf "$work/raw"
    echo "$prog: normalised outputs kept in $work/norm"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
timings=()
# Record and print how long a stage took: `took LABEL START`.
took() {
  local secs
  secs="$(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
  timings+=("$(printf '%-34s %7s s' "$1" "$secs")")
  printf '  %-32s %7s s\n' "$1" "$secs"
}

# Build (or reuse) the binary of one revision: `build SHA`; sets built_bin.
built_bin=
build() {
  local sha=$1 short=${1:0:12} start wt dir stamp log
  start="$(now)"
  dir="$cache/$sha"
  wt="$work/wt-$short"
  worktrees+=("$wt")
  git -C "$root" worktree add --quiet --detach "$wt" "$sha" >&2
  stamp="$(cd "$wt" && rustc -vV && cargo -V)"
  if [[ -x $dir/memcert && -f $dir/stamp && "$(cat "$dir/stamp")" == "$stamp" && -z ${MEMCERT_COMPARE_REBUILD:-} ]]; then
    echo "==> $short: cached binary $dir/memcert" >&2
  else
    mkdir -p "$dir"
    log="$dir/build.log"
    echo "==> $short: cargo build --release --locked --bin memcert (target $dir/target, log $log)" >&2
    if ! (cd "$wt" && CARGO_TARGET_DIR="$dir/target" cargo build --release --locked --bin memcert) >"$log" 2>&1; then
      tail -n 30 "$log" >&2
      die 4 "build of $sha failed (log: $log)"
    fi
    cp "$dir/target/release/memcert" "$dir/memcert.tmp"
    mv "$dir/memcert.tmp" "$dir/memcert"
    printf '%s\n' "$stamp" >"$dir/stamp"
  fi
  took "build $short" "$start"
  built_bin="$dir/memcert"
}

handlers=(reference python-sdk typescript-sdk)
select_args=(--level standard --exclude 'race/*')
handler_args() {
  case $1 in
    reference) ;;
    python-sdk) printf '%s\n' --python anthropic.tools:BetaLocalFilesystemMemoryTool --profile python-sdk --python-exe "$python_exe" ;;
    typescript-sdk) printf '%s\n' --node @anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool --profile typescript-sdk --node-path "$node_dir" ;;
  esac
}

# Run the three handlers with one binary: `run_all BIN RUN_NAME`; raw outputs in raw/RUN_NAME/<h>,
# normalised ones in norm/RUN_NAME/<h>.
run_all() {
  local bin=$1 name=$2 h out start rc
  local -a args
  echo "==> run $name ($bin)"
  for h in "${handlers[@]}"; do
    start="$(now)"
    out="$work/raw/$name/$h"
    mkdir -p "$out"
    mapfile -t args < <(handler_args "$h")
    rc=0
    (cd "$work" && "$bin" certify "${args[@]}" "${select_args[@]}" --report-json "$out/report.json") \
      >"$out/certify.log" 2>&1 || rc=$?
    if [[ $rc -gt 1 || ! -s $out/report.json ]]; then
      tail -n 20 "$out/certify.log" >&2
      die 4 "memcert certify ($h, $name) exited $rc"
    fi
    rc=0
    (cd "$work" && "$bin" snapshot "${args[@]}" "${select_args[@]}" --out "$out/snap") \
      >"$out/snapshot.log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
      tail -n 20 "$out/snapshot.log" >&2
      die 4 "memcert snapshot ($h, $name) exited $rc"
    fi
    python3 "$work/norm.py" normalise "$h" "$out/report.json" "$out/snap" "$work/norm/$name/$h" ||
      die 4 "cannot normalise the outputs of $h ($name)"
    took "$name: $h" "$start"
  done
}

cat >"$work/norm.py" <<'PY'
"""Normalise and compare memcert outputs (see scripts/compare-commits.sh)."""
import json
import os
import re
import sys

# Cases whose replies depend on timing, compared by verdict only: {handler: {case id: verdicts}}.
# Each entry names where the timing dependence is documented.
ALLOW = {
    "typescript-sdk": {
        # README.md ("TypeScript's `batch/create-twice` is PASS or NON-STRICT from run to run:
        # which of two concurrent creates wins is timing") and tests/certify/main.rs
        # (typescript_sdk_handler_gets_exactly_the_expected_verdicts).
        "batch/create-twice": ["PASS", "NON-STRICT"],
        # Lost updates: always FAIL, but which edits are lost is timing. README.md ("two lost
        # updates (`batch/insert-three-at-top`, `batch/two-edits-one-file`: FAIL)"),
        # tests/certify/main.rs (typescript_sdk_expected) and tests/baseline/main.rs ("which of
        # two edits wins is timing", so batch cases are not in the TypeScript baseline).
        "batch/insert-three-at-top": ["FAIL"],
        "batch/two-edits-one-file": ["FAIL"],
    },
}

# Fields that are timing or memcert's own version: dropped wherever they occur.
DROP_TOP = {"memcert"}  # the report's memcert version
DROP_ANY = {"duration_ms"}
# MEMCERT_COMPARE_DROP=key,key: keys a deliberate change altered, dropped too (for example
# `schema_version,source,defined` to compare verdicts and replies across the citation rewrite).
_extra = {k for k in os.environ.get("MEMCERT_COMPARE_DROP", "").split(",") if k}
DROP_TOP |= _extra
DROP_ANY |= _extra


def run_parents():
    """Where memcert makes case sandboxes (src/attack/sandbox.rs default_parent): $TMPDIR when
    set, else /dev/shm, else the system temp folder; every spelling, canonicalised too."""
    out = []
    tmpdir = os.environ.get("TMPDIR")
    for p in ([tmpdir] if tmpdir else []) + ["/dev/shm", "/tmp"]:
        for q in (p, os.path.realpath(p)):
            q = q.rstrip("/")
            if q.startswith("/") and q not in out:
                out.append(q)
    return out


def run_dir_regex():
    # src/baseline.rs Redactor (rule store-path): the run folder `<parent>/memcert-XXXXXX`
    # without its leading `/`, and every tail of it from a path component on, becomes [RUN]
    # (an absolute spelling keeps its `/`: `/[RUN]/base`).
    tails = set()
    for p in run_parents():
        comps = p.strip("/").split("/")
        for i in range(len(comps)):
            tails.add("/".join(comps[i:]))
    alts = "|".join(re.escape(t) for t in sorted(tails, key=len, reverse=True))
    return re.compile(r"(?:(?:%s)/)?memcert-[A-Za-z0-9]{6}(?![A-Za-z0-9])" % alts)


RUN = run_dir_regex()
# Rule canary-token: `MEMCERT-CANARY-<16 hex>` becomes [TOKEN] (src/attack/sandbox.rs).
TOKEN = re.compile(r"MEMCERT-CANARY-[0-9a-f]{16}")
# Not a memcert rule: the temp folders of the adapter and the handler's scratch HOME/TMPDIR
# (memcert-adapter-, memcert-home-, ...), in case a handler's reply names one.
SCRATCH = re.compile(r"memcert-(?:adapter|home|tmp|node)-[A-Za-z0-9]{6}(?![A-Za-z0-9])")


def redact(s):
    s = RUN.sub("[RUN]", s)
    s = TOKEN.sub("[TOKEN]", s)
    return SCRATCH.sub("[SCRATCH]", s)


def clean(v):
    if isinstance(v, str):
        return redact(v)
    if isinstance(v, list):
        return [clean(x) for x in v]
    if isinstance(v, dict):
        return {redact(k): clean(x) for k, x in v.items() if k not in DROP_ANY}
    return v


def snap_name(case_id):
    return case_id.replace("/", "__") + ".snap"


def normalise(handler, report_path, snap_dir, out_dir):
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    for k in DROP_TOP:
        report.pop(k, None)
    report = clean(report)
    allow = ALLOW.get(handler, {})
    counts = report["summary"]["counts"]
    allowed_ids = set()
    for i, case in enumerate(report["cases"]):
        verdicts = allow.get(case["id"])
        if verdicts and case["verdict"] in verdicts:
            counts[case["verdict"]] -= 1
            counts["allow-listed"] = counts.get("allow-listed", 0) + 1
            keep = {k: case[k] for k in ("id", "category", "requirement", "source", "level") if k in case}
            keep["verdict"] = "one of " + "|".join(verdicts) + " (allow-listed: timing)"
            report["cases"][i] = keep
            allowed_ids.add(case["id"])
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2, ensure_ascii=False)
        f.write("\n")
    files = set(n for n in os.listdir(snap_dir) if n.endswith(".snap"))
    recorded = 0
    with open(os.path.join(out_dir, "snapshots.txt"), "w", encoding="utf-8") as out:
        # Catalog order (the report's), then any file that names no case of the run.
        for case in report["cases"]:
            name = snap_name(case["id"])
            out.write("=== %s ===\n" % case["id"])
            if name not in files:
                out.write("(no snapshot: race or SKIPPED)\n")
                continue
            files.discard(name)
            recorded += 1
            if case["id"] in allow:
                # Replies are timing; the verdict is compared in report.json.
                out.write("(allow-listed: replies not compared)\n")
                continue
            out.write(snapshot_text(os.path.join(snap_dir, name)))
        for name in sorted(files):
            out.write("=== file without a case: %s ===\n" % name)
            out.write(snapshot_text(os.path.join(snap_dir, name)))
    with open(os.path.join(out_dir, "counts"), "w", encoding="utf-8") as f:
        f.write("%d %d\n" % (len(report["cases"]), recorded))


def snapshot_text(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    lines = text.split("\n")
    # Drop the header's `source: memcert <version>` (between the first two `---` lines).
    if lines and lines[0] == "---":
        for j in range(1, len(lines)):
            if lines[j] == "---":
                break
            if lines[j].startswith("source: "):
                del lines[j]
                break
    text = redact("\n".join(lines))
    return text if text.endswith("\n") else text + "\n"


def sections(path):
    out = {}
    order = []
    cur = None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            if line.startswith("=== ") and line.rstrip("\n").endswith(" ==="):
                cur = line[4:-5]
                order.append(cur)
                out[cur] = []
            elif cur is not None:
                out[cur].append(line)
    return order, out


def compare(a_dir, b_dir):
    """Print which cases differ; exit 1 when any does."""
    with open(os.path.join(a_dir, "report.json"), encoding="utf-8") as f:
        a = json.load(f)
    with open(os.path.join(b_dir, "report.json"), encoding="utf-8") as f:
        b = json.load(f)
    problems = []
    if a["summary"] != b["summary"]:
        problems.append("summary (counts, target or flags)")
    a_ids = [c["id"] for c in a["cases"]]
    b_ids = [c["id"] for c in b["cases"]]
    a_set, b_set = set(a_ids), set(b_ids)
    only_a = [i for i in a_ids if i not in b_set]
    only_b = [i for i in b_ids if i not in a_set]
    if only_a:
        problems.append("cases only in the first: " + ", ".join(only_a[:10]) + (" ..." if len(only_a) > 10 else ""))
    if only_b:
        problems.append("cases only in the second: " + ", ".join(only_b[:10]) + (" ..." if len(only_b) > 10 else ""))
    common_a = [i for i in a_ids if i in b_set]
    common_b = [i for i in b_ids if i in a_set]
    if common_a != common_b:
        k = next(n for n, (x, y) in enumerate(zip(common_a, common_b)) if x != y)
        problems.append("case order differs from position %d (%s vs %s)" % (k, common_a[k], common_b[k]))
    ra = {c["id"]: c for c in a["cases"]}
    rb = {c["id"]: c for c in b["cases"]}
    sa_order, sa = sections(os.path.join(a_dir, "snapshots.txt"))
    sb_order, sb = sections(os.path.join(b_dir, "snapshots.txt"))
    differing = []
    for i in common_a:
        what = []
        if ra[i] != rb[i]:
            what.append("report" if ra[i].get("verdict") == rb[i].get("verdict")
                        else "verdict %s vs %s" % (ra[i].get("verdict"), rb[i].get("verdict")))
        if sa.get(i) != sb.get(i):
            what.append("snapshot")
        if what:
            differing.append("%s (%s)" % (i, ", ".join(what)))
    extra = [s for s in sa_order + sb_order if s.startswith("file without a case") and sa.get(s) != sb.get(s)]
    problems += ["snapshot " + s for s in extra]
    if differing:
        problems.append("%d differing case(s): %s" % (len(differing), "; ".join(differing[:20])
                        + (" ..." if len(differing) > 20 else "")))
    for p in problems:
        print("    " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "normalise":
        normalise(*sys.argv[2:6])
    elif cmd == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit("unknown command " + cmd)
PY

echo "OLD $1 = $old_sha"
echo "NEW $2 = $new_sha"
echo "sandboxes in: ${TMPDIR:-memcert default (/dev/shm, else /tmp)}; cache: $cache"

start="$(now)"
build "$old_sha"
old_bin="$built_bin"
if [[ $new_sha == "$old_sha" ]]; then
  new_bin="$old_bin"
else
  build "$new_sha"
  new_bin="$built_bin"
fi
took "builds (total)" "$start"

run_all "$old_bin" old-1
run_all "$old_bin" old-2
run_all "$new_bin" new

# Diff of one handler's normalised outputs, first 100 lines.
show_diff() {
  {
    diff -u --label "$2/report.json" --label "$3/report.json" "$work/norm/$2/$1/report.json" "$work/norm/$3/$1/report.json" || true
    diff -u --label "$2/snapshots" --label "$3/snapshots" "$work/norm/$2/$1/snapshots.txt" "$work/norm/$3/$1/snapshots.txt" || true
  } | head -n 100
}

echo "==> stability: OLD against itself"
start="$(now)"
unstable=0
for h in "${handlers[@]}"; do
  if ! python3 "$work/norm.py" compare "$work/norm/old-1/$h" "$work/norm/old-2/$h" >"$work/stability-$h.txt"; then
    unstable=1
    echo "unstable: $h (two runs of OLD differ)"
    cat "$work/stability-$h.txt"
    show_diff "$h" old-1 old-2
  else
    read -r n snaps <"$work/norm/old-1/$h/counts"
    echo "  stable: $h ($n cases, $snaps snapshots)"
  fi
done
took "compare OLD with OLD" "$start"
if [[ $unstable == 1 ]]; then
  echo "$prog: the comparison itself is unstable: fix the normalisation (or the allow-list) before trusting it" >&2
  exit 3
fi

echo "==> OLD against NEW"
start="$(now)"
differ=0
for h in "${handlers[@]}"; do
  read -r n _ <"$work/norm/old-1/$h/counts"
  if python3 "$work/norm.py" compare "$work/norm/old-1/$h" "$work/norm/new/$h" >"$work/compare-$h.txt"; then
    echo "equal: $h ($n cases)"
  else
    differ=1
    echo "differ: $h ($n cases in OLD)"
    cat "$work/compare-$h.txt"
    show_diff "$h" old-1 new
  fi
done
took "compare OLD with NEW" "$start"

echo "==> timings"
printf '  %s\n' "${timings[@]}"
exit "$differ"
