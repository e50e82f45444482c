// Tests against a real `assistant serve` (see service.ts), built from
// this repository and started once for the file.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  AssistantClient,
  AssistantError,
  findTokens,
  isRateLimited,
  isUnauthorized,
  isValidation,
  parseRateLimit,
  ProblemType,
  tokenString,
  type ChatRequest,
  type ChatResponse,
  type Token,
} from "../src/index.js";
import { startService, type RealService } from "./service.js";

const packingQuestion = "Our packing station cannot keep up and orders ship late";

/** A fetch that counts requests whose path ends with suffix and records the Retry-After of each response. */
function recordingFetch(suffix = "") {
  const rec = { calls: 0, retryAfter: [] as (string | null)[] };
  const f: typeof fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (new URL(url).pathname.endsWith(suffix)) rec.calls++;
    const resp = await fetch(input, init);
    rec.retryAfter.push(resp.headers.get("Retry-After"));
    return resp;
  };
  return { rec, fetch: f };
}

describe("against a real assistant serve", { timeout: 120_000 }, () => {
  let svc: RealService;
  let client: AssistantClient;
  let anon: AssistantClient;

  before(async () => {
    svc = await startService();
    client = new AssistantClient({ baseURL: svc.baseURL + "/", apiKey: svc.key });
    anon = new AssistantClient({ baseURL: svc.baseURL });
  });
  after(async () => {
    await svc?.stop();
  });

  test("chat as JSON and streamed: the streamed final equals the JSON answer", async () => {
    const req: ChatRequest = { message: packingQuestion, mode: "operator", vertical: "ecommerce", source: "ts-sdk-test" };
    const resp = await client.chat(req);
    assert.ok(findTokens(resp.response).length > 0, "an answer without citation tokens");
    assert.ok(resp.reasoning_trace.length > 0 && resp.rag_hits.length > 0);
    assert.ok(resp.confidence.totalClaims > 0);
    assert.equal(resp.confidence.verdicts.length, resp.confidence.totalClaims);

    let hops = 0;
    let text = "";
    const kinds = new Set<string>();
    let final: ChatResponse | undefined;
    for await (const ev of client.chatStream(req)) {
      kinds.add(ev.type);
      switch (ev.type) {
        case "hop":
          assert.equal(ev.trace.hop, hops, "hops arrive in order");
          hops++;
          break;
        case "delta":
          text += ev.text;
          break;
        case "final":
          final = ev.result;
          break;
        case "error":
          assert.fail(`error event: ${ev.error.message}`);
      }
    }
    assert.ok(final, "no final event");
    assert.ok(kinds.has("hop") && kinds.has("delta"), `events seen: ${[...kinds]}`);
    assert.deepEqual(final, resp);
    assert.equal(text, final.response, "the deltas add up to the answer");
    assert.equal(hops, final.reasoning_trace.length);

    // Breaking out early is allowed and closes the stream.
    for await (const ev of client.chatStream(req)) {
      assert.ok(ev.type);
      break;
    }
  });

  test("verify: a wrong year for Little's 1961 paper is contradicted", async () => {
    const conf = await client.verify({
      text:
        "Little proved that work in progress equals throughput times lead time [paper:little-1961-queuing-formula]. " +
        "Little published the proof of the queuing formula in 1975 [paper:little-1961-queuing-formula].",
      threshold: 0.6,
      source: "ts-sdk-test",
    });
    assert.equal(conf.totalClaims, 2, JSON.stringify(conf));
    assert.equal(conf.verdicts.length, 2);
    assert.equal(conf.verdicts[1]!.status, "contradicted", JSON.stringify(conf.verdicts[1]));
    assert.equal(conf.verdicts[1]!.evidence?.slug, "little-1961-queuing-formula");
    assert.notEqual(conf.verdicts[0]!.status, "contradicted");

    // Each evidence locates its passage in the resolved card: the field's
    // text sliced at start and end (UTF-16 indices) is the quote.
    const { resolved } = await client.resolve([{ type: "paper", slug: "little-1961-queuing-formula" }]);
    const card = resolved[0] as unknown as Record<string, unknown>;
    for (const v of conf.verdicts) {
      const e = v.evidence;
      if (!e) continue;
      const m = /^([a-z_]+)(?:\[(\d+)\])?$/.exec(e.field);
      assert.ok(m, `field ${e.field}`);
      let value = card[m[1]!];
      if (m[2] !== undefined) value = (value as unknown[])[Number(m[2])];
      const text = typeof value === "number" ? String(value) : String(value);
      assert.equal(text.slice(e.start, e.end), e.quote, JSON.stringify(e));
      assert.ok(e.quote.length > 0);
    }
    assert.equal(conf.verdicts[1]!.evidence?.field, "year");
    assert.equal(conf.verdicts[1]!.evidence?.quote, "1961");

    // A citation that does not resolve is a typed 400 naming it.
    const err = await client
      .verify({ text: "Queues grow when utilization approaches one.", citations: ["paper:nope"] })
      .then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(isValidation(err), String(err));
    assert.equal(err.type, ProblemType.validation);
    assert.equal(err.errors.length, 1);
    assert.equal(err.errors[0]!.location, "body.citations[0]");
  });

  test("resolveAll: 120 distinct tokens take 2 resolve requests, merged in order", async () => {
    const tokens: Token[] = [];
    const seen = new Set<string>();
    for (const q of ["customers", "work", "team", "growth"]) {
      for (const type of ["framework", "paper", "blog"] as const) {
        const res = await anon.search({ q, type, limit: 50 });
        for (const r of res.results) {
          if (!seen.has(r.token)) {
            seen.add(r.token);
            tokens.push({ type: r.type, slug: r.slug });
          }
        }
      }
    }
    assert.ok(tokens.length >= 110, `only ${tokens.length} distinct entities found`);
    const real = tokens.slice(0, 110);
    const unknown: Token[] = Array.from({ length: 10 }, (_, i) => ({ type: "paper", slug: `no-such-paper-${i}` }));
    const distinct = [...real, ...unknown];
    const input = [...distinct, ...distinct.slice(0, 5)]; // duplicates are sent once

    const { rec, fetch } = recordingFetch("/resolve");
    const counting = new AssistantClient({ baseURL: svc.baseURL, fetch });
    const res = await counting.resolveAll(input);
    assert.equal(rec.calls, 2, "resolve requests for 120 distinct tokens");
    assert.equal(res.resolved.length, 110);
    assert.equal(res.unresolved.length, 10);
    res.resolved.forEach((card, i) => {
      assert.equal(card.token, tokenString(real[i]!));
      assert.ok(card.title);
    });
    res.unresolved.forEach((u, i) => {
      assert.equal(u.slug, unknown[i]!.slug);
      assert.equal(u.reason, "not_found");
    });

    const none = await counting.resolveAll([]);
    assert.deepEqual(none, { resolved: [], unresolved: [] });
    assert.equal(rec.calls, 2, "no tokens make no request");

    // One call with 101 tokens is the service's 400.
    await assert.rejects(anon.resolve(distinct.slice(0, 101)), (e) => isValidation(e));
  });

  test("public endpoints: stats, search, preview, catalog, leaderboard, openapi", async () => {
    const stats = await anon.knowledgeStats();
    assert.ok(stats.total > 0);
    assert.equal(stats.total, stats.frameworks + stats.papers + stats.blogs);

    const s = await anon.search({ q: "the packing station cannot keep up", limit: 3 });
    assert.ok(s.query);
    assert.ok(s.results.length > 0 && s.results.length <= 3);
    assert.ok(s.results[0]!.token && s.results[0]!.score > 0);

    const p = await anon.preview({ vertical: "saas", free_text: "trials sign up but never connect their data" });
    assert.equal(p.match.method, "free_text");
    assert.ok(p.framework_applications.length >= 3 && p.citations.length > 0);
    const p2 = await anon.preview({ vertical: "saas", archetype_id: p.archetype.id });
    assert.equal(p2.match.confidence, 1);
    assert.deepEqual(p2.match.alternatives, []);

    const cat = await anon.catalog();
    assert.ok(cat.verticals.length > 0 && cat.archetypes.length > 0);

    const lb = await anon.leaderboard({ days: 7, limit: 5 });
    assert.equal(lb.days, 7);
    assert.equal(lb.limit, 5);
    assert.ok(Array.isArray(lb.entries));
    assert.ok(Date.parse(lb.since) < Date.parse(lb.until));
    lb.entries.forEach((e, i) => {
      assert.equal(e.rank, i + 1);
      assert.equal(e.token, `${e.type}:${e.slug}`);
    });

    const err = await anon.leaderboard({ days: 1000 }).then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(err instanceof AssistantError);
    assert.equal(err.status, 400);
    assert.equal(err.errors[0]!.location, "query.days");
    assert.ok(err.requestId);

    const doc = await anon.openAPI();
    assert.ok((doc.paths as Record<string, unknown>)["/api/v1/chat"]);
  });

  test("key describes itself; a bad key or no key is a typed 401, never retried", async () => {
    const k = await client.key();
    assert.equal(k.workspace, "w");
    assert.equal(k.name, "t");
    assert.ok(k.key_id);
    assert.equal(k.expires_at, null);
    assert.ok(!Number.isNaN(Date.parse(k.created_at)));

    const { rec, fetch } = recordingFetch();
    const bad = new AssistantClient({ baseURL: svc.baseURL, apiKey: "sk_service_notakey", fetch });
    const err = await bad.chat({ message: packingQuestion }).then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(err instanceof AssistantError, String(err));
    assert.ok(isUnauthorized(err));
    assert.equal(err.type, ProblemType.unauthorized);
    assert.equal(err.problem?.status, 401);
    assert.ok(err.detail && err.requestId);
    assert.equal(rec.calls, 1, "a 401 is sent once");

    await assert.rejects(anon.key(), (e) => isUnauthorized(e));
    await assert.rejects(async () => {
      for await (const _ of anon.chatStream({ message: packingQuestion })) assert.fail("an event without a key");
    }, (e) => isUnauthorized(e));
  });

  test("rate limit: the 61st verify of a key is a typed 429, waited out for exactly its Retry-After", async () => {
    const noRetry = new AssistantClient({ baseURL: svc.baseURL, apiKey: svc.key2, retry: false });
    const req = { text: "Waiting time grows as utilization approaches one." };
    let limited: unknown;
    let served = 0;
    for (let i = 0; i < 61 && limited === undefined; i++) {
      try {
        await noRetry.verify(req);
        served++;
      } catch (e) {
        limited = e;
      }
    }
    assert.equal(served, 60, "requests served before the 429");
    assert.ok(isRateLimited(limited), String(limited));
    assert.equal(limited.type, ProblemType.rateLimited);
    assert.ok(limited.retryAfterSeconds !== null && limited.retryAfterSeconds >= 1);
    assert.equal(limited.retryAfterMs, limited.retryAfterSeconds * 1000);
    assert.equal(limited.retryAfter, limited.retryAfterSeconds);
    assert.equal(limited.rateLimitPolicy, '"chat";q=60;w=60');
    const rl = parseRateLimit(limited.rateLimit);
    assert.ok(rl && rl.policy === "chat" && rl.remaining === 0 && rl.reset >= 1, String(limited.rateLimit));

    // With retries, the client waits the Retry-After of the 429 it got,
    // through the injected sleep (which returns at once), then tries again
    // and, still limited, surfaces the second 429.
    const waits: number[] = [];
    const { rec, fetch } = recordingFetch();
    const retrying = new AssistantClient({
      baseURL: svc.baseURL,
      apiKey: svc.key2,
      fetch,
      retry: { maxAttempts: 2, maxRetryAfterMs: 120_000 },
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const err = await retrying.verify(req).then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(isRateLimited(err), String(err));
    assert.equal(rec.calls, 2);
    assert.equal(waits.length, 1);
    assert.ok(rec.retryAfter[0] !== null && /^\d+$/.test(rec.retryAfter[0]!));
    assert.equal(waits[0], Number(rec.retryAfter[0]) * 1000, "the wait is the Retry-After");
    assert.ok(waits[0]! >= 1000 && waits[0]! <= 60_000);
  });
});
