#!/usr/bin/env bash
# Regenerates the protobuf code into a temporary folder and fails if it differs
# from what is committed in libs/proto/src/gen: generated code is never edited
# by hand, and a contract change must come with its regenerated code.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
buf lint
buf generate --template '{"version":"v2","inputs":[{"directory":"proto"}],"plugins":[{"local":"protoc-gen-es","out":"'"$tmp"'/gen","opt":["target=ts","import_extension=js"]}]}'
if ! diff -r "$tmp/gen" libs/proto/src/gen >"$tmp/diff.txt"; then
  echo "proto:check: libs/proto/src/gen differs from what proto/ generates:" >&2
  head -40 "$tmp/diff.txt" >&2
  echo "Run 'npm run proto:generate' and commit the result; never edit generated code by hand." >&2
  exit 1
fi
echo "proto:check: generated code matches proto/ ($(find libs/proto/src/gen -name '*.ts' | wc -l) files)"
