#!/usr/bin/env bash
# Build memcert's packages from one release build of memcert-cli, into target/packages:
# the Python wheel (maturin, bindings = "bin": packaging/python/pyproject.toml) and the npm
# packages `memcert` (the launcher) and `memcert-linux-x64` (the binary). maturin goes in
# .tools/py, never into global folders. Prints each package with its size in bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
maturin_version="maturin==1.16.0"
if ! .tools/py/bin/maturin --version 2>/dev/null | grep -q "maturin 1.16.0"; then
  [ -x .tools/py/bin/python ] || python3 -m venv .tools/py
  .tools/py/bin/python -m pip install --quiet --disable-pip-version-check "$maturin_version"
fi
out="$PWD/target/packages"
rm -rf "$out" target/npm-stage
mkdir -p "$out"
# The wheel: maturin runs `cargo build --release --locked -p memcert-cli` in the workspace's
# target folder, so the npm packages below take the same binary.
# A regular file at /dev/null (some CI images) holds whatever was sent there, the check above
# included, and maturin's cargo would read it back as Rust source (see scripts/test.sh).
if [ ! -c /dev/null ] && [ -f /dev/null ] && [ -w /dev/null ]; then : >/dev/null; fi
(cd packaging/python && "$OLDPWD/.tools/py/bin/maturin" build --release --strip --locked --quiet --out "$out")
cp -r packaging/npm target/npm-stage
mkdir -p target/npm-stage/memcert-linux-x64/bin
cp target/release/memcert target/npm-stage/memcert-linux-x64/bin/memcert
for p in memcert-linux-x64 memcert; do
  (cd "target/npm-stage/$p" && npm pack --silent --pack-destination "$out" >/dev/null)
done
for f in "$out"/*; do
  echo "$(basename "$f") $(stat -c %s "$f")"
done
