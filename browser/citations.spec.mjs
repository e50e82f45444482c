// Browser test of the <assistant-citations> web component: a page of
// another origin (about:blank) loads the module from the service, with an
// answer carrying two real tokens and one unknown. Checks one batched
// /resolve request, the card on hover, the card on keyboard focus, Escape,
// and the unknown token left as plain text.
//
// Usage: node citations.spec.mjs BASE_URL SCREENSHOT_PATH
import { launch, openPage } from "./chromium.mjs";
import assert from "node:assert/strict";

const [base, screenshot] = process.argv.slice(2);
assert.ok(base, "usage: node citations.spec.mjs BASE_URL SCREENSHOT_PATH");
const origin = new URL(base).origin;

const browser = await launch();
let failed = false;
try {
  const { page, outside, errors } = await openPage(browser, origin);
  const resolves = [];
  page.on("request", (req) => {
    if (req.url().endsWith("/api/assistant/v1/resolve") && req.method() === "POST") resolves.push(req);
  });

  // The page is not the service's origin: the module and the API are
  // fetched cross-origin, as on a customer's site.
  const resolved = page.waitForResponse((r) => r.url().endsWith("/api/assistant/v1/resolve") && r.request().method() === "POST", { timeout: 60000 });
  await page.setContent(`<!doctype html>
<html><head><meta charset="utf-8"><title>citations</title>
<script type="module" src="${origin}/components/assistant-citations.js"></script>
<style>body { font: 16px/1.5 sans-serif; margin: 2rem; max-width: 40rem; }</style></head>
<body>
<p><a id="before" href="#">start</a></p>
<assistant-citations api-base="${origin}">
  <p>Find the bottleneck first [framework:theory-of-constraints], and remember that
  work in progress equals throughput times lead time [paper:little-1961-queuing-formula].
  A made-up source [paper:no-such-paper-1999] stays as it is.</p>
  <p>In code a token is literal: <code>[blog:in-code]</code>.</p>
</assistant-citations>
</body></html>`);
  const response = await resolved;
  assert.equal(response.status(), 200, "resolve status");
  const body = await response.json();
  const titles = Object.fromEntries(body.resolved.map((c) => [`[${c.token}]`, c.title]));
  const sent = JSON.parse(response.request().postData());
  assert.deepEqual(sent.tokens.map((t) => `[${t.type}:${t.slug}]`).sort(), [
    "[framework:theory-of-constraints]", "[paper:little-1961-queuing-formula]", "[paper:no-such-paper-1999]",
  ], "the three distinct tokens are sent in one request");

  const el = page.locator("assistant-citations");
  const first = el.locator('[part="citation"][data-token="[framework:theory-of-constraints]"]').first();
  const second = el.locator('[part="citation"][data-token="[paper:little-1961-queuing-formula]"]');
  await first.locator("button").waitFor({ timeout: 60000 });
  await second.locator("button").waitFor({ timeout: 60000 });

  assert.equal(await el.locator('[part="content"] code').innerText(), "[blog:in-code]", "a token in code is left alone");

  // Unknown token: plain text as written, no trigger.
  const unknown = el.locator('[part="unresolved"][data-token="[paper:no-such-paper-1999]"]');
  assert.equal(await unknown.innerText(), "[paper:no-such-paper-1999]", "unknown token stays as written");
  assert.equal(await el.locator('[part="citation"]').count(), 2, "only the two real tokens become citations");
  assert.equal(await el.locator('[part="unresolved"] button, [part="unresolved"] a').count(), 0, "unknown token is plain text");

  // Hover the first: its card shows the title.
  const card1 = first.locator('[part="card"]');
  assert.equal(await card1.isVisible(), false, "card hidden before hover");
  await first.locator("button").hover();
  await card1.waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await card1.locator('[part="card-title"]').innerText(), titles["[framework:theory-of-constraints]"], "hover card title");
  assert.equal(await first.locator("button").getAttribute("aria-expanded"), "true", "aria-expanded on hover");
  const describedBy = await first.locator("button").getAttribute("aria-describedby");
  assert.equal(await card1.getAttribute("id"), describedBy, "aria-describedby names the card");
  await page.mouse.move(0, 0);
  await card1.waitFor({ state: "hidden", timeout: 10000 });

  // Keyboard: Tab from the link before the element until the second
  // trigger has focus; its card shows.
  await page.locator("#before").focus();
  const card2 = second.locator('[part="card"]');
  let focused = "";
  for (let i = 0; i < 8 && focused !== "[paper:little-1961-queuing-formula]"; i++) {
    await page.keyboard.press("Tab");
    focused = await page.evaluate(() => {
      const a = document.activeElement?.shadowRoot?.activeElement;
      return a?.closest("[part=citation]")?.dataset.token === undefined || a.tagName !== "BUTTON" ? "" : a.closest("[part=citation]").dataset.token;
    });
  }
  assert.equal(focused, "[paper:little-1961-queuing-formula]", "Tab reaches the second citation");
  await card2.waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await card2.locator('[part="card-title"]').innerText(), titles["[paper:little-1961-queuing-formula]"], "focus card title");
  assert.equal(await second.locator("button").getAttribute("aria-expanded"), "true", "aria-expanded on focus");
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });

  // Escape closes it, focus stays on the trigger.
  await page.keyboard.press("Escape");
  await card2.waitFor({ state: "hidden", timeout: 10000 });
  assert.equal(await second.locator("button").getAttribute("aria-expanded"), "false", "aria-expanded after Escape");

  assert.equal(resolves.length, 1, "exactly one /resolve request");

  // New content re-renders (MutationObserver); cached tokens are not asked
  // for again, only the new one.
  const again = page.waitForResponse((r) => r.url().endsWith("/api/assistant/v1/resolve") && r.request().method() === "POST", { timeout: 60000 });
  await page.evaluate(() => {
    const p = document.createElement("p");
    p.textContent = "Again [framework:theory-of-constraints] and [framework:value-stream-mapping].";
    document.querySelector("assistant-citations").append(p);
  });
  const second2 = JSON.parse((await again).request().postData());
  assert.deepEqual(second2.tokens, [{ type: "framework", slug: "value-stream-mapping" }], "only the new token is resolved");
  await el.locator('[part="citation"][data-token="[framework:theory-of-constraints]"]').nth(1).waitFor({ timeout: 10000 });
  await el.locator('[part="citation"][data-token="[framework:value-stream-mapping]"]').waitFor({ timeout: 10000 });
  assert.equal(resolves.length, 2, "one more /resolve request for the new content");
  // Escape closes a card open under the pointer while focus is elsewhere.
  await page.locator("#before").focus();
  await first.locator("button").hover();
  await card1.waitFor({ state: "visible", timeout: 10000 });
  await page.keyboard.press("Escape");
  await card1.waitFor({ state: "hidden", timeout: 10000 });
  await page.mouse.move(0, 0);

  // A confidence set on the element highlights, in the card, the passage
  // its evidence locates by field and UTF-16 offsets.
  const little = body.resolved.find((c) => c.slug === "little-1961-queuing-formula");
  const start = little.summary.indexOf("Little's law therefore links");
  assert.ok(start > 0, "the summary has the sentence");
  const end = little.summary.indexOf(".", start) + 1;
  const quote = little.summary.slice(start, end);
  await page.evaluate(([start, end, quote]) => {
    document.querySelector("assistant-citations").confidence = { verdicts: [{ claim: "x", status: "verified", citations: [],
      evidence: { type: "paper", slug: "little-1961-queuing-formula", snippet: quote, field: "summary", start, end, quote } }] };
  }, [start, end, quote]);
  const mark = second.locator('[part="card"] mark[part="evidence"]');
  await mark.waitFor({ state: "attached", timeout: 10000 });
  assert.equal(await mark.textContent(), quote, "the evidence passage is highlighted");
  assert.equal(await el.locator('mark[part="evidence"]').count(), 1, "only the evidence's card highlights");

  assert.deepEqual(outside, [], "the page made no request outside the service");
  assert.deepEqual(errors, [], "the page raised no script error");
  console.log("citations: one /resolve request; cards on hover and focus:", JSON.stringify(titles));

  // XSS and batching, against a scripted /resolve: card text that looks
  // like HTML is shown as text, a javascript: URL gets no link, and 150
  // distinct tokens go out as 100 + 50.
  const mock = await openPage(browser, origin);
  const batches = [];
  await mock.page.route(origin + "/api/assistant/v1/resolve", async (route) => {
    const { tokens } = JSON.parse(route.request().postData());
    batches.push(tokens.length);
    await route.fulfill({
      status: 200, contentType: "application/json", headers: { "Access-Control-Allow-Origin": "*" },
      body: JSON.stringify({
        resolved: tokens.map((t) => ({
          type: t.type, slug: t.slug, token: `${t.type}:${t.slug}`,
          title: `<img src=x onerror="window.__xss=1">${t.slug}`, summary: "<b>bold</b>",
          authors: ["<i>A</i>"], year: 2000, url: "javascript:window.__xss=1",
        })),
        unresolved: [],
      }),
    });
  });
  // Streaming: content changing while a request is in flight does not
  // ask for the same token again.
  let release;
  let gated = 0;
  const gate = new Promise((r) => (release = r));
  await mock.page.route(origin + "/api/assistant/v1/resolve", async (route) => { gated++; await gate; await route.fallback(); });
  await mock.page.setContent(`<!doctype html><script type="module" src="${origin}/components/assistant-citations.js"></script>
<assistant-citations api-base="${origin}"><p id="s">[blog:streamed]</p></assistant-citations>`);
  await mock.page.waitForFunction(() => customElements.get("assistant-citations"));
  for (let i = 0; i < 5; i++) {
    await mock.page.evaluate((i) => { document.getElementById("s").append(` more ${i}`); }, i);
    await mock.page.waitForTimeout(20);
  }
  release();
  await mock.page.locator('assistant-citations [part="citation"][data-token="[blog:streamed]"]').waitFor({ timeout: 60000 });
  assert.equal(gated, 1, "one request while content streamed in");
  assert.deepEqual(batches, [1], "one token in it");
  batches.length = 0;

  const many = Array.from({ length: 150 }, (_, i) => `[blog:b${i}]`).join(" ");
  await mock.page.setContent(`<!doctype html><script type="module" src="${origin}/components/assistant-citations.js"></script>
<assistant-citations api-base="${origin}"><p>${many}</p></assistant-citations>`);
  const m = mock.page.locator("assistant-citations");
  await m.locator('[part="citation"]').nth(149).waitFor({ state: "attached", timeout: 60000 });
  assert.deepEqual(batches.sort((a, b) => b - a), [100, 50], "150 tokens in two requests of 100 and 50");
  const c0 = m.locator('[part="citation"]').first();
  await c0.locator("button").hover();
  assert.equal(await c0.locator('[part="card-title"]').innerText(), '<img src=x onerror="window.__xss=1">b0', "title shown as text");
  assert.equal(await c0.locator('[part="card-summary"]').innerText(), "<b>bold</b>", "summary shown as text");
  assert.equal(await m.locator("img, b, i").count(), 0, "no element made from service text");
  assert.equal(await m.locator('[part="card-link"]').count(), 0, "no link to a javascript: URL");
  assert.equal(await mock.page.evaluate(() => window.__xss), undefined, "no script ran");
  assert.deepEqual(mock.errors, [], "the mocked page raised no script error");
  console.log("citations: service text rendered as text; 150 tokens resolved in batches", JSON.stringify(batches));
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
