#!/usr/bin/env bash
# Packs the SDK (npm pack, which builds it) and uses the tarball from four
# fresh projects, as a user of the published package would: plain ESM
# (import), plain CommonJS (require), and TypeScript projects compiled to
# ESM and to CommonJS under --strict with exactOptionalPropertyTypes.
# Each calls the client against a fake fetch. Run by ../run-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
sdk=$PWD
tsc=$sdk/node_modules/.bin/tsc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tarball=$(npm pack --silent --pack-destination "$work" | tail -1)
echo "packed $tarball"
tar -tzf "$work/$tarball" | sort > "$work/files.txt"
for f in package/LICENSE package/README.md package/dist/src/index.js package/dist/src/index.d.ts package/dist/cjs/index.js package/dist/cjs/index.d.ts package/dist/cjs/package.json; do
  grep -qx "$f" "$work/files.txt" || { echo "the tarball lacks $f" >&2; exit 1; }
done

# The program every project runs (as JS or TS): stats through a fake fetch.
body='
const fake = async (url, init) => new Response(JSON.stringify({ total: 3, frameworks: 1, papers: 1, blogs: 1 }), {
  status: 200, headers: { "Content-Type": "application/json" },
});
const client = new AssistantClient({ baseURL: "http://assistant.test", apiKey: KEY, fetch: fake });
const stats = await client.knowledgeStats();
if (stats.total !== 3) throw new Error("stats " + JSON.stringify(stats));
const tokens = findTokens("See [framework:theory-of-constraints].");
if (tokens.length !== 1 || tokens[0]?.slug !== "theory-of-constraints") throw new Error("tokens " + JSON.stringify(tokens));
console.log(MODULE_KIND + ": ok");
'
tsbody=${body//async (url, init)/async (_url: unknown, _init?: unknown)}

project() { # name, package.json type
  mkdir -p "$work/$1"
  printf '{"name":"%s","private":true,"type":"%s"}\n' "$1" "$2" > "$work/$1/package.json"
  (cd "$work/$1" && npm install --no-audit --no-fund --loglevel=error "$work/$tarball")
}

project esm module
{ echo 'import { AssistantClient, findTokens } from "@constraintlab/assistant";'
  echo 'const KEY = process.env.ASSISTANT_KEY; const MODULE_KIND = "esm";'
  echo "$body"; } > "$work/esm/index.js"
(cd "$work/esm" && node index.js)

project cjs commonjs
{ echo 'const { AssistantClient, findTokens } = require("@constraintlab/assistant");'
  echo 'const KEY = process.env.ASSISTANT_KEY; const MODULE_KIND = "cjs";'
  echo '(async () => {'; echo "$body"; echo '})().catch((e) => { console.error(e); process.exit(1); });'; } > "$work/cjs/index.js"
(cd "$work/cjs" && node index.js)

tsproject() { # name, type, module
  project "$1" "$2"
  cat > "$work/$1/tsconfig.json" <<JSON
{ "compilerOptions": { "target": "ES2022", "module": "$3", "moduleResolution": "$3", "lib": ["ES2022", "DOM"],
  "strict": true, "exactOptionalPropertyTypes": true, "noUncheckedIndexedAccess": true, "types": [], "outDir": "out" },
  "files": ["index.ts"] }
JSON
}

tsproject ts-esm module NodeNext
{ echo 'import { AssistantClient, findTokens, type ChatRequest } from "@constraintlab/assistant";'
  echo 'declare const process: { env: Record<string, string | undefined> };'
  echo 'const KEY: string | undefined = process.env["ASSISTANT_KEY"]; const MODULE_KIND = "ts-esm";'
  echo 'const req: ChatRequest = { message: "hi", vertical: process.env["VERTICAL"] }; void req;'
  echo "$tsbody"; } > "$work/ts-esm/index.ts"
# The README's example compiles as it is written.
{ echo 'declare const process: { env: Record<string, string | undefined>; stdout: { write(s: string): void } }; export {};'
  awk '/^```ts$/{on=1; next} /^```$/{if (on) exit} on' README.md; } > "$work/ts-esm/readme.ts"
sed -i 's/"files": \["index.ts"\]/"files": ["index.ts", "readme.ts"]/' "$work/ts-esm/tsconfig.json"
(cd "$work/ts-esm" && "$tsc" -p . && node out/index.js)

tsproject ts-cjs commonjs Node16
{ echo 'import { AssistantClient, findTokens, AssistantError } from "@constraintlab/assistant";'
  echo 'declare const process: { env: Record<string, string | undefined>; exit(code: number): never };'
  echo 'const KEY: string | undefined = process.env["ASSISTANT_KEY"]; const MODULE_KIND = "ts-cjs"; void AssistantError;'
  echo 'async function main(): Promise<void> {'; echo "$tsbody"; echo '}'
  echo 'main().catch((e: unknown) => { console.error(e); process.exit(1); });'; } > "$work/ts-cjs/index.ts"
(cd "$work/ts-cjs" && "$tsc" -p . && grep -q 'require("@constraintlab/assistant")' out/index.js && node out/index.js)
echo "consumers: ok"
