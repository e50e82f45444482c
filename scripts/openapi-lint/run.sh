#!/usr/bin/env bash
# Lints the API contract with Redocly's recommended rules: installs the
# pinned @redocly/cli (package-lock.json) into this directory's ignored
# node_modules and lints internal/api/testdata/openapi.golden.json, the
# checked-in copy that TestOpenAPIGolden holds the served document to.
# Prints the problems; exits non-zero on any error (warnings pass).
set -euo pipefail
cd "$(dirname "$0")"

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npm ci --no-audit --no-fund --loglevel=error
./node_modules/.bin/redocly --version
./node_modules/.bin/redocly lint --extends=recommended --format=stylish ../../internal/api/testdata/openapi.golden.json
