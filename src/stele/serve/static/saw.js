// "What the agent saw": the hooks' deliveries per session and turn (the prompt, then the ids each hook
// delivered), and the stored snapshots of runs (.stele/snapshots/), each with its budget use, every
// delivered item as the agent received it, what was left out and why, and the whole text.

import { api, factLink, h, thead } from "./dom.js";

const PART_TITLES = { always: "Always records", named: "Records named for the run", ranked: "Ranked records",
  code: "Code", briefing: "Knowledge briefing" };
const COLUMNS = ["run", "created", "task", "records", "code", "briefing", "size"];
const kb = n => (n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);
const none = () => h("span", { class: "muted" }, "none");

function runRow(s) {
  if (s.error) return h("tr", {}, h("td", {}, s.run), h("td", { colspan: 6, class: "error" }, s.error));
  const cells = [h("a", { href: `#/snapshot/${s.run}`, class: "id" }, s.run), s.created,
    s.task ? factLink(s.task) : none(), s.records, s.code, s.briefing, kb(s.bytes)];
  return h("tr", {}, cells.map(c => h("td", {}, c)));
}

// one delivery: the hook, its time, and each fact id linked with its title
function delivery(d, titles) {
  return h("div", { class: "delivery" }, h("span", { class: "rel" }, d.hook), " ",
    h("span", { class: "muted" }, d.ts), " ",
    d.ids.map((id, i) => [i ? ", " : "", /^S-/.test(id) ? h("code", {}, id) : factLink(id),
      titles[id] ? h("span", { class: "muted" }, ` ${titles[id]}`) : null]));
}

function turn(t, titles) {
  const head = t.turn === 0 ? h("strong", {}, "Before the first prompt")
    : [h("strong", {}, `Turn ${t.turn}`), t.prompt ? [": ", h("q", {}, t.prompt)] : null];
  return h("li", { class: "turn" }, head, t.deliveries.map(d => delivery(d, titles)));
}

function hookDeliveries(data) {
  const title = h("h2", {}, "Hook deliveries");
  if (!data.sessions.length) {
    return h("section", {}, title, h("p", { class: "muted" },
      "No hook has delivered anything yet: deliveries appear here once the hooks run (stele install)."));
  }
  return h("section", { class: "deliveries" }, title,
    h("p", { class: "muted" }, "Per session (newest first) and turn: the prompt, then what each hook put in front of the agent."),
    data.sessions.map(s => h("details", { class: "session", open: true },
      h("summary", {}, h("code", {}, s.session.id), " ", h("span", { class: "muted" },
        `${s.session.agent || "agent"} · ${s.turns.filter(t => t.turn).length} turns · last ${s.session.last}`)),
      h("ol", { class: "turns" }, s.turns.map(t => turn(t, data.titles))))));
}

export async function snapshotsView(main) {
  const [data, seen] = await Promise.all([api("/api/snapshots"), api("/api/memory/deliveries")]);
  const title = h("h1", {}, "What the agent saw");
  const runs = data.snapshots.length
    ? [h("p", { class: "muted" }, "Each run's context, as stored when it was assembled (newest first)."),
      h("table", { class: "facts runs" }, thead(COLUMNS), h("tbody", {}, data.snapshots.map(runRow)))]
    : h("p", { class: "muted" }, "No stored snapshots yet: `stele context --save` or a task claim stores one.");
  main.replaceChildren(h("div", {}, title, hookDeliveries(seen), h("h2", {}, "Stored snapshots"), runs));
}

// one row per budget: the part, a meter of its bytes against the limit, and the numbers
function budget(usage) {
  return h("div", { class: "budget" }, usage.map(row => {
    const limit = row.limit_bytes;
    const items = row.limit_items ? `${row.items} of ${row.limit_items}` : `${row.items}`;
    const meter = limit
      ? h("meter", { min: 0, max: limit, value: row.bytes, high: limit * 0.9, optimum: 0,
        title: `${row.bytes} of ${limit} bytes` })
      : h("span", { class: "muted" }, "within records");
    const numbers = `${items} items · ${kb(row.bytes)}${limit ? ` of ${kb(limit)}` : ""}`;
    return [h("span", {}, row.part), meter, h("span", { class: "muted" }, numbers)];
  }));
}

function item(it) {
  const label = it.title ? [factLink(it.key), " ", it.title] : [h("code", {}, it.key)];
  const summary = h("summary", {}, label, h("span", { class: "muted" }, ` · ${kb(it.bytes)}`));
  return h("details", { class: "item" }, summary, h("pre", { class: "snapshot" }, it.text));
}

function leftOut(skipped) {
  if (!skipped.length) return null;
  const key = k => (/^[A-Z]+-/.test(k.key) ? factLink(k.key) : h("code", {}, k.key));
  return h("section", {}, h("h3", {}, `Left out (${skipped.length})`), h("ul", { class: "edges" },
    skipped.map(k => h("li", {}, h("span", { class: "rel" }, k.part), " ", key(k), " ",
      h("span", { class: "muted" }, k.reason)))));
}

export async function snapshotView(main, run) {
  const s = await api(`/api/snapshots/${encodeURIComponent(run)}`);
  const task = s.inputs.task;
  const parts = Object.entries(s.parts).filter(([, items]) => items.length);
  const size = kb(new TextEncoder().encode(s.text).length);
  main.replaceChildren(h("div", {},
    h("p", { class: "crumbs" }, h("a", { href: "#/snapshots" }, "What the agent saw"), " / ", s.run),
    h("h1", {}, "Run ", s.run),
    h("p", {}, `Assembled ${s.created}`, task ? [" for ", factLink(task.id), ` ${task.title}`] : null,
      s.inputs.prompt ? [" from the prompt ", h("q", {}, s.inputs.prompt)] : null),
    (s.warnings || []).map(w => h("p", { class: "warning" }, w)),
    h("h3", {}, "Budget use"), budget(s.usage),
    parts.map(([name, items]) =>
      h("section", {}, h("h3", {}, `${PART_TITLES[name] || name} (${items.length})`), items.map(item))),
    leftOut(s.skipped),
    h("h3", {}, `The whole text, as delivered (${size})`),
    h("pre", { class: "snapshot" }, s.text)));
}
