#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for Card Wallet Worker: system packages, npm packages,
# and the build. `--test` adds what the test suite needs (virtual reader, PostgreSQL, gcc).
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=false
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=true ;;
    *) echo "usage: scripts/setup.sh [--test]" >&2; exit 2 ;;
  esac
done

# pcscd talks to the reader; libpcsclite-dev is needed to build the PC/SC binding (npm ci).
packages=(pcscd libpcsclite-dev python3 make g++)
if $with_tests; then
  # vpcd: the virtual reader the PC/SC tests put a virtual card into; PostgreSQL for the ledger;
  # Chromium for the browser tests (driven by playwright-core, never a downloaded browser);
  # nsis compiles the Windows installer's include script in the packaging tests.
  packages+=(vsmartcard-vpcd postgresql gcc util-linux chromium nsis)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The PC/SC binding is built by node-gyp, which downloads Node's headers from nodejs.org unless
# told where they are: the installed ones are used when they are this Node's, so that setup
# needs no network beyond the package registries (.ci/run proves it with downloads blocked).
if [ -z "${npm_config_nodedir:-}" ]; then
  if nodedir=$(bash scripts/node-headers.sh); then
    export npm_config_nodedir="$nodedir"
    echo "setup: native modules build with the Node headers in $nodedir/include/node"
  else
    echo "setup: no installed headers of Node $(node -v): node-gyp downloads them from nodejs.org (or set npm_config_nodedir to a folder holding include/node of this version)"
  fi
fi

echo "setup: npm ci"
npm ci --no-audit --no-fund --loglevel=error
echo "setup: build"
npm run build --silent
echo "setup: done"
