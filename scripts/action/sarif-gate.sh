#!/usr/bin/env bash
# Whether the action uploads its SARIF file (UPLOAD: the upload-sarif input; FORK: whether the
# pull request comes from a fork). Output: upload=true|false.
set -euo pipefail
case "${UPLOAD:-auto}" in
  true) upload=true ;;
  false) upload=false ;;
  auto)
    if [ "${FORK:-}" = true ]; then
      echo "memcert: the SARIF file is not uploaded: a pull request from a fork gets a token without security-events: write (upload-sarif: true tries anyway)"
      upload=false
    else
      upload=true
    fi
    ;;
  *)
    echo "::error::memcert: upload-sarif must be auto, true or false, not ${UPLOAD}"
    exit 2
    ;;
esac
echo "upload=$upload" >>"$GITHUB_OUTPUT"
