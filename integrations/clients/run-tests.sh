#!/usr/bin/env bash
# Runs the MCP server and the OpenAI-compatible facade against the official
# clients: installs the pinned @modelcontextprotocol/sdk and openai
# (package-lock.json), then node's test runner builds ../../cmd/assistant
# with go, starts `assistant serve` with the builtin model and drives it.
# Prints node's test summary; exits non-zero when a test fails.
set -euo pipefail
cd "$(dirname "$0")"

node --version
npm --version
# One retry: a registry timeout should not fail CI.
npm ci --no-audit --no-fund --loglevel=error || { sleep 5; npm ci --no-audit --no-fund --loglevel=error; }
npm test
