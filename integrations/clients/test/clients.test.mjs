// The MCP server and the OpenAI-compatible facade, driven by the official
// clients (@modelcontextprotocol/sdk and openai, versions pinned in
// package-lock.json) against a real `assistant serve` with the builtin
// model.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import OpenAI from "openai";

import { KEY_LIMIT, nativeChat, startService } from "./service.mjs";

/** @type {{baseURL: string, keys: Record<string, string>, stop: () => Promise<void>}} */
let svc;

before(async () => {
  svc = await startService(["mcp", "mcp-resources", "openai", "limit"]);
});

after(async () => {
  await svc?.stop();
});

async function mcpClient(key) {
  const client = new Client({ name: "assistant-integration-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.baseURL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

function openai(key) {
  // No retries: a 429 must be seen, not waited out.
  return new OpenAI({ baseURL: `${svc.baseURL}/api/v1/openai`, apiKey: key, maxRetries: 0 });
}

const question = {
  message: "Orders ship late because the packing station cannot keep up",
  mode: "operator",
  vertical: "ecommerce",
  history: [
    { role: "user", content: "We sell furniture online" },
    { role: "assistant", content: "Noted: an online furniture shop." },
  ],
};

describe("MCP (official TypeScript SDK)", () => {
  test("lists and calls every tool", async () => {
    const client = await mcpClient(svc.keys.mcp);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      assert.deepEqual(names, ["ask_assistant", "preview_constraint", "resolve_citations", "search_knowledge", "verify_text"]);
      for (const t of tools) {
        assert.equal(t.inputSchema.type, "object", t.name);
        assert.ok(t.outputSchema, `${t.name} has an output schema`);
        assert.ok(t.description, `${t.name} has a description`);
      }
      // The SDK checks structuredContent against each tool's output schema.
      const call = async (name, args) => {
        const res = await client.callTool({ name, arguments: args });
        assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
        assert.ok(res.structuredContent, `${name} returns structured content`);
        assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, `${name}: text is the structured JSON`);
        return res;
      };
      const linksOf = (res) => res.content.filter((c) => c.type === "resource_link").map((c) => c.uri);

      const search = await call("search_knowledge", { query: "the packing station cannot keep up", limit: 3 });
      const results = search.structuredContent.results;
      assert.ok(results.length > 0 && results.length <= 3);
      assert.match(results[0].token, /^(framework|paper|blog):[a-z0-9_-]+$/);
      assert.deepEqual(linksOf(search), results.map((r) => `assistant://${r.type}/${r.slug}`));

      const resolved = await call("resolve_citations", {
        tokens: [
          { type: "framework", slug: "theory-of-constraints" },
          { type: "paper", slug: "no-such-paper" },
        ],
      });
      assert.equal(resolved.structuredContent.resolved[0].token, "framework:theory-of-constraints");
      assert.equal(resolved.structuredContent.unresolved[0].reason, "not_found");

      const preview = await call("preview_constraint", { vertical: "saas", free_text: "trials sign up but never connect their data" });
      assert.equal(preview.structuredContent.match.method, "free_text");
      assert.ok(preview.structuredContent.framework_applications.length > 0);

      const verified = await call("verify_text", {
        text: "Waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]. Revenue doubles whenever the moon is full.",
      });
      assert.equal(verified.structuredContent.totalClaims, 2);
      assert.ok(verified.structuredContent.verdicts.some((v) => v.evidence === null), "an undecided claim has evidence null");

      const answer = await call("ask_assistant", question);
      const native = await nativeChat(svc.baseURL, svc.keys.mcp, question);
      assert.equal(native.status, 200);
      assert.equal(answer.structuredContent.response, native.body.response, "ask_assistant answers what POST /api/v1/chat answers");
      assert.match(answer.structuredContent.response, /\[framework:[a-z0-9_-]+\]/);
      assert.deepEqual(answer.structuredContent.confidence, native.body.confidence);
      assert.deepEqual(linksOf(answer), native.body.rag_hits.map((h) => "assistant://" + h.source.replace(":", "/")));

      // A bad argument is a tool error carrying the API's problem document.
      const bad = await client.callTool({ name: "ask_assistant", arguments: { message: "hello", mode: "pirate" } });
      assert.equal(bad.isError, true);
      assert.equal(JSON.parse(bad.content[0].text).status, 400);

    } finally {
      await client.close();
    }
  });

  test("lists every card as a resource, in pages, and reads one", async () => {
    // Listing counts against the key like any call: a key of its own.
    const client = await mcpClient(svc.keys["mcp-resources"]);
    try {
      let listed = 0;
      let pages = 0;
      let cursor;
      do {
        const page = await client.listResources(cursor ? { cursor } : undefined);
        listed += page.resources.length;
        pages++;
        cursor = page.nextCursor;
      } while (cursor);
      const stats = await (await fetch(`${svc.baseURL}/api/assistant/v1/knowledge-stats`)).json();
      assert.equal(listed, stats.total);
      assert.ok(pages > 1, "resources come in pages");
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ["assistant://{type}/{slug}"]);
      const card = await client.readResource({ uri: "assistant://framework/theory-of-constraints" });
      const parsed = JSON.parse(card.contents[0].text);
      assert.equal(parsed.token, "framework:theory-of-constraints");
      assert.equal(card.contents[0].mimeType, "application/json");
    } finally {
      await client.close();
    }
  });

  test("a wrong key is refused", async () => {
    await assert.rejects(mcpClient("sk_service_wrongwrongwrongwrongwrongwrongwrongwrongwrong0"), (e) => /401|nauthorized/.test(String(e)));
    await assert.rejects(mcpClient(""), (e) => /401|nauthorized/.test(String(e)));
  });
});

describe("OpenAI-compatible facade (official openai package)", () => {
  const messages = [
    { role: "system", content: "Answer like a pirate." }, // ignored: the persona decides
    ...question.history,
    { role: "user", content: question.message },
  ];

  test("models are the four personas", async () => {
    const list = await openai(svc.keys.openai).models.list();
    const ids = [];
    for await (const m of list) ids.push(m.id);
    assert.deepEqual(ids, ["assistant-operator", "assistant-customer", "assistant-support", "assistant-success"]);
    const one = await openai(svc.keys.openai).models.retrieve("assistant-success");
    assert.equal(one.id, "assistant-success");
  });

  test("a chat and a streamed chat answer what POST /api/v1/chat answers", async () => {
    const client = openai(svc.keys.openai);
    const native = await nativeChat(svc.baseURL, svc.keys.openai, question);
    assert.equal(native.status, 200);

    const completion = await client.chat.completions.create({ model: "assistant-operator", messages, vertical: "ecommerce" });
    assert.equal(completion.object, "chat.completion");
    assert.equal(completion.model, "assistant-operator");
    assert.equal(completion.choices.length, 1);
    assert.equal(completion.choices[0].finish_reason, "stop");
    assert.equal(completion.choices[0].message.role, "assistant");
    assert.equal(completion.choices[0].message.content, native.body.response);
    assert.match(completion.choices[0].message.content, /\[framework:[a-z0-9_-]+\]/, "citation tokens are kept");
    // The extension field carries the rest of the turn.
    assert.deepEqual(completion.x_assistant.confidence, native.body.confidence);
    assert.deepEqual(completion.x_assistant.rag_hits, native.body.rag_hits);
    assert.deepEqual(completion.x_assistant.reasoning_trace, native.body.reasoning_trace);

    const stream = await client.chat.completions.create({ model: "assistant-operator", messages, vertical: "ecommerce", stream: true });
    let text = "";
    let last;
    for await (const chunk of stream) {
      assert.equal(chunk.object, "chat.completion.chunk");
      text += chunk.choices[0]?.delta?.content ?? "";
      last = chunk;
    }
    assert.equal(text, native.body.response);
    assert.equal(last.choices[0].finish_reason, "stop");
    assert.deepEqual(last.x_assistant.confidence, native.body.confidence);

    // The SDK's stream helper assembles the same message.
    const runner = client.chat.completions.stream({ model: "assistant-operator", messages, vertical: "ecommerce" });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0].message.content, native.body.response);
  });

  test("a wrong key is refused; errors have OpenAI's shape", async () => {
    const bad = openai("sk_service_wrongwrongwrongwrongwrongwrongwrongwrongwrong0");
    const err = await bad.chat.completions
      .create({ model: "assistant-operator", messages: [{ role: "user", content: "hi" }] })
      .then(() => assert.fail("no error"), (e) => e);
    assert.ok(err instanceof OpenAI.AuthenticationError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, "invalid_api_key");
    assert.equal(err.type, "invalid_request_error");
    await assert.rejects(bad.models.list(), (e) => e instanceof OpenAI.AuthenticationError);

    const unknown = await openai(svc.keys.openai)
      .chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
      .then(() => assert.fail("no error"), (e) => e);
    assert.ok(unknown instanceof OpenAI.NotFoundError, String(unknown));
    assert.equal(unknown.code, "model_not_found");
    assert.equal(unknown.param, "model");
  });
});

describe("the per-key limit", () => {
  test("is one budget across /api/v1/chat, the facade and MCP", async () => {
    const key = svc.keys.limit;
    const client = openai(key);
    const mcp = await mcpClient(key);
    try {
      const msg = { model: "assistant-support", messages: [{ role: "user", content: "Our support queue doubled since the release" }] };
      let spent = 0;
      for (; spent < 4; spent++) assert.equal((await nativeChat(svc.baseURL, key, { message: "Our support queue doubled" })).status, 200);
      for (; spent < 7; spent++) await client.chat.completions.create(msg);
      for (; spent < KEY_LIMIT; spent++) await mcp.callTool({ name: "search_knowledge", arguments: { query: "support queue" } });

      const native = await nativeChat(svc.baseURL, key, { message: "Our support queue doubled" });
      assert.equal(native.status, 429);
      assert.ok(native.body.retry_after_seconds >= 1);

      const limited = await client.chat.completions.create(msg).then(() => assert.fail("no error"), (e) => e);
      assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
      assert.equal(limited.code, "rate_limit_exceeded");
      assert.ok(Number(limited.headers.get("retry-after")) >= 1);

      const refused = await mcp.callTool({ name: "search_knowledge", arguments: { query: "support queue" } }).then(
        () => assert.fail("no error"),
        (e) => e,
      );
      assert.ok(refused instanceof McpError, String(refused));
      assert.equal(refused.code, -32029);
      assert.ok(refused.data.retry_after_seconds >= 1);

      // Listing is work too, and counts; the handshake does not.
      const listing = await mcp.listTools().then(() => assert.fail("no error"), (e) => e);
      assert.equal(listing.code, -32029);
      await mcp.ping();
    } finally {
      await mcp.close();
    }
  });
});
