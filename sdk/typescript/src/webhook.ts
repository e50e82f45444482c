// Verifying webhook deliveries (Standard Webhooks), with the Web Crypto API
// only, so it runs in Node 20+, Deno, Bun and edge runtimes alike.

/** How far a delivery's webhook-timestamp may be from now (seconds). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** The body of a webhook delivery (docs/webhooks.md). */
export interface WebhookEvent {
  /** The event id, also the webhook-id header: drop duplicates by it. */
  id: string;
  /** key.created, key.revoked, key.rolled or chat.turn.completed. */
  type: string;
  /** When the event happened (RFC 3339). */
  timestamp: string;
  data: unknown;
}

/** Thrown by verifyWebhook for a delivery that does not verify. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderSource, name: string): string {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? "";
  const rec = h as Record<string, string | string[] | undefined>;
  for (const k of Object.keys(rec)) {
    if (k.toLowerCase() === name) {
      const v = rec[k];
      return Array.isArray(v) ? v.join(" ") : (v ?? "");
    }
  }
  return "";
}

function fromBase64(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(b: Uint8Array): string {
  let s = "";
  for (const c of b) s += String.fromCharCode(c);
  return btoa(s);
}

function equalConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a webhook delivery as Standard Webhooks specifies and returns its
 * event: webhook-id, webhook-timestamp and webhook-signature must be present,
 * the timestamp within WEBHOOK_TOLERANCE_SECONDS of now, and one of the
 * space-separated signatures equal to "v1," + base64(HMAC-SHA256(secret,
 * id.timestamp.body)). `secret` is the endpoint's "whsec_..." secret as shown
 * at creation; `body` must be the raw request body, exactly as received.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string | Uint8Array,
  now: Date = new Date(),
): Promise<WebhookEvent> {
  let key: Uint8Array<ArrayBuffer>;
  try {
    let s = secret.startsWith("whsec_") ? secret.slice(6) : secret;
    s = s.replace(/=+$/, "");
    key = fromBase64(s + "=".repeat((4 - (s.length % 4)) % 4));
  } catch {
    throw new WebhookVerificationError("the webhook secret is not a whsec_ base64 secret");
  }
  if (key.length === 0) throw new WebhookVerificationError("the webhook secret is empty");
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs) {
    throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  }
  if (!/^[0-9]+$/.test(ts)) throw new WebhookVerificationError("the timestamp is not a number");
  const skew = Math.floor(now.getTime() / 1000) - Number(ts);
  if (Math.abs(skew) > WEBHOOK_TOLERANCE_SECONDS) {
    throw new WebhookVerificationError("the timestamp is too far from now");
  }
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  const cryptoKey = await globalThis.crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", cryptoKey, signed));
  const want = "v1," + toBase64(mac);
  for (const sig of sigs.split(" ")) {
    if (sig && equalConstantTime(sig, want)) {
      const text = new TextDecoder().decode(bytes);
      try {
        return JSON.parse(text) as WebhookEvent;
      } catch {
        return { id, type: "", timestamp: "", data: text };
      }
    }
  }
  throw new WebhookVerificationError("no signature matches");
}
