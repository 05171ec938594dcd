// Session memory: sessions filtered by issue, PR, path and words, and one session's entries in order
// (with its plain-text blob one click away).

import { api, h } from "./dom.js";

const FILTERS = [["q", "words"], ["issue", "issue"], ["pr", "PR"], ["path", "path"]];

export async function sessionsView(main) {
  const inputs = Object.fromEntries(FILTERS.map(([k, label]) => [k, h("input", { type: "search", placeholder: label,
    class: `filter-${k}` })]));
  const body = h("tbody"), count = h("span", { class: "muted" });
  const load = async () => {
    const params = new URLSearchParams({ limit: "32" });
    for (const [k] of FILTERS) if (inputs[k].value.trim()) params.set(k, inputs[k].value.trim());
    try {
      const data = await api(`/api/memory/sessions?${params}`);
      count.textContent = `${data.sessions.length} of ${data.total} sessions`;
      body.replaceChildren(...data.sessions.map(s => h("tr", {},
        h("td", {}, h("a", { href: `#/session/${encodeURIComponent(s.id)}`, class: "id" }, s.id)),
        h("td", {}, s.last || ""), h("td", {}, s.agent || ""), h("td", {}, s.thread || ""),
        h("td", {}, String(s.entries)), h("td", {}, s.goal || "",
          s.hits.map(x => h("div", { class: "summary" }, `${x.type}: ${x.text}`))))));
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
    h("table", { class: "facts" }, h("thead", {}, h("tr", {},
      ["session", "last", "agent", "thread", "entries", "goal"].map(c => h("th", {}, c)))), body)));
  await load();
}

export async function sessionView(main, id) {
  const data = await api(`/api/memory/sessions/${encodeURIComponent(id)}`);
  const s = data.session;
  main.replaceChildren(h("div", {},
    h("p", { class: "crumbs" }, h("a", { href: "#/sessions" }, "Sessions"), " / ", s.id),
    h("h1", {}, s.goal || s.id),
    h("p", { class: "muted" }, `agent ${s.agent || "-"} · thread ${s.thread || "-"} · task ${s.task || "-"} · ` +
      `${s.entries} entries · ${s.started} to ${s.last} · `,
      h("a", { href: `/api/memory/sessions/${encodeURIComponent(s.id)}/blob` }, "plain text")),
    h("table", { class: "facts" }, h("tbody", {}, data.entries.map(e => h("tr", {},
      h("td", { class: "muted" }, e.ts), h("td", {}, h("span", { class: "badge" }, e.type + (e.stage ? `:${e.stage}` : ""))),
      h("td", {}, h("div", { class: "body-text" }, e.text),
        h("div", { class: "summary" }, [e.task, e.refs && e.refs.issue && `issue ${e.refs.issue}`,
          e.refs && e.refs.pr && `PR ${e.refs.pr}`, ...((e.refs && e.refs.paths) || [])].filter(Boolean).join(" · ")))))))));
}
