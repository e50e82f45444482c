// The admin playground (/admin/playground): sends each turn with the
// conversation so far to POST /admin/playground/chat (same origin, session
// cookie) and shows the answer with hover cards (<assistant-citations>),
// the confidence, the per-claim verdicts, the reasoning trace, the
// retrieved knowledge and the raw JSON. Nothing from the server is parsed
// as HTML: every text is set with textContent.
(function () {
  "use strict";
  const form = document.getElementById("pg-form");
  if (!form) return;
  const $ = (id) => document.getElementById(id);
  const conversation = $("pg-conversation");
  const status = $("pg-status");
  const errorBox = $("pg-error");
  const send = $("pg-send");
  const MAX_HISTORY = 50;
  let history = [];
  let turns = 0;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c) e.append(c);
    return e;
  }

  // markdown renders the few Markdown forms answers use (paragraphs,
  // headings, bullet and numbered lists) as elements with text content.
  function markdown(text) {
    const frag = document.createDocumentFragment();
    let list = null;
    const clean = (s) => s.replace(/\*\*|__/g, "");
    for (const raw of String(text).split(/\n/)) {
      const line = raw.trim();
      if (!line) { list = null; continue; }
      const bullet = line.match(/^(?:[-*+]|\d+[.)])\s+(.*)$/);
      if (bullet) {
        const ordered = /^\d/.test(line);
        if (!list || (list.tagName === "OL") !== ordered) {
          list = el(ordered ? "ol" : "ul");
          frag.append(list);
        }
        list.append(el("li", { text: clean(bullet[1]) }));
        continue;
      }
      list = null;
      const heading = line.match(/^#{1,6}\s+(.*)$/);
      frag.append(heading ? el("p", {}, el("strong", { text: clean(heading[1]) })) : el("p", { text: clean(line) }));
    }
    return frag;
  }

  function details(title, cls, body) {
    const d = el("details", { class: cls });
    d.append(el("summary", { text: title }), body);
    return d;
  }

  function renderTurn(message, data) {
    turns++;
    const turn = el("article", { class: "pg-turn card", "data-turn": String(turns) });
    turn.append(el("div", { class: "pg-user", text: message }));

    const cites = el("assistant-citations", { "api-base": location.origin });
    cites.append(markdown(data.response || ""));
    turn.append(el("div", { class: "pg-answer" }, cites));

    const conf = data.confidence || {};
    const level = conf.level || "none";
    // A decline (decision D29) cites nothing and uses no knowledge: say so,
    // rather than "0 of 2 claims verified".
    const declined = !(data.rag_hits || []).length && !/\[(framework|paper|blog):[a-z0-9_-]+\]/.test(data.response || "");
    if (declined) {
      turn.classList.add("pg-declined");
      turn.append(el("div", { class: "pg-meta pg-confidence pg-decline" },
        el("span", { class: "pg-badge pg-level-none", text: "declined" }),
        el("span", { text: "The assistant declined: the question is outside what it answers (running a business, from the knowledge base and this workspace's knowledge), so it cited nothing and no claim was checked against a source." })));
    } else {
      turn.append(el("div", { class: "pg-meta pg-confidence" },
        el("span", { class: "pg-badge pg-level-" + level, text: "confidence " + level }),
        el("span", { class: "pg-score", text: "score " + Number(conf.score || 0).toFixed(2) }),
        el("span", { text: (conf.verifiedClaims || 0) + " of " + (conf.totalClaims || 0) + " claims verified" })));
    }

    const box = el("div", { class: "pg-details" });
    const verdicts = el("ol", { class: "pg-verdicts" });
    for (const v of conf.verdicts || []) {
      const li = el("li", { class: "pg-verdict", "data-status": v.status || "" },
        el("span", { class: "pg-badge pg-status-" + (v.status || ""), text: v.status || "?" }), " ",
        el("span", { class: "pg-claim", text: v.claim || "" }));
      if (v.reason) li.append(el("span", { class: "muted", text: " — " + v.reason }));
      if (v.evidence && v.evidence.snippet) {
        li.append(el("span", { class: "pg-snippet", text: v.evidence.type + ":" + v.evidence.slug + " · " + v.evidence.snippet }));
      }
      verdicts.append(li);
    }
    if (!verdicts.children.length) verdicts.append(el("li", { class: "muted", text: "No claims." }));
    const verdictDetails = details("Claims and verdicts (" + (conf.verdicts || []).length + ")", "pg-verdicts-box", verdicts);
    verdictDetails.open = true;
    box.append(verdictDetails);

    const trace = el("ol", { class: "pg-trace", start: "0" });
    for (const t of data.reasoning_trace || []) {
      trace.append(el("li", { class: "pg-hop" },
        el("strong", { text: t.tool || "" }), " ",
        el("span", { text: t.input_summary || "" }),
        el("span", { class: "pg-snippet", text: t.result_summary || "" })));
    }
    if (!trace.children.length) trace.append(el("li", { class: "muted", text: "No tool calls." }));
    const traceDetails = details("Reasoning trace (" + (data.reasoning_trace || []).length + " hops)", "pg-trace-box", trace);
    traceDetails.open = true;
    box.append(traceDetails);

    const hits = el("ol", { class: "pg-hits" });
    for (const h of data.rag_hits || []) {
      hits.append(el("li", { class: "pg-hit" },
        el("strong", { text: h.title || "" }), " ",
        el("code", { text: h.source || "" }),
        el("span", { class: "muted", text: " score " + Number(h.score || 0).toFixed(2) }),
        el("span", { class: "pg-snippet", text: h.snippet || "" })));
    }
    if (!hits.children.length) hits.append(el("li", { class: "muted", text: "No knowledge retrieved." }));
    box.append(details("Retrieved knowledge, rag_hits (" + (data.rag_hits || []).length + ")", "pg-hits-box", hits));

    box.append(details("Raw JSON", "pg-raw-box", el("pre", { class: "pg-raw", text: JSON.stringify(data, null, 2) })));
    turn.append(box);
    // Oldest first, as a conversation reads; the new turn is brought into view.
    conversation.append(turn);
    turn.scrollIntoView({ block: "start" });
  }

  function showError(msg) {
    errorBox.textContent = msg;
    errorBox.hidden = !msg;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const message = $("pg-message").value.trim();
    if (!message) { showError("Type a message."); return; }
    showError("");
    send.disabled = true;
    status.textContent = "Thinking…";
    const body = {
      message,
      mode: $("pg-mode").value,
      vertical: $("pg-vertical").value,
      history: history.slice(-MAX_HISTORY),
    };
    try {
      const res = await fetch("/admin/playground/chat", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body),
      });
      let data = null;
      try { data = await res.json(); } catch (_) { data = null; }
      if (!res.ok) {
        const msg = (data && data.error) || ("The request failed (HTTP " + res.status + ").");
        showError(res.status === 401 ? msg + " Reload the page to log in." : msg);
        return;
      }
      history.push({ role: "user", content: message }, { role: "assistant", content: data.response || "" });
      renderTurn(message, data);
      $("pg-message").value = "";
    } catch (e) {
      showError("The request failed: " + e);
    } finally {
      send.disabled = false;
      status.textContent = history.length ? (history.length / 2) + " turn(s) in this conversation" : "";
    }
  });

  $("pg-reset").addEventListener("click", () => {
    history = [];
    conversation.replaceChildren();
    status.textContent = "";
    showError("");
  });
})();
