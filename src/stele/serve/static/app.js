// The page: a hash router over a few views, each reading the read-only JSON API of `stele serve`.

import { api, badge, factLink, h, kindBadge, matcher, problems, thead } from "./dom.js";
import { drawGraph, el } from "./graph.js";
import { snapshotView, snapshotsView } from "./saw.js";
import { evalView, evalsView } from "./evals.js";
import { sessionView, sessionsView } from "./sessions.js";

const main = document.getElementById("main");

// ---- the record as a searchable list
async function recordView() {
  const data = await api("/api/memory/facts");
  const kinds = [...new Set(data.facts.map(f => f.kind))].sort();
  const statuses = [...new Set(data.facts.map(f => f.status))].sort();
  const q = h("input", { type: "search", placeholder: "Search id, title, tags, anchors…", autofocus: true });
  const choice = (all, values) => h("select", {}, h("option", { value: "" }, all),
    values.map(v => h("option", { value: v }, v)));
  const kind = choice("every kind", kinds), status = choice("every status", statuses);
  const count = h("span", { class: "muted" });
  const body = h("tbody");
  const render = () => {
    const m = matcher(q.value);
    const rows = data.facts.filter(f => (!kind.value || f.kind === kind.value) &&
      (!status.value || f.status === status.value) && (!m || m(f)));
    count.textContent = `${rows.length} of ${data.facts.length} facts`;
    body.replaceChildren(...rows.map(f => h("tr", { class: f.inactive ? "inactive" : null },
      h("td", {}, factLink(f.id)), h("td", {}, kindBadge(f.kind)),
      h("td", {}, f.status,
        f.inactive && f.inactive !== f.status ? h("span", { class: "muted" }, ` · ${f.inactive}`) : null),
      h("td", {}, h("a", { href: `#/fact/${f.id}` }, f.title),
        h("div", { class: "summary" }, f.summary || "")),
      h("td", { class: "anchors" }, (f.anchors || []).slice(0, 3).map(a => h("code", {}, a)),
        f.anchors && f.anchors.length > 3 ? ` +${f.anchors.length - 3}` : null))));
  };
  for (const c of [q, kind, status]) c.addEventListener("input", render);
  render();
  main.replaceChildren(h("div", {}, problems(data.problems),
    h("div", { class: "toolbar" }, q, kind, status, count),
    h("table", { class: "facts" }, thead(["id", "kind", "status", "title", "anchors"]), body)));
  q.focus();
}

// ---- the graph of facts and typed edges
const LEGEND = ["caused-by", "blocks", "contradicts", "supersedes", "fulfills", "relates-to", "part-of",
  "mentions"];

async function graphView() {
  const data = await api("/api/memory/graph");
  const svg = el("svg", { class: "graph", role: "img",
    "aria-label": `Graph of ${data.nodes.length} facts and ${data.edges.length} edges` });
  const hideEnded = h("input", { type: "checkbox" });
  const q = h("input", { type: "search", placeholder: "Highlight facts…" });
  const count = h("span", { class: "muted" });
  const legend = h("div", { class: "legend" },
    h("span", {}, h("i", { class: "dot kind-risk" }), "risk"),
    h("span", {}, h("i", { class: "dot kind-decision" }), "decision · rule"),
    h("span", {}, h("i", { class: "dot kind-lesson" }), "lesson"),
    h("span", {}, h("i", { class: "dot kind-task" }), "task"),
    h("span", {}, h("i", { class: "dot kind-note" }), "other"),
    LEGEND.filter(r => data.edges.some(e => e.rel === r))
      .map(r => h("span", {}, h("i", { class: `swatch rel-${r}` }), r)));
  let graph;
  const draw = () => {
    const nodes = hideEnded.checked ? data.nodes.filter(n => !n.inactive) : data.nodes;
    const keep = new Set(nodes.map(n => n.id));
    graph = drawGraph(svg, nodes, data.edges.filter(e => keep.has(e.src) && keep.has(e.dst)),
      { onOpen: id => { location.hash = `#/fact/${id}`; } });
    search();
  };
  const search = () => {
    const hits = graph.highlight(matcher(q.value));
    count.textContent = q.value.trim() ? `${hits} match`
      : `${svg.dataset.nodes} facts · ${svg.dataset.edges} edges`;
  };
  q.addEventListener("input", search);
  hideEnded.addEventListener("change", draw);
  const hint = "Drag a fact to move it, the background to pan, the wheel to zoom; click a fact to open it. " +
    "Risks are red; causal edges are solid.";
  main.replaceChildren(h("div", { class: "toolbar" }, q, h("label", {}, hideEnded, " hide ended and expired"),
    count), legend, svg, h("p", { class: "muted hint" }, hint));
  draw();
}

// ---- one fact, its links both ways, its anchors
function edgeList(title, edges, arrow) {
  if (!edges.length) return null;
  return h("section", {}, h("h3", {}, title), h("ul", { class: "edges" }, edges.map(e =>
    h("li", { class: `${e.causal ? "causal" : ""} ${e.kind === "risk" ? "risk" : ""}` },
      h("span", { class: `rel rel-${e.rel}` }, `${arrow} ${e.rel}`), " ", factLink(e.id), " ",
      e.kind ? kindBadge(e.kind) : null, " ", e.title || h("span", { class: "muted" }, "(session entry)")))));
}

async function factView(id) {
  const [f, g] = await Promise.all([api(`/api/memory/facts/${encodeURIComponent(id)}`),
    api("/api/memory/graph")]);
  const near = new Set([f.id, ...f.outgoing.map(e => e.id), ...f.incoming.map(e => e.id)]);
  const fields = [["status", f.status], ["delivery", f.delivery], ["priority", f.priority],
    ["created", f.created],
    ["verified", f.verified && `${f.verified}${f.verified_at ? ` at ${f.verified_at}` : ""}`],
    ["review after", f.review_after], ["expires", f.expires], ["retire when", f.retire_when],
    ["tags", (f.tags || []).join(", ")], ["source", (f.source || []).join(", ")], ["file", f.path]]
    .filter(([, v]) => v);
  const svg = el("svg", { class: "graph small" });
  main.replaceChildren(h("div", {},
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Record"), " / ", f.id),
    h("h1", {}, kindBadge(f.kind), " ", f.title),
    f.inactive ? h("p", { class: "warning" }, `Not injected into agents: ${f.inactive}.`) : null,
    h("div", { class: "fact" },
      h("div", {},
        h("div", { class: "body" }, f.body),
        f.anchors.length ? h("section", {}, h("h3", {}, "Anchors"),
          h("ul", { class: "anchors" }, f.anchors.map(a => h("li", {}, h("code", {}, a))))) : null,
        edgeList("Links from this fact", f.outgoing, "→"),
        edgeList("Links to this fact", f.incoming, "←")),
      h("aside", {}, h("dl", {}, fields.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])), svg))));
  if (near.size > 1) {
    const edges = g.edges.filter(e => near.has(e.src) && near.has(e.dst));
    drawGraph(svg, g.nodes.filter(n => near.has(n.id)), edges,
      { focus: f.id, onOpen: other => { location.hash = `#/fact/${other}`; } });
  } else svg.remove();
}

// ---- routing
const views = [
  [/^#?\/?$/, recordView, "record"],
  [/^#\/graph$/, graphView, "graph"],
  [/^#\/fact\/([^/?]+)$/, id => factView(decodeURIComponent(id)), "record"],
  [/^#\/snapshots$/, () => snapshotsView(main), "snapshots"],
  [/^#\/evals$/, () => evalsView(main), "evals"],
  [/^#\/eval\/([^/?]+)$/, run => evalView(main, decodeURIComponent(run)), "evals"],
  [/^#\/snapshot\/([^/?]+)$/, run => snapshotView(main, decodeURIComponent(run)), "snapshots"],
  [/^#\/sessions$/, () => sessionsView(main), "sessions"],
  [/^#\/session\/([^/?]+)$/, id => sessionView(main, decodeURIComponent(id)), "sessions"],
];

async function route() {
  const hash = location.hash || "#/";
  for (const [rx, view, nav] of views) {
    const m = hash.match(rx);
    if (!m) continue;
    document.querySelectorAll("nav a").forEach(a => a.classList.toggle("active", a.dataset.view === nav));
    try {
      await view(...m.slice(1));
    } catch (err) {
      main.replaceChildren(h("p", { class: "error" }, String(err.message || err)));
    }
    document.body.dataset.ready = "1";
    return;
  }
  main.replaceChildren(h("p", { class: "error" }, `Nothing at ${hash}.`),
    h("a", { href: "#/" }, "Back to the record"));
}

window.addEventListener("hashchange", route);
route();
