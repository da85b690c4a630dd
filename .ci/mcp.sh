#!/usr/bin/env bash
# Drives custody's MCP server with the official TypeScript MCP client
# (@modelcontextprotocol/sdk, pinned in mcpserver/testdata/node): over stdio
# (custody mcp) and over streamable HTTP (custody serve, /mcp). Run it from
# the repository root: bash .ci/mcp.sh
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "mcp.sh: $tool is not installed; install Node.js 20 or later" >&2
    exit 1
  fi
done
echo "node $(node --version), npm $(npm --version)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

go build -o "$TMP/custody" ./cmd/custody

cd mcpserver/testdata/node
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
CUSTODY_BIN="$TMP/custody" node --test
