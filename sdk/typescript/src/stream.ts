import { AssistantError, type Problem } from "./errors.js";
import type { ChatResponse, TraceItem } from "./types.js";

/** A tool call, reported as it completes. */
export interface HopEvent {
  type: "hop";
  trace: TraceItem;
}

/**
 * The next piece of the answer text. Pieces are cut at word boundaries and
 * never inside a citation token; concatenated, they are the final response.
 */
export interface DeltaEvent {
  type: "delta";
  text: string;
}

/** The whole answer: exactly what chat returns. */
export interface FinalEvent {
  type: "final";
  result: ChatResponse;
}

/** A failure after the stream started; the turn is not recorded. */
export interface ErrorEvent {
  type: "error";
  error: AssistantError;
}

/** One server-sent event of a streamed chat turn. */
export type ChatEvent = HopEvent | DeltaEvent | FinalEvent | ErrorEvent;

/** One raw server-sent event. */
export interface SSEMessage {
  event: string;
  data: string;
}

/**
 * Parses server-sent events from a byte stream: data lines joined by
 * newlines, comments skipped, "message" when no event name is given.
 * Returning early (break) cancels the stream.
 */
export async function* readSSE(body: ReadableStream<Uint8Array>): AsyncGenerator<SSEMessage, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let name = "";
  let data: string[] = [];
  let hasData = false;
  const take = (line: string): SSEMessage | null => {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line === "") {
      const msg = hasData ? { event: name || "message", data: data.join("\n") } : null;
      name = "";
      data = [];
      hasData = false;
      return msg;
    }
    if (line.startsWith(":")) return null; // a comment
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") {
      data.push(value);
      hasData = true;
    }
    return null;
  };
  let done = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) {
        buf += decoder.decode();
      } else {
        buf += decoder.decode(chunk.value, { stream: true });
      }
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const msg = take(line);
        if (msg) yield msg;
      }
      if (chunk.done) {
        // A last line without its newline still counts, as in the Go client.
        if (buf !== "") {
          take(buf);
          buf = "";
          const msg = take("");
          if (msg) yield msg;
        }
        done = true;
        return;
      }
    }
  } finally {
    if (!done) {
      await reader.cancel().catch(() => undefined);
    }
    reader.releaseLock();
  }
}

/** Turns one SSE message into a chat event; null for an event this client does not know. */
export function decodeChatEvent(msg: SSEMessage): ChatEvent | null {
  const parse = (): unknown => {
    try {
      return JSON.parse(msg.data);
    } catch (e) {
      throw new Error(`assistant: decoding a ${msg.event} event: ${(e as Error).message}`);
    }
  };
  switch (msg.event) {
    case "hop":
      return { type: "hop", trace: parse() as TraceItem };
    case "delta":
      return { type: "delta", text: (parse() as { text: string }).text };
    case "final":
      return { type: "final", result: parse() as ChatResponse };
    case "error": {
      const p = parse() as Problem;
      return { type: "error", error: new AssistantError(p.status, p) };
    }
  }
  return null;
}
