// <assistant-citations>: turns the citation tokens [type:slug] in its
// content into accessible hover cards, resolved by the assistant service
// (docs/web-component.md). Dependency-free ES module; served by the service
// at /components/assistant-citations.js.
//
// Everything the service returns is written with textContent, never as
// HTML, and a card links only to http(s) URLs.

const TOKEN = /\[(framework|paper|blog):([a-z0-9_-]+)\]/g;
// HAS_TOKEN is TOKEN without the global flag: test() on a global regex
// moves its lastIndex, which matchAll would then start from.
const HAS_TOKEN = new RegExp(TOKEN.source);
const MAX_BATCH = 100; // POST /resolve takes 1..100 tokens
const SKIP = new Set(["A", "BUTTON", "CODE", "PRE", "SCRIPT", "STYLE", "TEXTAREA", "SELECT", "TEMPLATE"]);
const SCRIPT_ORIGIN = (() => {
  try {
    return new URL(import.meta.url).origin;
  } catch {
    return "";
  }
})();

// Resolved cards, per API base: token -> card object, or null when the
// service said the token does not resolve. Shared by every element on the
// page, so a token is asked for once.
const cache = new Map();
// Tokens waiting for the next batched request, per API base.
const queues = new Map();
// Tokens queued or in flight, per API base: token -> promise settled when
// its request is answered. A render while a request is in flight (content
// streaming in) waits for it instead of asking again.
const pending = new Map();

function cacheFor(base) {
  if (!cache.has(base)) cache.set(base, new Map());
  return cache.get(base);
}

// lookup resolves tokens through the cache; the ones not yet known are
// collected over one microtask from every element and sent in batches of
// at most 100.
function lookup(base, tokens) {
  const known = cacheFor(base);
  if (!pending.has(base)) pending.set(base, new Map());
  const waiting = pending.get(base);
  let q = queues.get(base);
  const waits = [];
  for (const t of tokens) {
    if (known.has(t)) continue;
    if (!waiting.has(t)) {
      if (!q) {
        q = { tokens: new Map() };
        queues.set(base, q);
        queueMicrotask(() => flush(base, q));
      }
      let done;
      const p = new Promise((r) => (done = r));
      q.tokens.set(t, done);
      waiting.set(t, p);
    }
    waits.push(waiting.get(t));
  }
  return Promise.all(waits).then(() => known);
}

async function flush(base, q) {
  queues.delete(base);
  const known = cacheFor(base);
  const all = [...q.tokens.keys()];
  for (let i = 0; i < all.length; i += MAX_BATCH) {
    const chunk = all.slice(i, i + MAX_BATCH);
    try {
      const res = await fetch(base + "/api/assistant/v1/resolve", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ tokens: chunk.map((t) => {
          const [type, slug] = t.slice(1, -1).split(":");
          return { type, slug };
        }) }),
      });
      if (!res.ok) throw new Error("resolve: HTTP " + res.status);
      const body = await res.json();
      // A card's token is type:slug; the cache is keyed by the token as
      // written, [type:slug].
      for (const card of body.resolved || []) {
        if (card && typeof card.type === "string" && typeof card.slug === "string") {
          known.set(`[${card.type}:${card.slug}]`, card);
        }
      }
      // Only an answer of the service makes a token unresolved; a failed
      // request leaves it unknown, to be asked for again on the next render.
      for (const t of chunk) if (!known.has(t)) known.set(t, null);
    } catch (e) {
      console.warn("assistant-citations:", e);
    }
    for (const t of chunk) {
      pending.get(base).delete(t);
      q.tokens.get(t)();
    }
  }
}

const STYLE = `
:host { display: block; }
.cite { position: relative; display: inline; }
.trigger {
  font: inherit; color: var(--assistant-citations-accent, #1d4ed8); background: none;
  border: 0; padding: 0; margin: 0; cursor: pointer; text-decoration: underline dotted;
  text-underline-offset: 0.2em;
}
.trigger:focus-visible { outline: 2px solid var(--assistant-citations-accent, #1d4ed8); outline-offset: 2px; border-radius: 2px; }
.card {
  position: absolute; left: 0; top: calc(100% + 4px); z-index: var(--assistant-citations-z-index, 1000);
  display: block; box-sizing: border-box; width: var(--assistant-citations-card-width, 22rem); max-width: 90vw;
  padding: 0.75rem 0.9rem; text-align: left; white-space: normal;
  font: var(--assistant-citations-card-font, 0.875rem/1.4 system-ui, sans-serif);
  color: var(--assistant-citations-card-color, #111827);
  background: var(--assistant-citations-card-background, #ffffff);
  border: 1px solid var(--assistant-citations-card-border, #d1d5db); border-radius: var(--assistant-citations-card-radius, 8px);
  box-shadow: 0 6px 20px rgba(0, 0, 0, 0.15);
}
.card[hidden] { display: none; }
.card-title { display: block; font-weight: 600; }
.card-meta { display: block; opacity: 0.75; margin-top: 0.15rem; }
.card-summary {
  display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; margin-top: 0.4rem;
  -webkit-line-clamp: var(--assistant-citations-summary-lines, 6); line-clamp: var(--assistant-citations-summary-lines, 6);
}
.card-summary.has-evidence { display: block; -webkit-line-clamp: none; line-clamp: none; }
.card-evidence { display: block; margin-top: 0.4rem; }
mark.evidence {
  color: inherit; background: var(--assistant-citations-evidence-background, #fef08a); border-radius: 2px;
}
mark.evidence.contradicted {
  background: var(--assistant-citations-contradicted-background, #fecaca);
}
.card-link { display: inline-block; margin-top: 0.4rem; color: var(--assistant-citations-accent, #1d4ed8); }
`;

// The styles as a constructed stylesheet where the browser has them (not
// subject to a page's CSP on inline styles), else a <style> element.
const SHEET = (() => {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLE);
    return sheet;
  } catch {
    return null;
  }
})();

let uid = 0;

export class AssistantCitations extends HTMLElement {
  static get observedAttributes() {
    return ["api-base"];
  }

  constructor() {
    super();
    this.attachShadow({ mode: "open" });
    if (SHEET) this.shadowRoot.adoptedStyleSheets = [SHEET];
    this._id = ++uid;
    this._generation = 0;
    this._scheduled = false;
    this._observer = new MutationObserver(() => this._schedule());
    // Closers of the rendered cards, for Escape pressed while a card is
    // open under the pointer but focus is elsewhere on the page.
    this._closers = [];
    this._onKey = (e) => {
      if (e.key === "Escape") for (const close of this._closers) close();
    };
  }

  connectedCallback() {
    this._observer.observe(this, { childList: true, subtree: true, characterData: true });
    document.addEventListener("keydown", this._onKey);
    this._schedule();
  }

  disconnectedCallback() {
    this._observer.disconnect();
    document.removeEventListener("keydown", this._onKey);
  }

  attributeChangedCallback() {
    if (this.isConnected) this._schedule();
  }

  // confidence is the confidence object of the answer shown (a chat
  // response's or POST /api/v1/verify's): a card then highlights the
  // passage of its entity that a verified or contradicted claim rests on,
  // located by the evidence's field and UTF-16 offsets.
  get confidence() {
    return this._confidence || null;
  }

  set confidence(value) {
    this._confidence = value && typeof value === "object" ? value : null;
    if (this.isConnected) this._schedule();
  }

  // _evidenceFor is the first evidence of a verified, else contradicted,
  // verdict for the card's entity whose field, offsets and quote agree
  // with the card, with the field's text; null when there is none.
  _evidenceFor(card) {
    const verdicts = this._confidence && Array.isArray(this._confidence.verdicts) ? this._confidence.verdicts : [];
    for (const status of ["verified", "contradicted"]) {
      for (const v of verdicts) {
        const e = v && v.evidence;
        if (!v || v.status !== status || !e || e.type !== card.type || e.slug !== card.slug) continue;
        const text = fieldText(card, e.field);
        if (text === null || !Number.isInteger(e.start) || !Number.isInteger(e.end)) continue;
        if (text.slice(e.start, e.end) !== e.quote || e.quote === "") continue;
        return { field: e.field, text, start: e.start, end: e.end, status };
      }
    }
    return null;
  }

  // The API base: the api-base attribute, else the origin this script was
  // loaded from.
  get apiBase() {
    return (this.getAttribute("api-base") || SCRIPT_ORIGIN).replace(/\/+$/, "");
  }

  _schedule() {
    if (this._scheduled) return;
    this._scheduled = true;
    queueMicrotask(() => {
      this._scheduled = false;
      this.render();
    });
  }

  // render copies the light DOM into the shadow root, tokens as written,
  // then upgrades the tokens that resolve once their cards are known.
  async render() {
    const generation = ++this._generation;
    const base = this.apiBase;
    const known = cacheFor(base);
    const missing = [...this._paint(known)].filter((t) => !known.has(t));
    if (missing.length === 0) return;
    await lookup(base, missing);
    if (generation === this._generation) this._paint(known);
  }

  // _paint renders the content with the cards known so far and returns the
  // tokens it found (those in skipped elements are not tokens).
  _paint(known) {
    const root = this.shadowRoot;
    const content = document.createElement("div");
    content.setAttribute("part", "content");
    for (const child of this.childNodes) content.appendChild(child.cloneNode(true));
    for (const s of content.querySelectorAll("script")) s.remove();

    const texts = [];
    const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => {
        for (let p = n.parentElement; p && p !== content; p = p.parentElement) {
          if (SKIP.has(p.tagName)) return NodeFilter.FILTER_REJECT;
        }
        return HAS_TOKEN.test(n.data) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
      },
    });
    while (walker.nextNode()) texts.push(walker.currentNode);

    this._closers = [];
    const found = new Set();
    let n = 0;
    for (const text of texts) {
      const frag = document.createDocumentFragment();
      let last = 0;
      for (const m of text.data.matchAll(TOKEN)) {
        found.add(m[0]);
        if (m.index > last) frag.append(text.data.slice(last, m.index));
        const card = known.get(m[0]);
        frag.append(card ? this._citation(m[0], card, ++n) : this._plain(m[0]));
        last = m.index + m[0].length;
      }
      if (last < text.data.length) frag.append(text.data.slice(last));
      text.replaceWith(frag);
    }

    if (SHEET) {
      root.replaceChildren(content);
    } else {
      const style = document.createElement("style");
      style.textContent = STYLE;
      root.replaceChildren(style, content);
    }
    return found;
  }

  // An unresolved token (or one not resolved yet) stays as written, as
  // plain text.
  _plain(token) {
    const span = document.createElement("span");
    span.setAttribute("part", "unresolved");
    span.dataset.token = token;
    span.textContent = token;
    return span;
  }

  _citation(token, card, n) {
    const id = `assistant-citation-${this._id}-${n}`;
    const wrap = document.createElement("span");
    wrap.className = "cite";
    wrap.setAttribute("part", "citation");
    wrap.dataset.token = token;

    const trigger = document.createElement("button");
    trigger.type = "button";
    trigger.className = "trigger";
    trigger.setAttribute("part", "trigger");
    trigger.textContent = card.title || token;
    trigger.setAttribute("aria-describedby", id);
    trigger.setAttribute("aria-controls", id);
    trigger.setAttribute("aria-expanded", "false");

    const box = document.createElement("span");
    box.className = "card";
    box.id = id;
    box.setAttribute("part", "card");
    box.hidden = true;
    const line = (cls, text) => {
      const s = document.createElement("span");
      s.className = cls;
      s.setAttribute("part", cls);
      s.textContent = text;
      box.append(s);
    };
    line("card-title", card.title || token);
    const authors = Array.isArray(card.authors) ? card.authors.filter((a) => typeof a === "string").join(", ") : "";
    const meta = [authors, card.year == null ? "" : String(card.year)].filter(Boolean).join(" · ");
    if (meta) line("card-meta", meta);
    const evidence = this._evidenceFor(card);
    const marked = (cls, ev) => {
      const s = document.createElement("span");
      s.className = cls;
      s.setAttribute("part", cls);
      const mark = document.createElement("mark");
      mark.className = ev.status === "contradicted" ? "evidence contradicted" : "evidence";
      mark.setAttribute("part", "evidence");
      mark.textContent = ev.text.slice(ev.start, ev.end);
      s.append(ev.text.slice(0, ev.start), mark, ev.text.slice(ev.end));
      box.append(s);
    };
    if (evidence && evidence.field === "summary") {
      marked("card-summary has-evidence", evidence);
    } else if (card.summary) {
      line("card-summary", String(card.summary));
    }
    if (evidence && evidence.field !== "summary") marked("card-evidence", evidence);
    const href = safeURL(card.url);
    if (href) {
      const a = document.createElement("a");
      a.className = "card-link";
      a.setAttribute("part", "card-link");
      a.href = href;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.textContent = "Open source";
      box.append(a);
    }
    wrap.append(trigger, box);

    // Open while hovered, while focus is inside (trigger or card link), or
    // after a click; Escape closes it until the pointer or focus comes back.
    const state = { hovered: false, focused: false, pinned: false, dismissed: false };
    const update = () => {
      const open = !state.dismissed && (state.hovered || state.focused || state.pinned);
      box.hidden = !open;
      trigger.setAttribute("aria-expanded", String(open));
      if (open) keepInView(box);
    };
    this._closers.push(() => {
      if (box.hidden) return;
      state.pinned = false;
      state.dismissed = true;
      update();
    });
    wrap.addEventListener("mouseenter", () => { state.hovered = true; state.dismissed = false; update(); });
    wrap.addEventListener("mouseleave", () => { state.hovered = false; update(); });
    wrap.addEventListener("focusin", () => { state.focused = true; update(); });
    wrap.addEventListener("focusout", (e) => {
      if (wrap.contains(e.relatedTarget)) return;
      Object.assign(state, { focused: false, pinned: false, dismissed: false });
      update();
    });
    trigger.addEventListener("click", () => {
      state.pinned = box.hidden;
      state.dismissed = false;
      if (!state.pinned) state.dismissed = true; // a click on an open card closes it
      update();
    });
    wrap.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || box.hidden) return;
      e.stopPropagation();
      state.pinned = false;
      state.dismissed = true;
      if (wrap.contains(this.shadowRoot.activeElement)) trigger.focus();
      update();
    });
    return wrap;
  }
}

// fieldText is the text of a card field an evidence names ("summary",
// "key_ideas[2]", "year"), or null when the card has no such text.
function fieldText(card, field) {
  const m = /^([a-z_]+)(?:\[(\d+)\])?$/.exec(typeof field === "string" ? field : "");
  if (!m || !Object.prototype.hasOwnProperty.call(card, m[1])) return null;
  let value = card[m[1]];
  if (m[2] !== undefined) value = Array.isArray(value) ? value[Number(m[2])] : undefined;
  if (typeof value === "number") return String(value);
  return typeof value === "string" ? value : null;
}

// keepInView moves an open card left when it would run past the right
// edge of the viewport.
function keepInView(box) {
  box.style.left = "";
  const r = box.getBoundingClientRect();
  const over = r.right - document.documentElement.clientWidth + 8;
  if (over > 0) box.style.left = `-${Math.min(over, Math.max(0, r.left - 8))}px`;
}

function safeURL(url) {
  if (typeof url !== "string" || url === "") return "";
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : "";
  } catch {
    return "";
  }
}

if (!customElements.get("assistant-citations")) {
  customElements.define("assistant-citations", AssistantCitations);
}
