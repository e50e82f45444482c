/** Problem types the service sends (docs/api.md lists them). */
export const ProblemType = {
  validation: "urn:assistant:problem:validation",
  tooLarge: "urn:assistant:problem:too-large",
  rateLimited: "urn:assistant:problem:rate-limited",
  unauthorized: "urn:assistant:problem:unauthorized",
  unavailable: "urn:assistant:problem:unavailable",
} as const;

/** One invalid part of a request in a 400 problem. */
export interface ProblemDetailItem {
  message?: string | undefined;
  location?: string | undefined;
  value?: unknown | undefined;
}

/** An RFC 9457 problem document as the service sends it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string | undefined;
  request_id?: string | undefined;
  errors?: ProblemDetailItem[] | undefined;
  retry_after_seconds?: number | undefined;
  [extension: string]: unknown;
}

/**
 * An answer of the service other than 2xx (or an error event of a stream):
 * the problem document it carried, plus the status and the headers a
 * caller acts on. Every method of AssistantClient rejects with it for such
 * answers.
 */
export class AssistantError extends Error {
  /** The HTTP status of the response (the problem's status for a stream's error event). */
  readonly status: number;
  /** The problem document; null when the body was not one (see body). */
  readonly problem: Problem | null;
  /** The problem's type URI ("about:blank" when there was no problem document). */
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** The problem's request_id, else the X-Request-Id header. */
  readonly requestId: string;
  /** The invalid fields of a 400. */
  readonly errors: ProblemDetailItem[];
  /** The problem's retry_after_seconds (429s), else null. */
  readonly retryAfterSeconds: number | null;
  /** The Retry-After header in seconds (delay-seconds or an HTTP date), else null. */
  readonly retryAfter: number | null;
  /** The Retry-After header in milliseconds, else null. */
  readonly retryAfterMs: number | null;
  /** The RateLimit header as sent, else null; parseRateLimit reads it. */
  readonly rateLimit: string | null;
  /** The RateLimit-Policy header as sent, else null. */
  readonly rateLimitPolicy: string | null;
  /** All the response headers (empty for a stream's error event). */
  readonly headers: Headers;
  /** The raw body when it was not a problem document. */
  readonly body: string | null;

  constructor(status: number, problem: Problem | null, headers: Headers = new Headers(), body: string | null = null, statusText = "") {
    const title = problem?.title || statusText || `HTTP ${status}`;
    const requestId = problem?.request_id || headers.get("X-Request-Id") || "";
    let msg = `assistant: ${status} ${title}`;
    if (problem?.detail) msg += `: ${problem.detail}`;
    if (requestId) msg += ` (request ${requestId})`;
    super(msg);
    this.name = "AssistantError";
    this.status = status;
    this.problem = problem;
    this.type = problem?.type ?? "about:blank";
    this.title = title;
    this.detail = problem?.detail ?? "";
    this.requestId = requestId;
    this.errors = problem?.errors ?? [];
    this.retryAfterSeconds = typeof problem?.retry_after_seconds === "number" ? problem.retry_after_seconds : null;
    this.retryAfterMs = parseRetryAfter(headers.get("Retry-After"), Date.now());
    this.retryAfter = this.retryAfterMs === null ? null : this.retryAfterMs / 1000;
    this.rateLimit = headers.get("RateLimit");
    this.rateLimitPolicy = headers.get("RateLimit-Policy");
    this.headers = headers;
    this.body = body;
  }

  /** Reads a non-2xx response (consuming its body) into an AssistantError. */
  static async fromResponse(resp: Response): Promise<AssistantError> {
    let text = "";
    try {
      text = await resp.text();
    } catch {
      // a body cut short: the status and headers still say what happened
    }
    let problem: Problem | null = null;
    try {
      const v: unknown = JSON.parse(text);
      if (v && typeof v === "object" && !Array.isArray(v) && typeof (v as Problem).status === "number" && (v as Problem).status !== 0) {
        problem = v as Problem;
      }
    } catch {
      // not JSON
    }
    return new AssistantError(resp.status, problem, resp.headers, problem ? null : text, resp.statusText);
  }
}

/**
 * Reads a Retry-After value, delay-seconds or an HTTP date, into
 * milliseconds (never negative); null when absent or malformed.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number | null {
  const v = (value ?? "").trim();
  if (v === "") return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  return Math.max(t - nowMs, 0);
}

/** A parsed RateLimit header, such as "chat";r=59;t=1. */
export interface RateLimitState {
  /** The policy name: chat, soft or hard. */
  policy: string;
  /** r: requests left in the window. */
  remaining: number;
  /** t: seconds until one more is admitted. */
  reset: number;
}

/** Reads a RateLimit header value; null when it is empty or malformed. */
export function parseRateLimit(value: string | null | undefined): RateLimitState | null {
  const parts = (value ?? "").trim().split(";");
  if (parts.length < 2) return null;
  const policy = parts[0]!.trim().replace(/^"|"$/g, "");
  let remaining: number | undefined;
  let reset: number | undefined;
  for (const p of parts.slice(1)) {
    const [k, v = ""] = p.trim().split("=", 2);
    if (!/^-?\d+$/.test(v)) return null;
    if (k === "r") remaining = Number(v);
    if (k === "t") reset = Number(v);
  }
  if (policy === "" || remaining === undefined || reset === undefined) return null;
  return { policy, remaining, reset };
}

function hasStatus(err: unknown, ...statuses: number[]): err is AssistantError {
  return err instanceof AssistantError && statuses.includes(err.status);
}

/** Whether err is a 429 answer. */
export const isRateLimited = (err: unknown): err is AssistantError => hasStatus(err, 429);
/** Whether err is a 401 answer: a missing, invalid, revoked or expired API key. */
export const isUnauthorized = (err: unknown): err is AssistantError => hasStatus(err, 401);
/** Whether err is a 400 answer; its errors name the invalid fields. */
export const isValidation = (err: unknown): err is AssistantError => hasStatus(err, 400);
/** Whether err is a 413 answer (a body over 256 KiB). */
export const isTooLarge = (err: unknown): err is AssistantError => hasStatus(err, 413);
/** Whether err is a 502 or 503 answer: the model provider or another dependency is down. */
export const isUnavailable = (err: unknown): err is AssistantError => hasStatus(err, 502, 503);

/** Thrown when a chat stream ends without a final or an error event. */
export class IncompleteStreamError extends Error {
  constructor() {
    super("assistant: the stream ended before its final event");
    this.name = "IncompleteStreamError";
  }
}
