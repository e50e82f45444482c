// Builds cmd/assistant once, creates API keys in a temporary data
// directory, and starts `assistant serve` (builtin model) on a free
// loopback port: the real service the official clients talk to.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The per-key limit the test service runs with: small, so the shared-limit test spends it quickly. */
export const KEY_LIMIT = 10;

/** The repository root: the first directory above this file holding go.mod and cmd/assistant. */
function repoRoot() {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "go.mod")) && existsSync(join(dir, "cmd", "assistant"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("the repository root (go.mod) was not found above " + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** A port nothing listens on now: listen on port 0, read it, close. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the service. Returns { baseURL, keys: {name: plaintext}, stop() }.
 * @param {string[]} keyNames one key is created per name, each with its own budget
 */
export async function startService(keyNames) {
  const dir = await mkdtemp(join(tmpdir(), "assistant-clients-test-"));
  const bin = join(dir, "assistant");
  try {
    await run("go", ["build", "-o", bin, "./cmd/assistant"], { cwd: repoRoot(), maxBuffer: 16 << 20 });
  } catch (e) {
    throw new Error(`building the service: ${e.message}\n${e.stderr ?? ""}`);
  }
  // The service reads ASSISTANT_* variables; the caller's must not change it.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ASSISTANT_")));
  const env = {
    ...inherited,
    ASSISTANT_DATA_DIR: join(dir, "data"),
    ASSISTANT_LLM_PROVIDER: "builtin",
    ASSISTANT_CHAT_RATE_LIMIT: String(KEY_LIMIT),
  };
  const keys = {};
  for (const name of keyNames) {
    const { stdout } = await run(bin, ["keys", "create", "--workspace", "clients", "--name", name, "--json"], { env });
    keys[name] = JSON.parse(stdout).key;
    if (!keys[name]) throw new Error(`no key in ${stdout}`);
  }

  // A free port may be taken between the probe and serve's listen: retry.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}`;
    const child = spawn(bin, ["serve"], { env: { ...env, ASSISTANT_ADDR: `127.0.0.1:${port}` }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d.toString()));
    child.stderr.on("data", (d) => (output += d.toString()));
    let exited = false;
    child.on("exit", () => (exited = true));
    const stop = async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    };
    const deadline = Date.now() + 60_000;
    while (!exited && Date.now() < deadline) {
      try {
        // Ready when the knowledge is loaded.
        const s = await fetch(`${baseURL}/api/assistant/v1/knowledge-stats`);
        if (s.ok && (await s.json()).total > 0) return { baseURL, keys, stop };
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    await stopChild(child);
    if (attempt >= 3 || !/address already in use/i.test(output)) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`the service did not start on ${baseURL}:\n${output}`);
    }
  }
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", () => r()));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** POST /api/v1/chat, the native endpoint, as JSON. */
export async function nativeChat(baseURL, key, body) {
  const r = await fetch(`${baseURL}/api/v1/chat`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}
