// Shared set-up of the browser tests: Debian's Chromium, headless, with the
// flags this closed network needs, and a page that may reach only the
// service under test.
import { chromium } from "playwright-core";

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}

// openPage returns a page of a fresh context that aborts every request
// outside origin (data: URLs aside) and records it in `outside`, and
// records script errors in `errors`.
export async function openPage(browser, origin) {
  const page = await (await browser.newContext()).newPage();
  const outside = [];
  const errors = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("data:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, outside, errors };
}
