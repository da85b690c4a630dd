#!/usr/bin/env bash
# Runs the Python and TypeScript client test suites against real custody
# servers built from this checkout. The TypeScript suite also checks that
# clients/typescript/src/openapi.ts is what openapi-typescript makes of the
# live server's OpenAPI document. The LangGraph.js store runs a real graph
# on a server and answers as LangGraph's InMemoryStore does on generated
# call sequences (fast-check). custody mcp --memory-graph and the reference
# MCP memory server answer the same generated tool calls. Mem0's own client
# (mem0ai's MemoryClient) runs against custody's /mem0 routes. With
# CUSTODY_TEST_POSTGRES set (.ci/run sets it), the store's item tests also
# run on PostgreSQL. The Python client is installed with its verify extra
# (cryptography, fetched by pip when the system has none). Run it from the
# repository root:
#   bash .ci/clients.sh
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in python3 node npm go; do
  if ! command -v "$tool" >/dev/null; then
    echo "clients.sh: $tool is not installed (the client suites need Python 3.9+, Node.js 20+ and Go)" >&2
    exit 1
  fi
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/custody" ./cmd/custody
export CUSTODY_BIN="$TMP/custody"

echo "== clients: Python and TypeScript"
echo "== Python client: python3 $(python3 -c 'import sys; print(sys.version.split()[0])')"
# The log pin (custody.Pin) needs the verify extra (cryptography): installed
# as users install it, pip install 'custody[verify]', in a virtualenv that
# also sees the system's packages (where cryptography is there already, pip
# downloads nothing). The suite runs on the checkout's sources; one of its
# tests hides cryptography to check the rest of the client works without it.
python3 -m venv --system-site-packages "$TMP/pyvenv"
"$TMP/pyvenv/bin/pip" install --quiet --disable-pip-version-check './clients/python[verify]'
(cd clients/python && PYTHONDONTWRITEBYTECODE=1 "$TMP/pyvenv/bin/python" -m unittest discover -s tests -t . -v)

echo "== TypeScript client: node $(node --version)"
(cd clients/typescript && npm ci --no-audit --no-fund && npm test)

echo "== LangGraph.js store on @custody/client"
(cd clients/langgraph && npm ci --no-audit --no-fund && npm test)

echo "== custody mcp --memory-graph against @modelcontextprotocol/server-memory"
(cd memgraph/testdata/node && npm ci --no-audit --no-fund && node --test)

echo "== Mem0's MemoryClient (mem0ai) against custody's /mem0 routes"
(cd mem0api/testdata/node && npm ci --no-audit --no-fund && node --test)
