import { AssistantError, IncompleteStreamError } from "./errors.js";
import { decodeChatEvent, readSSE, type ChatEvent } from "./stream.js";
import { dedupeTokens, MAX_RESOLVE_BATCH } from "./tokens.js";
import type {
  Catalog,
  ChatRequest,
  ChatResponse,
  Confidence,
  KeyInfo,
  KnowledgeStats,
  Leaderboard,
  LeaderboardParams,
  Preview,
  PreviewRequest,
  ResolveResponse,
  SearchParams,
  SearchResponse,
  Token,
  Turn,
  VerifyRequest,
} from "./types.js";

/**
 * How chat, chatStream and verify calls are retried. Only two answers are
 * retried: 429 (after the Retry-After the service sends) and 502 (after a
 * capped, jittered exponential backoff). 400, 401, 413 and every other
 * status are thrown at once; so are transport errors.
 */
export interface RetryPolicy {
  /** The number of requests made at most, the first one included; 1 turns retries off. */
  maxAttempts: number;
  /** The wait before the first retry of a 502; each later retry waits twice as long, up to maxBackoffMs. */
  baseBackoffMs: number;
  /** Caps the backoff of 502 retries. */
  maxBackoffMs: number;
  /** The fraction (0 to 1) of each backoff that is randomised: the wait is drawn from [backoff*(1-jitter), backoff]. */
  jitter: number;
  /**
   * The longest Retry-After of a 429 the client waits out. A 429 asking
   * for longer is thrown at once (waiting less would only earn another 429).
   */
  maxRetryAfterMs: number;
}

/** The policy of a client made without a retry option. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  baseBackoffMs: 500,
  maxBackoffMs: 8000,
  jitter: 0.5,
  maxRetryAfterMs: 60_000,
});

/** Waits ms milliseconds; rejects with the signal's reason if it aborts first. */
export type SleepFunction = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface ClientOptions {
  /** The service, such as "http://localhost:8080" (a trailing slash is ignored). */
  baseURL: string;
  /** Sent as "Authorization: Bearer KEY"; the /api/v1/ endpoints (chat, verify, key) need one. */
  apiKey?: string | undefined;
  /** The fetch requests go through; the global fetch by default. */
  fetch?: typeof fetch | undefined;
  /**
   * The retry policy of chat, chatStream and verify: absent fields take
   * DEFAULT_RETRY_POLICY's value (jitter 0 means none); false turns
   * retries off.
   */
  retry?: Partial<RetryPolicy> | false | undefined;
  /** Replaces how the client waits between attempts (tests record waits with it). */
  sleep?: SleepFunction | undefined;
  /** Replaces the source of the backoff jitter: numbers in [0, 1). */
  random?: (() => number) | undefined;
  /** Extra headers sent with every request. */
  headers?: Record<string, string> | undefined;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the request, the stream, and any wait between attempts. */
  signal?: AbortSignal | undefined;
}

interface Request {
  method: "GET" | "POST";
  path: string;
  query?: URLSearchParams | undefined;
  body?: unknown | undefined;
  accept?: string | undefined;
  prefer?: string | undefined;
  retried?: boolean | undefined;
}

/** The default sleep: a timer that an abort signal cuts short. */
export const defaultSleep: SleepFunction = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(ms, 0));
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** A client of the assistant service. One client may serve concurrent calls. */
export class AssistantClient {
  readonly baseURL: string;
  readonly retry: Readonly<RetryPolicy>;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch | undefined;
  readonly #sleep: SleepFunction;
  readonly #random: () => number;
  readonly #headers: Record<string, string>;

  constructor(options: ClientOptions) {
    if (!options || typeof options.baseURL !== "string" || options.baseURL === "") {
      throw new TypeError("assistant: baseURL is required");
    }
    this.baseURL = options.baseURL.replace(/\/+$/, "");
    this.#apiKey = options.apiKey || undefined;
    this.#fetch = options.fetch;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#headers = { ...options.headers };
    if (options.retry === false) {
      this.retry = Object.freeze({ ...DEFAULT_RETRY_POLICY, maxAttempts: 1 });
    } else {
      const r = options.retry ?? {};
      const d = DEFAULT_RETRY_POLICY;
      const pos = (v: number | undefined, def: number) => (v !== undefined && v > 0 ? v : def);
      this.retry = Object.freeze({
        maxAttempts: r.maxAttempts === undefined || r.maxAttempts === 0 ? d.maxAttempts : Math.max(1, Math.floor(r.maxAttempts)),
        baseBackoffMs: pos(r.baseBackoffMs, d.baseBackoffMs),
        maxBackoffMs: pos(r.maxBackoffMs, d.maxBackoffMs),
        jitter: r.jitter === undefined ? d.jitter : Math.min(Math.max(r.jitter, 0), 1),
        maxRetryAfterMs: pos(r.maxRetryAfterMs, d.maxRetryAfterMs),
      });
    }
  }

  /**
   * Sends one turn to POST /api/v1/chat and returns the whole answer.
   * Retried as the retry policy says. Needs an API key.
   */
  async chat(req: ChatRequest, opts: CallOptions = {}): Promise<ChatResponse> {
    return this.#call({ method: "POST", path: "/api/v1/chat", body: req, retried: true }, opts);
  }

  /**
   * Submits a turn to run in the background (POST /api/v1/chat with
   * Prefer: respond-async) and returns it queued; poll it with turn(), or
   * receive chat.turn.completed on a webhook (docs/webhooks.md). It counts
   * against the key's limit; a 429 is retried as chat's are.
   */
  async chatAsync(req: ChatRequest, opts: CallOptions = {}): Promise<Turn> {
    return this.#call({ method: "POST", path: "/api/v1/chat", body: req, prefer: "respond-async", retried: true }, opts);
  }

  /** An asynchronous turn of the key's workspace (GET /api/v1/chat/turns/{id}); a 404 AssistantError when there is none. */
  async turn(id: string, opts: CallOptions = {}): Promise<Turn> {
    return this.#call({ method: "GET", path: "/api/v1/chat/turns/" + encodeURIComponent(id) }, opts);
  }

  /**
   * Sends one turn with Accept: text/event-stream and yields its events as
   * they arrive: hop, delta, then final. The request is made when the
   * iteration starts; breaking out of the loop closes the connection.
   *
   * An answer that is not a stream (400, 401, 429, 502...) is retried as
   * chat is, then thrown as an AssistantError. An error event is yielded,
   * and if the loop asks for more, its AssistantError is thrown, so a loop
   * that ignores error events still stops on it. A stream cut before its
   * final event throws IncompleteStreamError. Nothing follows a final or
   * an error event.
   */
  async *chatStream(req: ChatRequest, opts: CallOptions = {}): AsyncGenerator<ChatEvent, void, undefined> {
    const resp = await this.#send({ method: "POST", path: "/api/v1/chat", body: req, accept: "text/event-stream", retried: true }, opts);
    const ct = resp.headers.get("Content-Type") ?? "";
    if (!ct.startsWith("text/event-stream")) {
      await resp.body?.cancel().catch(() => undefined);
      throw new Error(`assistant: expected an event stream, got ${JSON.stringify(ct)}`);
    }
    if (!resp.body) throw new IncompleteStreamError();
    for await (const msg of readSSE(resp.body)) {
      const ev = decodeChatEvent(msg);
      if (ev === null) continue; // an event this client does not know
      yield ev;
      if (ev.type === "error") throw ev.error;
      if (ev.type === "final") return;
    }
    opts.signal?.throwIfAborted();
    throw new IncompleteStreamError();
  }

  /**
   * Checks a text against the knowledge it cites (POST /api/v1/verify):
   * one verdict per claim. Retried as chat is. Needs an API key.
   */
  async verify(req: VerifyRequest, opts: CallOptions = {}): Promise<Confidence> {
    return this.#call({ method: "POST", path: "/api/v1/verify", body: req, retried: true }, opts);
  }

  /** Describes the API key the client sends (GET /api/v1/key): checks a key without spending a chat. */
  async key(opts: CallOptions = {}): Promise<KeyInfo> {
    return this.#call({ method: "GET", path: "/api/v1/key" }, opts);
  }

  /** Counts the entities the assistant can cite (GET /api/assistant/v1/knowledge-stats). */
  async knowledgeStats(opts: CallOptions = {}): Promise<KnowledgeStats> {
    return this.#call({ method: "GET", path: "/api/assistant/v1/knowledge-stats" }, opts);
  }

  /** Resolves 1 to 100 citation tokens into hover cards (POST /api/assistant/v1/resolve); resolveAll takes any number. */
  async resolve(tokens: Token[], opts: CallOptions = {}): Promise<ResolveResponse> {
    const body = { tokens: tokens.map((t) => ({ type: t.type, slug: t.slug })) };
    return this.#call({ method: "POST", path: "/api/assistant/v1/resolve", body }, opts);
  }

  /**
   * Resolves any number of tokens, in requests of at most MAX_RESOLVE_BATCH
   * tokens, one after the other. Duplicates are sent once. Both lists are
   * merged in input order, each token once. No tokens make no request. The
   * first failing request ends the call with its error.
   */
  async resolveAll(tokens: Iterable<Token>, opts: CallOptions = {}): Promise<ResolveResponse> {
    const unique = dedupeTokens(tokens);
    const out: ResolveResponse = { resolved: [], unresolved: [] };
    for (let start = 0; start < unique.length; start += MAX_RESOLVE_BATCH) {
      const r = await this.resolve(unique.slice(start, start + MAX_RESOLVE_BATCH), opts);
      out.resolved.push(...r.resolved);
      out.unresolved.push(...r.unresolved);
    }
    return out;
  }

  /** Searches the knowledge base in plain words (GET /api/assistant/v1/search); results come best first. */
  async search(params: SearchParams, opts: CallOptions = {}): Promise<SearchResponse> {
    const query = new URLSearchParams({ q: params.q });
    if (params.type) query.set("type", params.type);
    if (params.limit) query.set("limit", String(params.limit));
    return this.#call({ method: "GET", path: "/api/assistant/v1/search", query }, opts);
  }

  /** Ranks the most cited entities (GET /api/assistant/v1/leaderboard). */
  async leaderboard(params: LeaderboardParams = {}, opts: CallOptions = {}): Promise<Leaderboard> {
    const query = new URLSearchParams();
    if (params.days) query.set("days", String(params.days));
    if (params.limit) query.set("limit", String(params.limit));
    return this.#call({ method: "GET", path: "/api/assistant/v1/leaderboard", query }, opts);
  }

  /** The frameworks that apply to a constraint archetype in a vertical (POST /api/assistant/v1/preview). */
  async preview(req: PreviewRequest, opts: CallOptions = {}): Promise<Preview> {
    return this.#call({ method: "POST", path: "/api/assistant/v1/preview", body: req }, opts);
  }

  /** Lists the verticals and constraint archetypes (GET /api/assistant/v1/catalog). */
  async catalog(opts: CallOptions = {}): Promise<Catalog> {
    return this.#call({ method: "GET", path: "/api/assistant/v1/catalog" }, opts);
  }

  /** The service's OpenAPI 3.1 document (GET /api/assistant/openapi.json), parsed. */
  async openAPI(opts: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.#call({ method: "GET", path: "/api/assistant/openapi.json" }, opts);
  }

  async #call<T>(r: Request, opts: CallOptions): Promise<T> {
    const resp = await this.#send(r, opts);
    const text = await resp.text();
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new Error(`assistant: decoding the answer of ${r.method} ${r.path}: ${(e as Error).message}`);
    }
  }

  /** Makes the request, retrying per the policy; resolves to a 2xx response, rejects with an AssistantError otherwise. */
  async #send(r: Request, opts: CallOptions): Promise<Response> {
    const payload = r.body === undefined ? undefined : JSON.stringify(r.body);
    const attempts = r.retried ? Math.max(1, this.retry.maxAttempts) : 1;
    for (let attempt = 1; ; attempt++) {
      const resp = await this.#once(r, payload, opts);
      if (resp.status >= 200 && resp.status < 300) return resp;
      const err = await AssistantError.fromResponse(resp);
      if (attempt >= attempts) throw err;
      const wait = this.#retryWait(err, attempt);
      if (wait === null) throw err;
      await this.#sleep(wait, opts.signal);
    }
  }

  /** Whether an error is retried after attempt (from 1), and after how many milliseconds; null when it is not. */
  #retryWait(e: AssistantError, attempt: number): number | null {
    if (e.status === 429) {
      let wait = e.retryAfterMs ?? 0;
      if (wait <= 0 && e.retryAfterSeconds !== null && e.retryAfterSeconds > 0) wait = e.retryAfterSeconds * 1000;
      if (wait <= 0) wait = this.backoff(attempt);
      return wait > this.retry.maxRetryAfterMs ? null : wait;
    }
    if (e.status === 502) return this.backoff(attempt);
    return null;
  }

  /** The capped, jittered exponential backoff before retry number attempt (from 1), in milliseconds. */
  backoff(attempt: number): number {
    const { baseBackoffMs, maxBackoffMs, jitter } = this.retry;
    let d = baseBackoffMs;
    for (let i = 1; i < attempt && d < maxBackoffMs; i++) d *= 2;
    d = Math.min(d, maxBackoffMs);
    if (jitter > 0) d -= d * jitter * this.#random();
    return d;
  }

  async #once(r: Request, payload: string | undefined, opts: CallOptions): Promise<Response> {
    let url = this.baseURL + r.path;
    const qs = r.query?.toString();
    if (qs) url += "?" + qs;
    const headers: Record<string, string> = { ...this.#headers, Accept: r.accept ?? "application/json" };
    if (payload !== undefined) headers["Content-Type"] = "application/json";
    if (r.prefer) headers["Prefer"] = r.prefer;
    if (this.#apiKey) headers["Authorization"] = `Bearer ${this.#apiKey}`;
    const f = this.#fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("assistant: no fetch: pass one in the options");
    const init: RequestInit = { method: r.method, headers };
    if (payload !== undefined) init.body = payload;
    if (opts.signal) init.signal = opts.signal;
    // Called unbound from the global: browsers reject fetch called on another object.
    return this.#fetch ? f(url, init) : globalThis.fetch(url, init);
  }
}
