#!/usr/bin/env bash
# Prints the folder holding this Node's own headers (DIR/include/node, for node-gyp's
# --nodedir), or exits 1 when none match `node -v`. Node's installers put them there (the
# official tarballs, NodeSource's and Debian's packages with libnode-dev); with them node-gyp
# builds the PC/SC binding without downloading headers from nodejs.org, which a till behind a
# proxy or a locked-down CI machine cannot reach.
set -euo pipefail

version=$(node -v)
binary=$(readlink -f "$(command -v node)")
candidates=("$(dirname "$(dirname "$binary")")" "$(node -p 'process.config.variables.node_prefix')" /usr /usr/local)
for dir in "${candidates[@]}"; do
  header="$dir/include/node/node_version.h"
  [ -f "$header" ] || continue
  found=$(awk '$1 == "#define" && $2 ~ /^NODE_(MAJOR|MINOR|PATCH)_VERSION$/ { v[$2] = $3 }
    END { printf "v%s.%s.%s", v["NODE_MAJOR_VERSION"], v["NODE_MINOR_VERSION"], v["NODE_PATCH_VERSION"] }' "$header")
  if [ "$found" = "$version" ]; then
    echo "${dir%/}"
    exit 0
  fi
done
exit 1
