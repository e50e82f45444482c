// Builds cmd/assistant (once per test process), creates API keys in a
// temporary data directory, and starts `assistant serve` on a free
// loopback port: the real services the tests of real.test.ts and
// real-retry.test.ts talk to.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface RealService {
  baseURL: string;
  /** A key for the ordinary tests. */
  key: string;
  /** A second key, spent by the rate-limit test. */
  key2: string;
  /** What the service printed so far (stdout and stderr: its JSON log lines). */
  output(): string;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  /**
   * ASSISTANT_* settings on top of the defaults (the builtin provider, a
   * data directory of its own, the loopback address).
   */
  env?: Record<string, string>;
}

/** The repository root: the first directory above this file holding go.mod (../../ of sdk/typescript). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "go.mod")) && existsSync(join(dir, "cmd", "assistant"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("the repository root (go.mod) was not found above " + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** A port nothing listens on now: listen on port 0, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let built: Promise<string> | undefined;

/** Builds cmd/assistant once per process; the binary's directory is removed when the process exits. */
function buildService(): Promise<string> {
  built ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "assistant-ts-sdk-bin-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const bin = join(dir, "assistant");
    try {
      await run("go", ["build", "-o", bin, "./cmd/assistant"], { cwd: repoRoot(), maxBuffer: 16 << 20 });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`building the service: ${err.message}\n${err.stderr ?? ""}`);
    }
    return bin;
  })();
  return built;
}

export async function startService(opts: ServiceOptions = {}): Promise<RealService> {
  const bin = await buildService();
  const dir = await mkdtemp(join(tmpdir(), "assistant-ts-sdk-test-"));
  // The service reads ASSISTANT_* variables; the caller's must not change it.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ASSISTANT_")));
  const baseEnv: NodeJS.ProcessEnv = {
    ...inherited,
    ASSISTANT_DATA_DIR: join(dir, "data"),
    ASSISTANT_LLM_PROVIDER: "builtin",
    ...opts.env,
  };
  const createKey = async (name: string): Promise<string> => {
    const { stdout } = await run(bin, ["keys", "create", "--workspace", "w", "--name", name, "--json"], { env: baseEnv });
    const key = (JSON.parse(stdout) as { key?: string }).key;
    if (!key) throw new Error(`no key in ${stdout}`);
    return key;
  };
  const key = await createKey("t");
  const key2 = await createKey("t2");

  // A free port may be taken between the probe and serve's listen: retry.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}`;
    const child = spawn(bin, ["serve"], {
      env: { ...baseEnv, ASSISTANT_ADDR: `127.0.0.1:${port}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    let exited = false;
    child.on("exit", () => (exited = true));
    const stop = async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    };
    const deadline = Date.now() + 60_000;
    let ready = false;
    while (!exited && Date.now() < deadline) {
      try {
        const h = await fetch(`${baseURL}/healthz`);
        await h.body?.cancel();
        if (h.ok) {
          // Ready when the knowledge is loaded.
          const s = await fetch(`${baseURL}/api/assistant/v1/knowledge-stats`);
          if (s.ok && ((await s.json()) as { total: number }).total > 0) {
            ready = true;
            break;
          }
        }
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    if (ready) return { baseURL, key, key2, output: () => output, stop };
    await stopChild(child);
    if (attempt >= 3 || !/address already in use/i.test(output)) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`the service did not start on ${baseURL}:\n${output}`);
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
