import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { verifyWebhook, WebhookVerificationError } from "../src/index.js";

// The Standard Webhooks test vectors the service's signer and the Go client
// are held to.
const vectors = JSON.parse(
  readFileSync(new URL("../../../../internal/webhook/testdata/standard-webhooks-vectors.json", import.meta.url), "utf8"),
);

test("verifyWebhook: the specification's published signature", async () => {
  for (const c of vectors.sign) {
    const h = { "webhook-id": c.id, "webhook-timestamp": String(c.timestamp), "webhook-signature": c.signature };
    const now = new Date(c.timestamp * 1000);
    const ev = await verifyWebhook(c.secret, h, c.payload, now);
    assert.equal((ev as unknown as { test: number }).test, 2432232314);
    await assert.rejects(
      verifyWebhook(c.secret, { ...h, "webhook-timestamp": String(c.timestamp + 1) }, c.payload, now),
      WebhookVerificationError,
    );
  }
});

test("verifyWebhook: the specification's verification cases", async () => {
  const d = vectors.defaults;
  const now = new Date(d.now * 1000);
  for (const c of vectors.verify) {
    const ts = d.now + c.offset;
    const valid =
      "v1," + createHmac("sha256", Buffer.from(d.secret, "base64")).update(`${d.id}.${ts}.${d.payload}`).digest("base64");
    const h = new Headers({ "webhook-id": d.id, "webhook-timestamp": String(ts), "webhook-signature": valid });
    if (c.signature) h.set("webhook-signature", c.signature);
    if (c.signatures) h.set("webhook-signature", c.signatures.join(" ").replace("VALID", valid));
    if (c.drop) h.delete(c.drop);
    const got = verifyWebhook(c.secret || d.secret, h, c.payload || d.payload, now);
    if (c.valid) await got;
    else await assert.rejects(got, WebhookVerificationError, c.name);
  }
});
