#!/usr/bin/env bash
# Installs the TypeScript SDK's pinned dev dependencies and runs its tests:
# tsc compiles src/ and test/ to dist/, then node's test runner runs the
# compiled tests (the real-service tests build ../../cmd/assistant with go).
# Then packs the package and uses it from fresh ESM and CommonJS projects
# (consumers/check.sh). Prints node's test summary; exits non-zero when a
# test fails.
set -euo pipefail
cd "$(dirname "$0")"

node --version
npm --version
npm ci --no-audit --no-fund --loglevel=error
npm test
# The packed tarball, installed and used from fresh ESM, CommonJS and
# TypeScript (ESM and CommonJS) projects.
bash consumers/check.sh
