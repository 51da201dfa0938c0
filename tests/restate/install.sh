#!/usr/bin/env bash
# Installs the Restate server that the restate tests (tests/tests/restate/) run — the npm package pinned in
# package.json and package-lock.json next to this script — into target/restate-server of the
# workspace (or the folder given as the first argument), and prints the server binary's path.
#
# The server binary comes in an optional, per-platform package, and npm skips an optional package
# without a word when it is not fetched (a failed download, `omit=optional` in a config). So when
# `npm ci` leaves no binary, the platform's package is fetched on its own with `npm pack` (whose
# failures are loud), checked against the integrity pinned in package-lock.json, and unpacked.
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

# The platform package's name and the integrity package-lock.json pins for it.
platform="$(node -p 'process.platform + "-" + process.arch')"
package="@restatedev/restate-server-$platform"
integrity() {
    node -e '
        const lock = require(process.argv[1]);
        const entry = lock.packages["node_modules/" + process.argv[2]];
        if (!entry) { console.error("package-lock.json pins no " + process.argv[2]); process.exit(1); }
        console.log(entry.integrity);
    ' "$here/package-lock.json" "$package"
}

# Fetches the platform package with `npm pack`, checks it, and unpacks it where npm ci would have.
fetch_platform_package() {
    local tmp tarball got
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' RETURN
    (cd "$tmp" && npm pack --silent "$package@$want" >/dev/null) || return 1
    tarball="$(ls "$tmp"/*.tgz)"
    got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
    if [ "$got" != "$(integrity)" ]; then
        echo "$package@$want: the tarball's integrity $got is not the one package-lock.json pins" >&2
        return 1
    fi
    rm -rf "$dest/node_modules/$package"
    mkdir -p "$dest/node_modules/$package"
    tar -xzf "$tarball" -C "$dest/node_modules/$package" --strip-components=1
}

if installed; then
    exit 0
fi
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
(cd "$dest" && SCARF_ANALYTICS=false npm ci --include=optional --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
if installed; then
    exit 0
fi
echo "npm ci left no restate-server $want binary for $platform in $dest; fetching $package on its own" >&2
for attempt in 1 2 3; do
    if fetch_platform_package && installed; then
        exit 0
    fi
    echo "attempt $attempt to fetch $package@$want failed" >&2
    sleep $((attempt * 5))
done
echo "no runnable restate-server $want in $dest. What is there:" >&2
ls -lR "$dest/node_modules/@restatedev" >&2 || true
for bin in "$dest"/node_modules/@restatedev/restate-server-*/bin/restate-server; do
    [ -e "$bin" ] && { echo "$bin --version:" >&2; "$bin" --version >&2 || true; }
done
exit 1
