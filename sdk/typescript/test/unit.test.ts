import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AssistantClient,
  DEFAULT_RETRY_POLICY,
  findTokens,
  parseRateLimit,
  parseRetryAfter,
  parseToken,
  tokenString,
} from "../src/index.js";

test("findTokens: bracketed tokens of the three types, in order, each once", () => {
  const text =
    "Start with [framework:theory-of-constraints] and [paper:little-1961-queuing-formula]; " +
    "again [framework:theory-of-constraints], not [video:x], [paper:Bad] or paper:bare, then [blog:a_b-1].";
  assert.deepEqual(findTokens(text), [
    { type: "framework", slug: "theory-of-constraints" },
    { type: "paper", slug: "little-1961-queuing-formula" },
    { type: "blog", slug: "a_b-1" },
  ]);
  assert.deepEqual(findTokens("nothing"), []);
});

test("parseToken and tokenString", () => {
  assert.deepEqual(parseToken("[paper:x-1]"), { type: "paper", slug: "x-1" });
  assert.deepEqual(parseToken(" framework:toc "), { type: "framework", slug: "toc" });
  assert.throws(() => parseToken("video:x"), /not a citation token/);
  assert.equal(tokenString({ type: "blog", slug: "b" }), "blog:b");
});

test("parseRateLimit", () => {
  assert.deepEqual(parseRateLimit('"chat";r=59;t=1'), { policy: "chat", remaining: 59, reset: 1 });
  assert.deepEqual(parseRateLimit('"hard";r=0;t=12'), { policy: "hard", remaining: 0, reset: 12 });
  assert.equal(parseRateLimit(""), null);
  assert.equal(parseRateLimit(null), null);
  assert.equal(parseRateLimit('"chat";r=x;t=1'), null);
  assert.equal(parseRateLimit('"chat";r=1'), null);
});

test("parseRetryAfter: seconds or an HTTP date", () => {
  assert.equal(parseRetryAfter("7"), 7000);
  assert.equal(parseRetryAfter(" 0 "), 0);
  assert.equal(parseRetryAfter(null), null);
  assert.equal(parseRetryAfter("soon"), null);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now), 30_000);
  assert.equal(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now), 0);
});

test("retry options: defaults, partial policies and false", () => {
  assert.deepEqual(new AssistantClient({ baseURL: "http://x" }).retry, DEFAULT_RETRY_POLICY);
  assert.deepEqual(new AssistantClient({ baseURL: "http://x", retry: { maxAttempts: 5, jitter: 0 } }).retry, {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: 5,
    jitter: 0,
  });
  assert.equal(new AssistantClient({ baseURL: "http://x", retry: false }).retry.maxAttempts, 1);
  assert.equal(new AssistantClient({ baseURL: "http://x", retry: { jitter: 7 } }).retry.jitter, 1);
  assert.throws(() => new AssistantClient({ baseURL: "" }), TypeError);
});

test("backoff doubles up to the cap; jitter takes up to its fraction off", () => {
  const c = new AssistantClient({ baseURL: "http://x", retry: { baseBackoffMs: 500, maxBackoffMs: 8000, jitter: 0 } });
  assert.deepEqual([1, 2, 3, 4, 5, 6, 20].map((a) => c.backoff(a)), [500, 1000, 2000, 4000, 8000, 8000, 8000]);
  const j = new AssistantClient({ baseURL: "http://x", retry: { jitter: 0.5 }, random: () => 0.999 });
  assert.ok(Math.abs(j.backoff(1) - 250.25) < 1e-9);
});
