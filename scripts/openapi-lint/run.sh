#!/usr/bin/env bash
# Checks the API contract, internal/api/testdata/openapi.golden.json (the
# checked-in copy that TestOpenAPIGolden holds the served document to),
# with the tools pinned in package-lock.json (installed into this
# directory's ignored node_modules):
#   1. Redocly's recommended rules;
#   2. Spectral's spectral:oas ruleset (.spectral.yaml);
#   3. openapi-typescript's types (default options) and a typed
#      openapi-fetch client (typescript/client.ts) compiled with tsc --strict.
# Exits non-zero on any error; the warnings README.md lists are expected.
set -euo pipefail
cd "$(dirname "$0")"
doc=../../internal/api/testdata/openapi.golden.json

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npm ci --no-audit --no-fund --loglevel=error
echo "== redocly $(./node_modules/.bin/redocly --version)"
./node_modules/.bin/redocly lint --extends=recommended --format=stylish "$doc"
echo "== spectral $(./node_modules/.bin/spectral --version)"
./node_modules/.bin/spectral lint --ruleset .spectral.yaml --fail-severity=error "$doc"
echo "== openapi-typescript + openapi-fetch, tsc --strict"
./node_modules/.bin/openapi-typescript "$doc" -o typescript/schema.d.ts
./node_modules/.bin/tsc -p typescript/tsconfig.json
echo "openapi-lint: ok"
