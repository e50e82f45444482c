// Tests against a tiny local HTTP server that answers what the test
// scripts: the 502s, retry edges and stream failures a real service does
// not produce on demand.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { after, before, beforeEach, describe, test } from "node:test";
import {
  AssistantClient,
  AssistantError,
  IncompleteStreamError,
  isUnavailable,
  ProblemType,
  type ChatEvent,
} from "../src/index.js";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let baseURL: string;
let handlers: Handler[];
let seen: Seen[];

/** Answers the next requests with these handlers in turn; the last one repeats. */
function script(...hs: Handler[]) {
  handlers = hs;
}

function problem(status: number, type: string, title: string, headers: Record<string, string> = {}, extra: object = {}): Handler {
  return (_req, _body, res) => {
    res.writeHead(status, { "Content-Type": "application/problem+json", "X-Request-Id": "req-1", ...headers });
    res.end(JSON.stringify({ type, title, status, detail: `${title} (fake)`, ...extra }));
  };
}

function json(value: unknown): Handler {
  return (_req, _body, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(value));
  };
}

/** Writes the chunks of an event stream as separate writes. */
function sse(chunks: string[]): Handler {
  return (_req, _body, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
    let i = 0;
    const next = () => {
      if (i < chunks.length) {
        res.write(chunks[i++]);
        setTimeout(next, 2);
      } else {
        res.end();
      }
    };
    next();
  };
}

const bad502 = problem(502, ProblemType.unavailable, "Bad Gateway", { "Retry-After": "5" });
const answer = {
  response: "Exploit the constraint first [framework:theory-of-constraints].",
  reasoning_trace: [{ hop: 0, tool: "search", input_summary: "packing", result_summary: "3 hits" }],
  rag_hits: [],
  confidence: { score: 1, level: "high", totalClaims: 1, verifiedClaims: 1, verdicts: [] },
};

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const h = handlers.length > 1 ? handlers.shift()! : handlers[0]!;
      h(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  baseURL = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen = [];
  handlers = [json({})];
});

function client(extra: Partial<ConstructorParameters<typeof AssistantClient>[0]> = {}) {
  const waits: number[] = [];
  const c = new AssistantClient({
    baseURL,
    apiKey: "sk_test",
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...extra,
  });
  return { c, waits };
}

describe("retries", () => {
  test("a 502 is retried with a capped, jittered exponential backoff, then surfaced as an AssistantError", async () => {
    script(bad502);
    const { c, waits } = client({ retry: { maxAttempts: 4, baseBackoffMs: 100, maxBackoffMs: 300, jitter: 0.5 } });
    const err = await c.chat({ message: "hi" }).then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(err instanceof AssistantError);
    assert.ok(isUnavailable(err));
    assert.equal(err.status, 502);
    assert.equal(err.type, ProblemType.unavailable);
    assert.equal(err.detail, "Bad Gateway (fake)");
    assert.equal(err.requestId, "req-1");
    assert.equal(err.retryAfterMs, 5000);
    assert.equal(seen.length, 4, "bounded attempts");
    // 100, 200, 300 (capped), each less a jitter of 0.5 * 0.5.
    assert.deepEqual(waits, [75, 150, 225]);
    // The request is the same each time.
    for (const s of seen) {
      assert.equal(s.method, "POST");
      assert.equal(s.url, "/api/v1/chat");
      assert.equal(s.headers.authorization, "Bearer sk_test");
      assert.equal(s.headers["content-type"], "application/json");
      assert.deepEqual(JSON.parse(s.body), { message: "hi" });
    }
  });

  test("a 502 then a 200 returns the answer", async () => {
    script(bad502, json({ score: 1, level: "high", totalClaims: 0, verifiedClaims: 0, verdicts: [] }));
    const { c, waits } = client({ retry: { jitter: 0 } });
    const conf = await c.verify({ text: "x" });
    assert.equal(conf.level, "high");
    assert.deepEqual(waits, [500]);
    assert.equal(seen.length, 2);
  });

  test("the default policy makes 3 attempts with jittered waits of at most 500 and 1000 ms", async () => {
    script(bad502);
    const { c, waits } = client({ random: Math.random });
    await assert.rejects(c.chat({ message: "hi" }), (e) => isUnavailable(e));
    assert.equal(seen.length, 3);
    assert.equal(waits.length, 2);
    assert.ok(waits[0]! >= 250 && waits[0]! <= 500, String(waits));
    assert.ok(waits[1]! >= 500 && waits[1]! <= 1000, String(waits));
  });

  test("a 429 waits exactly its Retry-After, then retries", async () => {
    script(problem(429, ProblemType.rateLimited, "Too Many Requests", { "Retry-After": "7", RateLimit: '"chat";r=0;t=7' }, { retry_after_seconds: 7 }), json(answer));
    const { c, waits } = client();
    const resp = await c.chat({ message: "hi" });
    assert.deepEqual(resp, answer);
    assert.deepEqual(waits, [7000]);
  });

  test("a 429 asking for more than maxRetryAfterMs is thrown at once", async () => {
    script(problem(429, ProblemType.rateLimited, "Too Many Requests", { "Retry-After": "90" }));
    const { c, waits } = client();
    const err = await c.chat({ message: "hi" }).then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(err instanceof AssistantError && err.status === 429 && err.retryAfter === 90);
    assert.deepEqual(waits, []);
    assert.equal(seen.length, 1);
  });

  for (const [status, type] of [
    [400, ProblemType.validation],
    [401, ProblemType.unauthorized],
    [413, ProblemType.tooLarge],
    [503, ProblemType.unavailable],
  ] as const) {
    test(`a ${status} is never retried`, async () => {
      script(problem(status, type, "no"), json(answer));
      const { c, waits } = client();
      const err = await c.chat({ message: "hi" }).then(() => assert.fail("no error"), (e: unknown) => e);
      assert.ok(err instanceof AssistantError && err.status === status && err.type === type);
      assert.equal(seen.length, 1);
      assert.deepEqual(waits, []);
    });
  }

  test("retry: false and the endpoints other than chat and verify make one request", async () => {
    script(bad502);
    const { c: noRetry, waits } = client({ retry: false });
    await assert.rejects(noRetry.verify({ text: "x" }), (e) => isUnavailable(e));
    assert.equal(seen.length, 1);
    const { c } = client();
    await assert.rejects(c.search({ q: "x" }), (e) => isUnavailable(e));
    await assert.rejects(c.resolve([{ type: "paper", slug: "x" }]), (e) => isUnavailable(e));
    assert.equal(seen.length, 3);
    assert.deepEqual(waits, []);
  });

  test("an abort during the wait ends the call with the abort reason", async () => {
    script(bad502);
    const ctl = new AbortController();
    const c = new AssistantClient({ baseURL, retry: { baseBackoffMs: 60_000, maxBackoffMs: 60_000 } });
    const call = c.chat({ message: "hi" }, { signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error("stop")), 50);
    await assert.rejects(call, /stop/);
    assert.equal(seen.length, 1);
  });

  test("a body that is not a problem document is kept raw", async () => {
    script((_req, _body, res) => {
      res.writeHead(500, { "Content-Type": "text/plain" });
      res.end("boom");
    });
    const { c } = client();
    const err = await c.catalog().then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(err instanceof AssistantError);
    assert.equal(err.status, 500);
    assert.equal(err.problem, null);
    assert.equal(err.body, "boom");
    assert.match(err.message, /^assistant: 500 /);
  });
});

describe("requests", () => {
  test("query parameters, paths and the trailing slash of baseURL", async () => {
    script(json({ query: "q", results: [] }));
    const c = new AssistantClient({ baseURL: baseURL + "/", apiKey: "k" });
    await c.search({ q: "a b&c", type: "paper", limit: 5 });
    await c.leaderboard({ days: 7 });
    await c.leaderboard();
    await c.knowledgeStats();
    await c.preview({ vertical: "saas", archetype_id: "a" });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      [
        "GET /api/assistant/v1/search?q=a+b%26c&type=paper&limit=5",
        "GET /api/assistant/v1/leaderboard?days=7",
        "GET /api/assistant/v1/leaderboard",
        "GET /api/assistant/v1/knowledge-stats",
        "POST /api/assistant/v1/preview",
      ],
    );
    assert.equal(seen[0]!.headers.accept, "application/json");
  });

  test("resolveAll sends at most 100 tokens a request, duplicates once", async () => {
    script((_req, body, res) => {
      const { tokens } = JSON.parse(body) as { tokens: { type: string; slug: string }[] };
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ resolved: [], unresolved: tokens.map((t) => ({ ...t, reason: "not_found" })) }));
    });
    const { c } = client();
    const tokens = Array.from({ length: 250 }, (_, i) => ({ type: "blog" as const, slug: `s${i % 205}` }));
    const res = await c.resolveAll(tokens);
    assert.deepEqual(seen.map((s) => (JSON.parse(s.body) as { tokens: unknown[] }).tokens.length), [100, 100, 5]);
    assert.equal(res.unresolved.length, 205);
    assert.deepEqual(res.unresolved.map((u) => u.slug), Array.from({ length: 205 }, (_, i) => `s${i}`));
  });
});

describe("chatStream", () => {
  async function collect(it: AsyncIterable<ChatEvent>): Promise<{ events: ChatEvent[]; error?: unknown }> {
    const events: ChatEvent[] = [];
    try {
      for await (const ev of it) events.push(ev);
    } catch (error) {
      return { events, error };
    }
    return { events };
  }

  test("parses hop, delta and final events split across chunks, with comments and CRLF", async () => {
    const hop = JSON.stringify(answer.reasoning_trace[0]);
    script(
      sse([
        ": keep-alive\n\n",
        `event: hop\r\ndata: ${hop.slice(0, 10)}`,
        `${hop.slice(10)}\r\n\r\n`,
        'event: delta\ndata: {"text":"Exploit the constraint first "}\n\n',
        'event: delta\ndata: {"text":"[framework:theory-of-constraints]."}\n\nevent: unknown\ndata: {}\n\n',
        `event: final\ndata: ${JSON.stringify(answer)}\n\n`,
      ]),
    );
    const { c } = client();
    const { events, error } = await collect(c.chatStream({ message: "hi" }));
    assert.equal(error, undefined);
    assert.deepEqual(events, [
      { type: "hop", trace: answer.reasoning_trace[0] },
      { type: "delta", text: "Exploit the constraint first " },
      { type: "delta", text: "[framework:theory-of-constraints]." },
      { type: "final", result: answer },
    ]);
    assert.equal(seen[0]!.headers.accept, "text/event-stream");
  });

  test("an error event is yielded, then thrown", async () => {
    const p = { type: ProblemType.unavailable, title: "Bad Gateway", status: 502, detail: "provider down", request_id: "r9" };
    script(sse(['event: delta\ndata: {"text":"a"}\n\n', `event: error\ndata: ${JSON.stringify(p)}\n\n`]));
    const { c } = client();
    const { events, error } = await collect(c.chatStream({ message: "hi" }));
    assert.equal(events.length, 2);
    const last = events[1]!;
    assert.ok(last.type === "error");
    assert.equal(last.error.status, 502);
    assert.equal(last.error.requestId, "r9");
    assert.equal(error, last.error);
  });

  test("a stream cut before its final event throws IncompleteStreamError", async () => {
    script(sse(['event: delta\ndata: {"text":"a"}\n\n']));
    const { c } = client();
    const { events, error } = await collect(c.chatStream({ message: "hi" }));
    assert.equal(events.length, 1);
    assert.ok(error instanceof IncompleteStreamError);
  });

  test("a 502 before the stream starts is retried, then thrown", async () => {
    script(bad502, bad502, sse([`event: final\ndata: ${JSON.stringify(answer)}\n\n`]));
    const { c, waits } = client({ retry: { jitter: 0 } });
    const { events, error } = await collect(c.chatStream({ message: "hi" }));
    assert.equal(error, undefined);
    assert.deepEqual(events, [{ type: "final", result: answer }]);
    assert.deepEqual(waits, [500, 1000]);

    script(bad502);
    seen = [];
    const second = await collect(c.chatStream({ message: "hi" }));
    assert.ok(isUnavailable(second.error));
    assert.equal(seen.length, 3);
  });

  test("an answer that is not an event stream is an error", async () => {
    script(json(answer));
    const { c } = client();
    const { error } = await collect(c.chatStream({ message: "hi" }));
    assert.match(String(error), /expected an event stream/);
  });
});

describe("asynchronous turns", () => {
  test("chatAsync sends Prefer: respond-async and returns the queued turn; turn polls it", async () => {
    script(
      json({ id: "turn_1", state: "queued", submitted_at: "2026-11-26T15:04:05Z" }),
      json({ id: "turn_1", state: "succeeded", submitted_at: "2026-11-26T15:04:05Z", response: { response: "done" } }),
    );
    const { c } = client();
    const queued = await c.chatAsync({ message: "hi" });
    assert.equal(queued.state, "queued");
    assert.equal(seen[0].headers["prefer"], "respond-async");
    assert.equal(seen[0].url, "/api/v1/chat");
    const done = await c.turn("turn_1");
    assert.equal(done.state, "succeeded");
    assert.equal(done.response?.response, "done");
    assert.equal(seen[1].method, "GET");
    assert.equal(seen[1].url, "/api/v1/chat/turns/turn_1");
    assert.equal(seen[1].headers["prefer"], undefined);
  });
});
