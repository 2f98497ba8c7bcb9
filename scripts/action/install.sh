#!/usr/bin/env bash
# The action's first step: install memcert into a virtual environment of its own under
# $RUNNER_TEMP (never the job's Python: the handler's interpreter stays the one on the PATH),
# from the wheel input or from PyPI (the version input, else the action's tag without its v),
# and put only the memcert binary on the PATH. Output: memcert=<path of the binary>.
set -euo pipefail
venv="$RUNNER_TEMP/memcert-venv"
bin="$RUNNER_TEMP/memcert-bin"
python3 -m venv "$venv"
if [ -n "${MEMCERT_WHEEL:-}" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$MEMCERT_WHEEL"
else
  version="${MEMCERT_VERSION:-${ACTION_REF:-}}"
  version="${version#v}"
  if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([a-z0-9.+-]*)?$ ]]; then
    echo "::error::memcert: the action's ref (${ACTION_REF:-none}) names no release: give the version input (X.Y.Z) or the wheel input"
    exit 2
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "memcert==$version"
fi
mkdir -p "$bin"
ln -sf "$venv/bin/memcert" "$bin/memcert"
"$bin/memcert" --version
echo "$bin" >>"$GITHUB_PATH"
echo "memcert=$bin/memcert" >>"$GITHUB_OUTPUT"
