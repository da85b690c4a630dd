#!/usr/bin/env bash
# Checks that a newcomer gets a binary and a working MCP host configuration
# by following README.md and docs/mcp.md: it runs the go install command
# README.md documents, exactly as written, against a module proxy that
# serves this checkout's committed tree as a version (.ci/modproxy; the
# dependencies come from the usual proxy or the module cache), puts the
# installed custody on PATH, and runs every MCP client configuration of
# docs/mcp.md as written (mcpserver/testdata/node/docs.test.mjs). Then it
# installs the Python client with pip, without an index (no network).
# Run it from the repository root: bash .ci/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."

cmd=$(grep -o 'go install github.com/custody-mem/custody/cmd/custody@[A-Za-z0-9.+-]*' README.md | head -n 1)
if [ -z "$cmd" ]; then
  echo "install.sh: README.md documents no 'go install github.com/custody-mem/custody/cmd/custody@VERSION'" >&2
  exit 1
fi

# The version names the commit: the module cache keeps every version it
# has fetched, so a fixed one would install whatever tree was served first.
# The served version is taken out of the module cache again at exit.
ci_version="v0.1.0-ci.g$(git rev-parse --short=12 HEAD)"
TMP=$(mktemp -d)
cleanup() {
  rm -rf "$TMP"
  local cache
  cache=$(go env GOMODCACHE)
  if [ -d "$cache/github.com/custody-mem/custody@$ci_version" ]; then
    chmod -R u+w "$cache/github.com/custody-mem/custody@$ci_version"
  fi
  rm -rf "$cache/github.com/custody-mem/custody@$ci_version" "$cache/cache/download/github.com/custody-mem/custody/@v/$ci_version".*
}
trap cleanup EXIT
go run ./.ci/modproxy -dir "$TMP/proxy" -version "$ci_version"

echo "== $cmd"
# shellcheck disable=SC2086 # the documented command, split into words as a shell would
env GOPROXY="file://$TMP/proxy,$(go env GOPROXY)" GONOSUMDB=github.com/custody-mem/custody GOFLAGS= GOBIN="$TMP/bin" $cmd
version=$("$TMP/bin/custody" version)
echo "$version"
case "$version" in
  "custody $ci_version "*) ;;
  *) echo "install.sh: the installed custody says '$version', not the version it was installed at" >&2; exit 1 ;;
esac

echo "== docs/mcp.md's MCP client configurations, with the installed custody on PATH"
(cd mcpserver/testdata/node && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && CUSTODY_PATH="$TMP/bin" node --test docs.test.mjs)

echo "== pip install ./clients/python, with no package index"
python3 -m venv "$TMP/venv"
"$TMP/venv/bin/pip" install --quiet --no-index ./clients/python
"$TMP/venv/bin/python" -c 'import custody, sys; print("custody", custody.__version__, "from", custody.__file__); sys.exit(custody.Client is None)'
"$TMP/venv/bin/pip" wheel --quiet --no-index --no-deps -w "$TMP/wheels" ./clients/python
ls "$TMP/wheels"
echo "install: all checks passed"
