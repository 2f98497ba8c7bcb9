#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: the cargo-fuzz targets of fuzz/, with their seed corpora
# and dictionary in the OSS-Fuzz layout ($OUT/<target>, <target>_seed_corpus.zip, <target>.dict).
# differential_example, the template of fuzz/README.md over a deliberately flawed handler,
# crashes by design and is left out of $OUT.
cd "$SRC/memcert"
cargo fuzz build -O --debug-assertions
# A folder of fuzz/found/ may hold only its .keep.
shopt -s nullglob
for target in vpath tool_input command_sequence differential_reference; do
  cp "fuzz/target/x86_64-unknown-linux-gnu/release/$target" "$OUT/"
  # The seed corpus: the curated seeds and what the long runs found (fuzz/found/).
  seeds="$(mktemp -d)"
  cp "fuzz/seeds/$target"/* "fuzz/found/$target"/* "$seeds/"
  if command -v zip >/dev/null; then
    (cd "$seeds" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  else
    (cd "$seeds" && python3 -m zipfile -c "$OUT/${target}_seed_corpus.zip" ./*)
  fi
  rm -rf "$seeds"
  cp fuzz/dict/memory_paths.dict "$OUT/$target.dict"
done
