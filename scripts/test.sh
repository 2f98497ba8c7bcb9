#!/usr/bin/env bash
# Run every memcert test on a fresh machine. Installs what the tests need into the checkout:
# a Python venv at .venv with the pinned anthropic SDK (adapters/python/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

want="$(grep -v '^#' adapters/python/requirements.txt | tr -d '[:space:]')"
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip show anthropic 2>/dev/null | grep -qx "Version: ${want#anthropic==}"; then
  echo "==> creating .venv with ${want}"
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r adapters/python/requirements.txt
fi
export MEMCERT_PYTHON="$PWD/.venv/bin/python"

echo "==> cargo fmt --check"
cargo fmt --all -- --check

echo "==> cargo test"
# Snapshots are never written here: review changes with `cargo insta review`.
INSTA_UPDATE=no cargo test --locked

echo "==> benches compile (not run)"
cargo bench --no-run --locked --quiet
