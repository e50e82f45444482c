// Compiled by run.sh under --strict against the types openapi-typescript
// generates from the API contract with its default options: a typed
// client (openapi-fetch) reading what the service answers, nulls included.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Verdict = components["schemas"]["Verdict"];
type ChatResponse = components["schemas"]["Response"];

export function evidenceToken(v: Verdict): string | null {
  // evidence is null when no passage decided the verdict: the type says so.
  return v.evidence === null ? null : `${v.evidence.type}:${v.evidence.slug}`;
}

export async function demo(baseUrl: string, key: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl });
  const out: string[] = [];
  const chat = await client.POST("/api/v1/chat", {
    headers: { Authorization: `Bearer ${key}` },
    body: { message: "Orders ship late", mode: "operator", vertical: "ecommerce" },
  });
  // 200 is JSON or, with Accept: text/event-stream, the stream as text;
  // 202 (only with Prefer: respond-async, not sent here) is a queued
  // turn's state.
  const answer = chat.response.status === 200 ? (chat.data as ChatResponse | string | undefined) : undefined;
  if (answer && typeof answer !== "string") {
    out.push(answer.response, answer.confidence.level);
    for (const v of answer.confidence.verdicts) out.push(evidenceToken(v) ?? "no evidence");
    for (const h of answer.rag_hits) out.push(h.source);
  } else if (chat.error) {
    out.push(chat.error.detail ?? "", String(chat.error.status));
  }
  const resolved = await client.POST("/api/assistant/v1/resolve", {
    body: { tokens: [{ type: "framework", slug: "theory-of-constraints" }] },
  });
  for (const card of resolved.data?.resolved ?? []) out.push(card.token, card.url ?? "", String(card.year ?? ""));
  const board = await client.GET("/api/assistant/v1/leaderboard", { params: { query: { days: 7, limit: 5 } } });
  for (const e of board.data?.entries ?? []) out.push(`${e.rank} ${e.token} ${e.citations}`);
  const search = await client.GET("/api/assistant/v1/search", { params: { query: { q: "bottleneck" } } });
  for (const r of search.data?.results ?? []) out.push(`${r.token} ${r.score}`);
  const verify = await client.POST("/api/v1/verify", {
    headers: { Authorization: `Bearer ${key}` },
    body: { text: "Waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]." },
  });
  if (verify.data) out.push(String(verify.data.totalClaims));
  const completion = await client.POST("/api/v1/openai/chat/completions", {
    headers: { Authorization: `Bearer ${key}` },
    body: { model: "assistant-operator", messages: [{ role: "user", content: "Orders ship late" }] },
  });
  if (completion.data && typeof completion.data !== "string") out.push(completion.data.choices[0]?.message.content ?? "");
  else if (completion.error) out.push(completion.error.error.message);
  return out;
}
