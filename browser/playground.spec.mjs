// Browser test of the admin playground (issue 14): set up the first admin
// through the one-time link, open /admin/playground, send a business
// question, and see the answer with a hover card, the per-claim verdicts,
// the confidence and the reasoning trace; then a follow-up turn that sends
// the conversation as history.
//
// Usage: node playground.spec.mjs BASE_URL SETUP_URL SCREENSHOT_PATH
import { launch, openPage } from "./chromium.mjs";
import assert from "node:assert/strict";

const [base, setupURL, screenshot] = process.argv.slice(2);
assert.ok(base && setupURL, "usage: node playground.spec.mjs BASE_URL SETUP_URL SCREENSHOT_PATH");
const origin = new URL(base).origin;

const browser = await launch();
let failed = false;
try {
  const { page, outside, errors } = await openPage(browser, origin);
  const consoleErrors = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });

  await page.goto(setupURL);
  await page.fill('input[name="email"]', "owner@example.com");
  await page.fill('input[name="password"]', "a long admin passphrase");
  await page.fill('input[name="confirm"]', "a long admin passphrase");
  await Promise.all([page.waitForURL("**/admin/integrations"), page.click('button[type="submit"]')]);

  // The nav link leads to the playground.
  await Promise.all([page.waitForURL("**/admin/playground"), page.click('header a[href="/admin/playground"]')]);
  await page.selectOption("#pg-mode", "operator");
  await page.selectOption("#pg-vertical", "ecommerce");
  await page.fill("#pg-message", "Our packing station cannot keep up and orders ship late. What should we do first?");
  const [chatResponse] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/admin/playground/chat"), { timeout: 60000 }),
    page.click("#pg-send"),
  ]);
  assert.equal(chatResponse.status(), 200, "playground chat status");
  const sent = JSON.parse(chatResponse.request().postData());
  assert.deepEqual(sent.history, [], "the first turn has no history");
  assert.equal(sent.vertical, "ecommerce");

  const turn = page.locator('.pg-turn[data-turn="1"]');
  await turn.waitFor({ timeout: 60000 });

  // A hover card from <assistant-citations>.
  const cites = turn.locator("assistant-citations");
  assert.equal(await cites.getAttribute("api-base"), origin, "api-base is the same origin");
  const citation = cites.locator('[part="citation"]').first();
  await citation.locator("button").waitFor({ timeout: 60000 });
  const card = citation.locator('[part="card"]');
  assert.equal(await card.isVisible(), false, "card hidden before hover");
  await citation.locator("button").hover();
  await card.waitFor({ state: "visible", timeout: 10000 });
  assert.ok((await card.locator('[part="card-title"]').innerText()).trim().length > 0, "the card has a title");

  // Confidence, verdicts with status, trace.
  assert.match(await turn.locator(".pg-confidence").innerText(), /confidence (high|medium|low|none)/);
  const verdicts = turn.locator(".pg-verdicts li.pg-verdict");
  assert.ok((await verdicts.count()) > 0, "at least one claim verdict");
  assert.match(await verdicts.first().getAttribute("data-status"), /^(verified|unsupported|contradicted)$/);
  const hops = turn.locator(".pg-trace li.pg-hop");
  assert.ok((await hops.count()) > 0, "at least one reasoning hop");
  assert.ok((await turn.locator(".pg-raw").textContent()).includes('"reasoning_trace"'), "raw JSON shown");
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

  // A follow-up carries the conversation so far.
  await page.mouse.move(0, 0);
  await page.fill("#pg-message", "And how do we measure whether it worked?");
  const [second] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/admin/playground/chat"), { timeout: 60000 }),
    page.click("#pg-send"),
  ]);
  assert.equal(second.status(), 200);
  const history = JSON.parse(second.request().postData()).history;
  assert.equal(history.length, 2, "the second turn sends the first as history");
  assert.deepEqual(history.map((h) => h.role), ["user", "assistant"]);
  await page.locator('.pg-turn[data-turn="2"]').waitFor({ timeout: 60000 });
  // The conversation reads top to bottom: the first turn above the second.
  const order = await page.locator("#pg-conversation .pg-turn").evaluateAll((els) => els.map((e) => e.getAttribute("data-turn")));
  assert.deepEqual(order, ["1", "2"], "turns in order, oldest first");

  // A question outside its scope is declined, and the page says so and why
  // (not "0 of N claims verified").
  await page.fill("#pg-message", "What is the capital of France?");
  await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/admin/playground/chat"), { timeout: 60000 }),
    page.click("#pg-send"),
  ]);
  const declined = page.locator('.pg-turn[data-turn="3"]');
  await declined.waitFor({ timeout: 60000 });
  const meta = await declined.locator(".pg-confidence").innerText();
  assert.match(meta, /declined/i, "the decline is named");
  assert.match(meta, /outside what it answers/, "the decline says why");
  assert.doesNotMatch(meta, /claims verified/, "no claim count on a decline");
  if (screenshot) {
    await page.screenshot({ path: screenshot.replace(/\.png$/, "-1280.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenshot.replace(/\.png$/, "-390.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  // Bad input (past the textarea's maxlength): the server's message.
  await page.evaluate(() => document.getElementById("pg-message").removeAttribute("maxlength"));
  await page.fill("#pg-message", "x".repeat(8001));
  await page.click("#pg-send");
  await page.locator("#pg-error").waitFor({ state: "visible", timeout: 10000 });
  assert.match(await page.locator("#pg-error").innerText(), /at most 8000/);

  assert.deepEqual(outside, [], "the playground made no request outside the service");
  assert.deepEqual(errors, [], "no script error");
  assert.deepEqual(consoleErrors.filter((m) => /Content Security Policy/i.test(m)), [], "no CSP violation");
  console.log("playground: answer with hover card, verdicts, trace; history sent; 400 shown");
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
