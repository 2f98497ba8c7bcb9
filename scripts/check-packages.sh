#!/usr/bin/env bash
# Install the packages of scripts/package.sh as a user would and certify with them, with no
# Rust toolchain on the PATH: the wheel into a fresh venv with the pinned anthropic SDK (the
# Python SDK handler), both npm tarballs explicitly into a scratch npm project (the TypeScript
# SDK handler, run through `npx memcert`). Each run's verdicts must equal those of the
# cargo-built binary (target/debug/memcert) on the same cases; the wheel's platform tag must be
# manylinux x86_64. Everything goes under target/package-check.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
packages="$root/target/packages"
work="$root/target/package-check"
rm -rf "$work"
mkdir -p "$work"
wheel="$(ls "$packages"/memcert-*.whl)"
case "$(basename "$wheel")" in
  *-manylinux_2_*_x86_64*.whl | *-manylinux2014_x86_64*.whl) echo "wheel platform tag: $(basename "$wheel" | sed 's/.*-\(manylinux[^.]*\)\.whl/\1/')" ;;
  *) echo "the wheel $(basename "$wheel") is not tagged manylinux x86_64"; exit 1 ;;
esac

# No cargo, rustc or rustup on the PATH for the package runs (nor test.sh's exported `cargo`
# shell function: a user's shell has none).
unset -f cargo
plain_path="$(tr ':' '\n' <<<"$PATH" | grep -v -e '/\.cargo/' -e '/\.rustup/' | paste -sd: -)"
if PATH="$plain_path" type -P cargo >/dev/null; then
  echo "cargo is still on the PATH without ~/.cargo/bin: $(PATH="$plain_path" type -P cargo)"
  exit 1
fi

cases=(--level quick --exclude 'race/*')
# Every run here is --jobs 1: they compare verdicts given under --timeout, and the SIGTERM check
# waits a fixed time; a pool of handlers would only add load to a shared machine.
# The TypeScript SDK runs a turn's tool calls at once, so which of batch/create-twice's two
# creates wins is timing: PASS in one run, NON-STRICT in the next (README, below
# "What the real SDK handlers get"). That case's verdict is left out of the comparison; its id is kept.
verdicts() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("\n".join(c["id"]+" "+("(timing)" if c["id"]=="batch/create-twice" else c["verdict"]) for c in r["cases"]))' "$1"; }
# same WHAT A B: the reports A (cargo-built) and B (package) exist, hold cases, and agree.
same() {
  local a b
  a="$(verdicts "$2")" || { echo "$1: no report from the cargo-built binary"; exit 1; }
  b="$(verdicts "$3")" || { echo "$1: no report from the package"; exit 1; }
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "$1: the verdicts differ from the cargo-built binary's"
    diff <(echo "$a") <(echo "$b") | head -20
    exit 1
  fi
  echo "$1: $(wc -l <<<"$b") cases, verdicts equal to the cargo-built binary's"
}

echo "==> the wheel, in a fresh venv with the pinned SDK"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" -r adapters/python/requirements.txt
set +e
(cd "$work" && VIRTUAL_ENV="$work/venv" PATH="$work/venv/bin:$plain_path" memcert certify --jobs 1 \
  --python anthropic.tools:BetaLocalFilesystemMemoryTool --profile python-sdk "${cases[@]}" \
  --report-json "$work/wheel.json" >/dev/null 2>>"$work/runs.log")
set -e
target/debug/memcert certify --jobs 1 --python anthropic.tools:BetaLocalFilesystemMemoryTool \
  --python-exe "$work/venv/bin/python" --profile python-sdk "${cases[@]}" \
  --report-json "$work/cargo-python.json" >/dev/null 2>>"$work/runs.log" || true
same wheel "$work/cargo-python.json" "$work/wheel.json"

echo "==> the npm packages, in a scratch npm project"
mkdir -p "$work/npm"
(cd "$work/npm" && npm init -y >/dev/null && PATH="$plain_path" npm install --silent --no-audit --no-fund \
  "$packages"/memcert-linux-x64-*.tgz "$packages"/memcert-0*.tgz)
set +e
(cd "$work/npm" && PATH="$plain_path" npx --no-install memcert certify --jobs 1 \
  --node @anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool --node-path "$root/adapters/node" \
  --profile typescript-sdk "${cases[@]}" --report-json "$work/npm.json" >/dev/null 2>>"$work/runs.log")
set -e
target/debug/memcert certify --jobs 1 --node @anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool \
  --node-path "$root/adapters/node" --profile typescript-sdk "${cases[@]}" \
  --report-json "$work/cargo-node.json" >/dev/null 2>>"$work/runs.log" || true
same npm "$work/cargo-node.json" "$work/npm.json"

echo "==> the npm launcher passes SIGTERM on: memcert stops cleanly (130), no process left"
# A run that lasts well past the signal: the Python SDK's handler at the full level (some 25 s;
# the reference in-process finishes the full level in under 3 s).
PATH="$plain_path" node "$work/npm/node_modules/memcert/bin/memcert.js" certify --jobs 1 --level full \
  --python anthropic.tools:BetaLocalFilesystemMemoryTool --python-exe "$work/venv/bin/python" \
  --profile python-sdk --report-json "$work/term.json" >/dev/null 2>>"$work/runs.log" &
launcher=$!
sleep 3
kill -TERM "$launcher"
set +e
wait "$launcher"
code=$?
set -e
if [ "$code" != 130 ]; then
  echo "the launcher ended $code after SIGTERM, expected 130"
  exit 1
fi
sleep 1
if pgrep -f "$work/npm/node_modules/memcert-linux-x64/bin/memcert" >/dev/null; then
  echo "memcert still runs after the launcher got SIGTERM"
  exit 1
fi
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]["completion"]; sys.exit(s != "interrupted")' "$work/term.json" \
  || { echo "the report of the stopped run is not marked interrupted"; exit 1; }
echo "npm launcher: SIGTERM passed on, exit 130, report marked interrupted"
