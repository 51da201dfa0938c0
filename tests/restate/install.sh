#!/usr/bin/env bash
# Installs the Restate server that the restate tests (tests/tests/restate/) run — the npm package pinned in
# package.json and package-lock.json next to this script — into target/restate-server of the
# workspace (or the folder given as the first argument), and prints the server binary's path.
#
# Idempotent: a server of the pinned version already there is kept as it is. Install scripts
# are not run (the package's only one reports the download to an analytics service).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-$here/../../target/restate-server}"
want="$(sed -n 's/.*"@restatedev\/restate-server": "\([^"]*\)".*/\1/p' "$here/package.json")"

installed() {
    local bin
    for bin in "$dest"/node_modules/@restatedev/restate-server-*/bin/restate-server; do
        if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "restate-server $want" ]; then
            echo "$bin"
            return 0
        fi
    done
    return 1
}

if installed; then
    exit 0
fi
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
(cd "$dest" && SCARF_ANALYTICS=false npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
installed || {
    echo "npm installed @restatedev/restate-server $want in $dest, but no server binary for this platform is there" >&2
    exit 1
}
