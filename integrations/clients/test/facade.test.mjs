// The OpenAI-compatible facade through clients nobody here wrote, unmodified:
// the official openai package (Chat Completions and the Responses API) and
// the AI SDK (@ai-sdk/openai's default provider, which uses the Responses
// API, and @ai-sdk/openai-compatible, which uses Chat Completions), plain
// and streaming, each reporting usage; LangChain's ChatOpenAI, plain, and
// its withStructuredOutput refused; and the parameters the service
// cannot honour refused with a 400 that names them.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, streamText } from "ai";
import OpenAI from "openai";

import { nativeChat, startService } from "./service.mjs";

/** @type {{baseURL: string, keys: Record<string, string>, stop: () => Promise<void>}} */
let svc;

before(async () => {
  svc = await startService(["responses", "completions", "aisdk", "compatible", "params", "langchain"]);
});

after(async () => {
  await svc?.stop();
});

const facade = () => `${svc.baseURL}/api/v1/openai`;
const openai = (key) => new OpenAI({ baseURL: facade(), apiKey: key, maxRetries: 0 });
const message = "Our support queue doubled since the last release";

function assertUsage(u, what) {
  assert.ok(u, `${what}: no usage`);
  assert.ok(u.input_tokens > 0 && u.output_tokens > 0, `${what}: usage ${JSON.stringify(u)}`);
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens, what);
}

describe("openai package: Responses API", () => {
  test("responses.create, plain and streamed, answers the native turn with usage", async () => {
    const key = svc.keys.responses;
    const client = openai(key);
    const native = await nativeChat(svc.baseURL, key, { message, mode: "support" });
    assert.equal(native.status, 200);

    const plain = await client.responses.create({ model: "assistant-support", input: message, instructions: "Be brief." });
    assert.equal(plain.object, "response");
    assert.equal(plain.status, "completed");
    assert.equal(plain.output_text, native.body.response);
    assertUsage(plain.usage, "responses.create");
    assert.deepEqual(plain.x_assistant.confidence, native.body.confidence);

    const history = await client.responses.create({
      model: "assistant-support",
      input: [
        { role: "user", content: "Hello" },
        { role: "assistant", content: "How can I help?" },
        { role: "user", content: [{ type: "input_text", text: message }] },
      ],
    });
    assert.ok(history.output_text.length > 0);

    const stream = await client.responses.create({ model: "assistant-support", input: message, stream: true });
    let text = "";
    let completed;
    const types = new Set();
    for await (const ev of stream) {
      types.add(ev.type);
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") completed = ev.response;
    }
    assert.equal(text, native.body.response);
    assert.ok(types.has("response.created") && types.has("response.output_item.done"), [...types].join(" "));
    assert.equal(completed.output_text ?? completed.output[0].content[0].text, native.body.response);
    assertUsage(completed.usage, "streamed response");

    // The SDK's stream helper assembles the same response.
    const final = await client.responses.stream({ model: "assistant-support", input: message }).finalResponse();
    assert.equal(final.output_text, native.body.response);
  });

  test("previous_response_id is refused with a 400 naming it", async () => {
    const err = await openai(svc.keys.params)
      .responses.create({ model: "assistant-operator", input: "Orders ship late", previous_response_id: "resp_123" })
      .then(() => assert.fail("no error"), (e) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.param, "previous_response_id");
    assert.equal(err.code, "unsupported_parameter");
  });
});

describe("openai package: Chat Completions", () => {
  test("usage on the completion and on the stream's usage chunk", async () => {
    const client = openai(svc.keys.completions);
    const messages = [{ role: "user", content: message }];
    const completion = await client.chat.completions.create({ model: "assistant-support", messages });
    const u = completion.usage;
    assertUsage({ input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens, total_tokens: u.total_tokens }, "completion");

    const stream = await client.chat.completions.create({
      model: "assistant-support",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage;
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, completion.choices[0].message.content);
    assert.deepEqual(usage, completion.usage);
  });

  test("tools and response_format are refused with a 400 naming them", async () => {
    const client = openai(svc.keys.params);
    const messages = [{ role: "user", content: "Orders ship late" }];
    const format = await client.chat.completions
      .create({
        model: "assistant-operator",
        messages,
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } },
      })
      .then(() => assert.fail("no error"), (e) => e);
    assert.ok(format instanceof OpenAI.BadRequestError, String(format));
    assert.equal(format.param, "response_format");
    assert.match(format.message, /response_format/);

    const tools = await client.chat.completions
      .create({
        model: "assistant-operator",
        messages,
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
      })
      .then(() => assert.fail("no error"), (e) => e);
    assert.ok(tools instanceof OpenAI.BadRequestError, String(tools));
    assert.equal(tools.param, "tools");
  });
});

describe("AI SDK", () => {
  test("@ai-sdk/openai's default model (Responses API): generateText and streamText", async () => {
    const key = svc.keys.aisdk;
    const native = await nativeChat(svc.baseURL, key, { message, mode: "support" });
    const provider = createOpenAI({ baseURL: facade(), apiKey: key });
    const model = provider("assistant-support");

    const plain = await generateText({ model, prompt: message, maxRetries: 0 });
    assert.equal(plain.text, native.body.response);
    assert.ok(plain.usage.inputTokens > 0 && plain.usage.outputTokens > 0, JSON.stringify(plain.usage));

    const streamed = streamText({ model, prompt: message, maxRetries: 0 });
    let text = "";
    for await (const piece of streamed.textStream) text += piece;
    assert.equal(text, native.body.response);
    const usage = await streamed.usage;
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0, JSON.stringify(usage));

    // The Chat Completions model of the same provider.
    const chat = await generateText({ model: provider.chat("assistant-support"), prompt: message, maxRetries: 0 });
    assert.equal(chat.text, native.body.response);
    assert.ok(chat.usage.totalTokens > 0, JSON.stringify(chat.usage));
  });

  test("@ai-sdk/openai-compatible: generateText and streamText", async () => {
    const key = svc.keys.compatible;
    const native = await nativeChat(svc.baseURL, key, { message, mode: "support" });
    const provider = createOpenAICompatible({ name: "assistant", baseURL: facade(), apiKey: key, includeUsage: true });
    const model = provider.chatModel("assistant-support");

    const plain = await generateText({ model, prompt: message, maxRetries: 0 });
    assert.equal(plain.text, native.body.response);
    assert.ok(plain.usage.inputTokens > 0 && plain.usage.outputTokens > 0, JSON.stringify(plain.usage));

    const streamed = streamText({ model, prompt: message, maxRetries: 0 });
    let text = "";
    for await (const piece of streamed.textStream) text += piece;
    assert.equal(text, native.body.response);
    const usage = await streamed.usage;
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0, JSON.stringify(usage));
  });
});

describe("LangChain", () => {
  test("LangChain's withStructuredOutput is refused with a 400 naming response_format", async () => {
    const model = new ChatOpenAI({
      model: "assistant-operator",
      apiKey: svc.keys.langchain,
      configuration: { baseURL: facade() },
      maxRetries: 0,
    });
    // Plain invocation works: LangChain talks to the facade unmodified.
    const plain = await model.invoke("Orders ship late because packing cannot keep up");
    assert.match(String(plain.content), /\[(framework|paper|blog):/);
    const structured = model.withStructuredOutput(
      { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
      { name: "answer", method: "jsonSchema" },
    );
    const err = await structured.invoke("Orders ship late").then(() => assert.fail("no error"), (e) => e);
    assert.equal(err.status ?? err.cause?.status, 400, String(err));
    assert.match(String(err.message), /response_format/);
  });
});
