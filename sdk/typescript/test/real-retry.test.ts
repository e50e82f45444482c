// The retry paths against a real `assistant serve` (see service.ts): a
// real 429 waited out for its Retry-After, and a real 502 (the model
// provider unreachable) retried with a capped, jittered backoff and then
// thrown as an AssistantError. fake.test.ts checks the same paths, to the
// millisecond, against a scripted server.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { performance } from "node:perf_hooks";
import { AssistantClient, AssistantError, defaultSleep, findTokens, isUnavailable, ProblemType } from "../src/index.js";
import { freePort, startService, type RealService } from "./service.js";

const packingQuestion = "Our packing station cannot keep up and orders ship late";

/** One request the recorder saw: when it was sent, when its answer came back (performance.now()), and what it said. */
interface Exchange {
  sent: number;
  got: number;
  status: number;
  retryAfter: string | null;
  policy: string | null;
}

/** A fetch that records every exchange. */
function recordingFetch() {
  const log: Exchange[] = [];
  const f: typeof fetch = async (input, init) => {
    const sent = performance.now();
    const resp = await fetch(input, init);
    log.push({
      sent,
      got: performance.now(),
      status: resp.status,
      retryAfter: resp.headers.get("Retry-After"),
      policy: resp.headers.get("RateLimit-Policy"),
    });
    return resp;
  };
  return { log, fetch: f };
}

// A timer may fire up to a millisecond early on the performance clock
// (libuv rounds to whole milliseconds): waits are compared with this slack.
const timerSlackMs = 5;

const limitedRate = 2;
const limitedWindowSeconds = 3;

describe("a real 429, waited out", { timeout: 240_000 }, () => {
  let svc: RealService;
  before(async () => {
    svc = await startService({
      env: { ASSISTANT_CHAT_RATE_LIMIT: String(limitedRate), ASSISTANT_CHAT_RATE_WINDOW: `${limitedWindowSeconds}s` },
    });
  });
  after(async () => {
    await svc?.stop();
  });

  // On a service admitting 2 chats per key in any rolling 3 seconds, chats
  // are sent back to back until one meets the 429. That call sleeps the
  // Retry-After (for real, with the default sleep), sends again, and
  // resolves to the 200 answer. The first two calls normally take the
  // whole budget; on a slow machine the window may slide first, so up to
  // 8 calls are made.
  test("a chat that meets the per-key limit sleeps the Retry-After, then gets the answer", async () => {
    const { log, fetch } = recordingFetch();
    const client = new AssistantClient({
      baseURL: svc.baseURL,
      apiKey: svc.key,
      fetch,
      retry: { maxAttempts: 3, maxRetryAfterMs: 30_000 },
    });
    for (let call = 1; call <= 8; call++) {
      const before = log.length;
      const start = performance.now();
      const resp = await client.chat({ message: packingQuestion, vertical: "ecommerce", source: "ts-sdk-test" });
      const took = performance.now() - start;
      assert.ok(findTokens(resp.response).length > 0, `call ${call}: an answer without citation tokens`);
      const ex = log.slice(before);
      if (ex[0]!.status === 200) {
        assert.equal(ex.length, 1, `call ${call}: a 200 was sent again`);
        continue;
      }
      // The call that met the limit: 429, then 200 after the wait.
      assert.deepEqual(ex.map((x) => x.status), [429, 200], `call ${call}`);
      assert.equal(ex[0]!.policy, `"chat";q=${limitedRate};w=${limitedWindowSeconds}`);
      assert.match(ex[0]!.retryAfter ?? "", /^\d+$/);
      const retryAfterMs = Number(ex[0]!.retryAfter) * 1000;
      assert.ok(retryAfterMs >= 1000 && retryAfterMs <= limitedWindowSeconds * 1000, `Retry-After ${ex[0]!.retryAfter}`);
      // At least the Retry-After between the 429's answer and the next
      // request, and not much more (generous for a loaded machine).
      const waited = ex[1]!.sent - ex[0]!.got;
      assert.ok(waited >= retryAfterMs - timerSlackMs, `waited ${waited} ms after a Retry-After of ${retryAfterMs} ms`);
      assert.ok(waited <= retryAfterMs + 20_000, `waited ${waited} ms after a Retry-After of ${retryAfterMs} ms`);
      assert.ok(took >= retryAfterMs - timerSlackMs, `the call took ${took} ms`);
      return;
    }
    assert.fail(`8 chats in a row never met the limit: ${JSON.stringify(log)}`);
  });
});

describe("a real 502, retried then thrown", { timeout: 240_000 }, () => {
  let svc: RealService;
  before(async () => {
    // The openai provider at a loopback port nothing listens on.
    const port = await freePort();
    svc = await startService({
      env: {
        ASSISTANT_LLM_PROVIDER: "openai",
        ASSISTANT_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`,
        ASSISTANT_LLM_MODEL: "unreachable-model",
        ASSISTANT_LLM_API_KEY: "sk-test-unused",
      },
    });
  });
  after(async () => {
    await svc?.stop();
  });

  // Every chat is the service's 502 (after its own bounded retries
  // upstream). The client retries with a capped, jittered exponential
  // backoff, maxAttempts requests in all, and throws the last 502 as an
  // AssistantError holding the problem document. After 5 consecutive
  // upstream failures the service's circuit breaker opens: it fails fast,
  // still with 502 (never 503), so the client behaves the same. The
  // service's metrics count the same attempts.
  test("chat: retried with capped jittered backoff, then a typed 502; the breaker keeps it a 502", async () => {
    const { log, fetch } = recordingFetch();
    const waits: number[] = [];
    const retry = { maxAttempts: 4, baseBackoffMs: 100, maxBackoffMs: 150, jitter: 0.5 };
    const client = new AssistantClient({
      baseURL: svc.baseURL,
      apiKey: svc.key,
      fetch,
      retry,
      sleep: (ms, signal) => {
        waits.push(ms);
        return defaultSleep(ms, signal); // a real wait
      },
    });
    // Two calls of 4 attempts: 8 upstream failures, so the breaker opens
    // during the second call.
    for (let call = 1; call <= 2; call++) {
      const before = log.length;
      waits.length = 0;
      const err = await client.chat({ message: packingQuestion, source: "ts-sdk-test" }).then(
        () => assert.fail("no error"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof AssistantError, String(err));
      assert.ok(isUnavailable(err));
      assert.equal(err.status, 502);
      assert.equal(err.type, ProblemType.unavailable);
      assert.equal(err.problem?.status, 502);
      assert.equal(err.title, "Bad Gateway");
      assert.ok(err.detail && err.requestId, JSON.stringify(err.problem));
      assert.equal(err.retryAfterMs, 5000, "the service's Retry-After hint");
      assert.equal(err.headers.get("Content-Type"), "application/problem+json");

      const ex = log.slice(before);
      assert.deepEqual(ex.map((x) => x.status), [502, 502, 502, 502], `call ${call}: an open breaker is a 502 too`);
      // The backoff before retry n is min(100*2^(n-1), 150) ms, less up to
      // half of it (the jitter).
      assert.equal(waits.length, retry.maxAttempts - 1, `call ${call}: waits ${waits}`);
      waits.forEach((w, i) => {
        const full = Math.min(retry.baseBackoffMs * 2 ** i, retry.maxBackoffMs);
        assert.ok(w >= full / 2 && w <= full, `call ${call}: wait ${i + 1} is ${w} ms, want [${full / 2}, ${full}]`);
        const gap = ex[i + 1]!.sent - ex[i]!.got;
        assert.ok(gap >= w - timerSlackMs, `call ${call}: retry ${i + 1} sent ${gap} ms after the 502, before its backoff of ${w} ms`);
      });
    }

    // The breaker opened after the 5th upstream failure; what followed
    // were 502s too (checked above).
    assert.match(svc.output(), /circuit breaker state change.*"to":"open"/, "the service never logged its breaker opening");
    // The service counted every attempt as a 502 of the chat route.
    const metrics = await (await globalThis.fetch(`${svc.baseURL}/metrics`)).text();
    const series = 'assistant_http_requests_total{method="POST",route="POST /api/v1/chat",status="502"} ';
    const line = metrics.split("\n").find((l) => l.startsWith(series));
    assert.equal(line?.slice(series.length), "8", "chat 502s the service counted");
  });

  // A streamed turn has begun (200) before the model fails: the 502 is an
  // error event, yielded once and then thrown, and never retried.
  test("chatStream: the 502 is an error event, sent once", async () => {
    const { log, fetch } = recordingFetch();
    const client = new AssistantClient({ baseURL: svc.baseURL, apiKey: svc.key, fetch, retry: { maxAttempts: 4, baseBackoffMs: 100 } });
    const types: string[] = [];
    const err = await (async () => {
      for await (const ev of client.chatStream({ message: packingQuestion })) types.push(ev.type);
    })().then(
      () => assert.fail("no error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AssistantError, String(err));
    assert.equal(err.status, 502);
    assert.equal(err.type, ProblemType.unavailable);
    assert.equal(types.at(-1), "error");
    assert.deepEqual(log.map((x) => x.status), [200]);
  });
});
