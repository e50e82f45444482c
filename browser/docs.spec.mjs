// Browser test of the interactive API docs (D15): loads /api/assistant/docs/
// in Debian's headless Chromium with every non-local request blocked, runs
// "Try it out" on knowledge-stats, and checks that the call succeeds, carries
// X-Try-It-Now: 1 and is answered with Cache-Control: no-store (D14).
//
// Usage: node docs.spec.mjs BASE_URL SCREENSHOT_PATH
import { launch, openPage } from "./chromium.mjs";
import assert from "node:assert/strict";

const [base, screenshot] = process.argv.slice(2);
assert.ok(base, "usage: node docs.spec.mjs BASE_URL SCREENSHOT_PATH");
const origin = new URL(base).origin;

const browser = await launch();
let failed = false;
try {
  const { page, outside, errors } = await openPage(browser, origin);

  await page.goto(base + "/api/assistant/docs/", { waitUntil: "networkidle" });
  const op = page.locator("#operations-Knowledge-getKnowledgeStats");
  await op.waitFor({ timeout: 60000 });
  await op.locator(".opblock-summary").click();
  // The same button reads "Try it out" or "Cancel" depending on the mode.
  const tryOut = op.locator("button.try-out__btn");
  await tryOut.waitFor({ timeout: 60000 });
  if (/try it out/i.test(await tryOut.innerText())) await tryOut.click();
  const execute = op.locator("button.execute");
  await execute.waitFor({ state: "visible", timeout: 60000 });

  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().includes("/api/assistant/v1/knowledge-stats"), { timeout: 60000 }),
    execute.click(),
  ]);
  assert.equal(response.status(), 200, "try-it call status");
  assert.equal(response.request().headers()["x-try-it-now"], "1", "try-it call sends X-Try-It-Now: 1");
  assert.equal(response.headers()["cache-control"], "no-store", "try-it response is not cached");
  const body = await response.json();
  assert.equal(body.total, body.frameworks + body.papers + body.blogs, "stats add up");

  await op.locator(".responses-wrapper .live-responses-table").waitFor({ timeout: 60000 });
  const shown = await op.locator(".live-responses-table tbody .response-col_status").first().innerText();
  assert.match(shown, /200/, "the page shows the 200 response");

  assert.deepEqual(outside, [], "the page made no request outside the service");
  assert.deepEqual(errors, [], "the page raised no script error");
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });
  console.log("docs page: try-it call succeeded with", JSON.stringify(body));
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
