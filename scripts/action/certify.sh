#!/usr/bin/env bash
# The action's certify step: memcert certify with the action's inputs (INPUT_*), every report
# written to $RUNNER_TEMP/memcert-reports, the Markdown summary appended to the job summary.
# It always ends 0 and gives memcert's exit status as the output exit-code; the action's last
# step ends the job with it, after the uploads.
set -uo pipefail
out="$RUNNER_TEMP/memcert-reports"
mkdir -p "$out"
if [ -z "${INPUT_PYTHON:-}${INPUT_NODE:-}${INPUT_STDIO:-}${INPUT_APP:-}" ] && [ ! -f memcert.toml ]; then
  echo "::error::memcert: no handler: give the python, node, stdio or app input, or a memcert.toml in the working directory ($PWD)"
  exit 2
fi
args=(certify
  --report-json "$out/memcert.json" --junit "$out/memcert-junit.xml"
  --html "$out/memcert.html" --markdown "$out/memcert.md"
  --sarif "$out/memcert.sarif")
add() { if [ -n "$2" ]; then args+=("$1" "$2"); fi; }
add --profile "${INPUT_PROFILE:-}"
add --level "${INPUT_LEVEL:-}"
add --python "${INPUT_PYTHON:-}"
add --node "${INPUT_NODE:-}"
add --stdio "${INPUT_STDIO:-}"
add --app "${INPUT_APP:-}"
add --memory-dir "${INPUT_MEMORY_DIR:-}"
add --expected-failures "${INPUT_EXPECTED_FAILURES:-}"
add --baseline "${INPUT_BASELINE:-}"
add --python-exe "${INPUT_PYTHON_EXE:-}"
add --node-path "${INPUT_NODE_PATH:-}"
add --sarif-location "${INPUT_SARIF_LOCATION:-}"
if [ -n "${INPUT_ARGS:-}" ]; then
  # Split like a POSIX shell, without expansion or evaluation.
  mapfile -d '' -t extra < <(python3 -c 'import shlex, sys; sys.stdout.write("".join(w + "\0" for w in shlex.split(sys.argv[1])))' "$INPUT_ARGS")
  args+=("${extra[@]}")
fi
"${MEMCERT:-memcert}" "${args[@]}"
code=$?
if [ -f "$out/memcert.md" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/memcert.md" >>"$GITHUB_STEP_SUMMARY"
fi
{
  echo "exit-code=$code"
  if [ "$code" = 0 ]; then echo "certified=true"; else echo "certified=false"; fi
  echo "reports=$out"
  if [ -f "$out/memcert.sarif" ]; then echo "sarif=$out/memcert.sarif"; fi
} >>"$GITHUB_OUTPUT"
exit 0
