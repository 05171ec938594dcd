// Session memory: sessions filtered by issue, PR, path and words, and one session's entries in order
// (with its plain-text blob one click away).

import { api, factLink, h, thead } from "./dom.js";

const FILTERS = [["q", "words"], ["issue", "issue"], ["pr", "PR"], ["path", "path"]];
const COLUMNS = ["session", "last", "agent", "thread", "entries", "goal"];

function sessionRow(s) {
  const link = h("a", { href: `#/session/${encodeURIComponent(s.id)}`, class: "id" }, s.id);
  const hits = s.hits.map(x => h("div", { class: "summary" }, `${x.type}: ${x.text}`));
  return h("tr", {}, h("td", {}, link), h("td", {}, s.last || ""), h("td", {}, s.agent || ""),
    h("td", {}, s.thread || ""), h("td", {}, String(s.entries)), h("td", {}, s.goal || "", hits));
}

export async function sessionsView(main) {
  const inputs = Object.fromEntries(FILTERS.map(([k, label]) =>
    [k, h("input", { type: "search", placeholder: label, class: `filter-${k}` })]));
  const body = h("tbody"), count = h("span", { class: "muted" });
  const load = async () => {
    const params = new URLSearchParams({ limit: "32" });
    for (const [k] of FILTERS) if (inputs[k].value.trim()) params.set(k, inputs[k].value.trim());
    try {
      const data = await api(`/api/memory/sessions?${params}`);
      count.textContent = `${data.sessions.length} of ${data.total} sessions`;
      body.replaceChildren(...data.sessions.map(sessionRow));
    } catch (err) {
      count.textContent = String(err.message || err);
    }
  };
  let timer = null;
  for (const input of Object.values(inputs)) input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(load, 200);
  });
  main.replaceChildren(h("div", {}, h("h1", {}, "Sessions"),
    h("div", { class: "toolbar" }, Object.values(inputs), count),
    h("table", { class: "facts" }, thead(COLUMNS), body)));
  await load();
}

function entryRow(e) {
  if (e.type === "note" && e.event === "delivered") return deliveredRow(e);
  const refs = e.refs || {};
  const about = [e.task, refs.issue && `issue ${refs.issue}`, refs.pr && `PR ${refs.pr}`,
    ...(refs.paths || [])];
  const type = h("span", { class: "badge" }, e.type + (e.stage ? `:${e.stage}` : ""));
  return h("tr", {}, h("td", { class: "muted" }, e.ts), h("td", {}, type),
    h("td", {}, h("div", { class: "body-text" }, e.text),
      h("div", { class: "summary" }, about.filter(Boolean).join(" · "))));
}

// What a hook (or an MCP tool) put in front of the agent at this point of the session.
function deliveredRow(e) {
  const ids = Array.isArray(e.ids) ? e.ids.filter(i => typeof i === "string") : [];
  const links = ids.flatMap((id, n) => (n ? [", ", factLink(id)] : [factLink(id)]));
  return h("tr", { class: "delivered" }, h("td", { class: "muted" }, e.ts),
    h("td", {}, h("span", { class: "badge" }, "given")),
    h("td", {}, h("div", { class: "summary" }, `by ${e.hook || "a hook"}: `, ...links)));
}

export async function sessionView(main, id) {
  const data = await api(`/api/memory/sessions/${encodeURIComponent(id)}`);
  const s = data.session;
  const about = `agent ${s.agent || "-"} · thread ${s.thread || "-"} · task ${s.task || "-"} · ` +
    `${s.entries} entries · ${s.started} to ${s.last} · `;
  const blob = h("a", { href: `/api/memory/sessions/${encodeURIComponent(s.id)}/blob` }, "plain text");
  main.replaceChildren(h("div", {},
    h("p", { class: "crumbs" }, h("a", { href: "#/sessions" }, "Sessions"), " / ", s.id),
    h("h1", {}, s.goal || s.id),
    h("p", { class: "muted" }, about, blob),
    h("table", { class: "facts" }, h("tbody", {}, data.entries.map(entryRow)))));
}
