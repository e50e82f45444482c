// Browser test of the admin area (issue 3): set up the first admin through
// the one-time link, create a key and see it once, reload and see it gone,
// keep a turn for conversation review, read it and delete it, revoke the
// key, and check that /api/v1/chat then answers 401 for it.
//
// Usage: node admin.spec.mjs BASE_URL SETUP_URL SCREENSHOT_PATH
import { launch, openPage } from "./chromium.mjs";
import assert from "node:assert/strict";

const [base, setupURL, screenshot] = process.argv.slice(2);
assert.ok(base && setupURL, "usage: node admin.spec.mjs BASE_URL SETUP_URL SCREENSHOT_PATH");
const origin = new URL(base).origin;

const browser = await launch();
let failed = false;
try {
  const { page, outside, errors } = await openPage(browser, origin);

  // First admin through the setup link.
  await page.goto(setupURL);
  await page.fill('input[name="email"]', "owner@example.com");
  await page.fill('input[name="password"]', "a long admin passphrase");
  await page.fill('input[name="confirm"]', "a long admin passphrase");
  await Promise.all([page.waitForURL("**/admin/integrations"), page.click('button[type="submit"]')]);
  assert.match(await page.textContent("body"), /owner@example\.com/);

  // Create a key: shown once.
  await page.fill('input[name="name"]', "browser test key");
  await Promise.all([page.waitForURL("**/created"), page.click('form[action="/admin/integrations/keys"] button')]);
  const key = (await page.textContent("#new-key")).trim();
  assert.match(key, /^sk_service_[0-9A-Za-z]{50}$/, "the new key is shown");
  const keyID = key.slice(11, 23);

  // Under the key, copy-ready snippets, each filled with the key and this
  // service's URL (issue 23), at a laptop's width and a phone's.
  const snippets = ["snippet-shell", "snippet-curl", "snippet-go", "snippet-typescript", "snippet-openai", "snippet-mcp"];
  for (const id of snippets) {
    const code = await page.textContent("#" + id);
    assert.ok(code.includes(key), `${id} holds the new key`);
    assert.ok(code.includes(origin), `${id} holds the service's URL ${origin}`);
    assert.equal(await page.locator(`button[data-copy="${id}"]`).count(), 1, `${id} has a copy button`);
  }
  assert.ok((await page.textContent("#snippet-openai")).includes(origin + "/api/v1/openai"), "the OpenAI snippet points at the facade");
  JSON.parse(await page.textContent("#snippet-mcp")); // the MCP config is JSON as it stands
  await page.setViewportSize({ width: 1280, height: 800 });
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-created.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5 && !e.closest("pre"))
    .map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "")));
  assert.deepEqual(overflow, [], "no horizontal overflow of the created page at 390 px (snippets scroll inside their blocks)");
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-created-390.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Reload: gone for good.
  await page.reload();
  assert.equal(await page.locator("#new-key").count(), 0, "the key is not shown after a reload");
  await page.locator("#key-gone").waitFor();
  assert.ok(!(await page.content()).includes(key), "the page no longer contains the key");

  // The key works against the API.
  const call = (k) => fetch(origin + "/api/v1/chat", {
    method: "POST", headers: { Authorization: "Bearer " + k, "Content-Type": "application/json" },
    body: JSON.stringify({ message: "hello" }),
  });
  assert.notEqual((await call(key)).status, 401, "the new key is accepted");

  // Conversation review (issue 22): turned on, a turn of the key is kept,
  // listed, read in full with its citations marked, and deleted.
  await page.goto(base + "/admin/review");
  assert.match(await page.textContent("body"), /No turns kept\./);
  await page.check('input[name="enabled"]');
  await page.fill('input[name="days"]', "7");
  await Promise.all([page.waitForURL("**/admin/review"), page.click('form[action="/admin/review"] button')]);
  assert.match(await page.textContent("body"), /Conversation review is on, 7 days\./);
  const asked = await fetch(origin + "/api/v1/chat", {
    method: "POST", headers: { Authorization: "Bearer " + key, "Content-Type": "application/json" },
    body: JSON.stringify({ message: "Our packing station cannot keep up and orders ship late" }),
  });
  assert.equal(asked.status, 200, "the reviewed turn is answered");
  const answered = await asked.json();
  await page.reload();
  const row = page.locator("#review-turns tbody tr");
  assert.equal(await row.count(), 1, "the turn is listed");
  assert.match(await row.textContent(), /Our packing station cannot keep up/);
  assert.ok((await row.textContent()).includes(keyID), "the row names the key's id");
  assert.ok(!(await page.content()).includes(key), "the review page never shows the key");
  await Promise.all([page.waitForURL("**/admin/review/rev_*"), page.click("#review-turns tbody tr a")]);
  assert.equal((await page.textContent("#review-message")).trim(), "Our packing station cannot keep up and orders ship late");
  assert.equal((await page.textContent("#review-answer")).trim(), answered.response.trim(), "the answer as the API gave it");
  assert.ok(await page.locator("#review-answer mark.citation").count() > 0, "its citations are marked");
  assert.ok(await page.locator("#review-trace tbody tr").count() > 0, "the trace is shown");
  if (answered.confidence.verdicts.length > 0) {
    assert.equal(await page.locator("#review-verdicts tbody tr").count(), answered.confidence.verdicts.length, "one row per verdict");
  }
  await page.setViewportSize({ width: 390, height: 844 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    "no horizontal overflow of the kept turn at 390 px");
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-review-390.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-review.png"), fullPage: true });
  await Promise.all([page.waitForURL("**/admin/review"), page.click('#review-turn button.danger')]);
  assert.match(await page.textContent("body"), /The turn was deleted\./);
  assert.match(await page.textContent("body"), /No turns kept\./);

  // The key table at a phone's width and a laptop's (issue 14): at 390 px
  // the rows stack as cards and the first row's Revoke stays on screen; at
  // 1280 px the actions cell is a normal table cell (row borders intact).
  await page.goto(base + "/admin/integrations");
  assert.equal(await page.getAttribute('nav.main-nav a[href="/admin/integrations"]', "aria-current"), "page", "the nav marks the current page");
  assert.equal(await page.locator('nav.main-nav a[aria-current="page"]').count(), 1);
  await page.setViewportSize({ width: 390, height: 844 });
  // The nav fits: every link within the viewport.
  for (const a of await page.locator("nav.main-nav a").all()) {
    const b = await a.boundingBox();
    assert.ok(b && b.x >= 0 && b.x + b.width <= 390, `nav link within 390 px (x ${b?.x}, width ${b?.width})`);
  }
  const firstRevoke = page.locator("table.keys tbody tr:first-child a.quiet-danger");
  const box = await firstRevoke.boundingBox();
  assert.ok(box, "the first row has a Revoke button");
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `Revoke is within the 390 px viewport (x ${box.x}, width ${box.width})`);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    "no horizontal overflow at 390 px");
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-390.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.equal(await page.locator("table.keys td.actions").first().evaluate((td) => getComputedStyle(td).display),
    "table-cell", "the actions cell is a table cell at 1280 px");
  const wide = await firstRevoke.boundingBox();
  assert.ok(wide && wide.x + wide.width <= 1280, "Revoke is within the 1280 px viewport");
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-1280.png"), fullPage: true });

  // Revoke with confirmation.
  await page.click(`tr[data-key-id="${keyID}"] a.quiet-danger`);
  await page.waitForURL(`**/keys/${keyID}/revoke`);
  await Promise.all([page.waitForURL("**/admin/integrations"), page.click("button.danger")]);
  assert.match(await page.textContent(`tr[data-key-id="${keyID}"]`), /revoked/);
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

  // The audit log, linked from the nav, shows the revocation first.
  await Promise.all([page.waitForURL("**/admin/audit"), page.click('nav.main-nav a[href="/admin/audit"]')]);
  assert.match(await page.textContent("#audit-log tbody tr:first-child"), /key\.revoked/);
  if (screenshot) await page.screenshot({ path: screenshot.replace(/\.png$/, "-audit.png"), fullPage: true });

  const after = await call(key);
  assert.equal(after.status, 401, "the revoked key gets 401 on /api/v1/chat");
  assert.equal(after.headers.get("content-type"), "application/problem+json");

  assert.deepEqual(outside, [], "the admin area made no request outside the service");
  assert.deepEqual(errors, [], "no script error");
  console.log("admin flow: setup, create (shown once), revoke, 401 for", keyID);
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
