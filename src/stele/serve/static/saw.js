// "What the agent saw": the stored snapshots of runs (.stele/snapshots/), each with its budget use,
// every delivered item as the agent received it, what was left out and why, and the whole text.

import { api, factLink, h } from "./dom.js";

const PART_TITLES = { always: "Always records", named: "Records named for the run", ranked: "Ranked records",
  code: "Code", briefing: "Knowledge briefing" };
const kb = n => (n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export async function snapshotsView(main) {
  const data = await api("/api/snapshots");
  if (!data.snapshots.length) {
    main.replaceChildren(h("h1", {}, "What the agent saw"),
      h("p", { class: "muted" }, "No stored snapshots yet: `stele context --save` or a task claim stores one."));
    return;
  }
  main.replaceChildren(h("div", {}, h("h1", {}, "What the agent saw"),
    h("p", { class: "muted" }, "Each run's context, as stored when it was assembled (newest first)."),
    h("table", { class: "facts runs" },
      h("thead", {}, h("tr", {}, ["run", "created", "task", "records", "code", "briefing", "size"].map(c => h("th", {}, c)))),
      h("tbody", {}, data.snapshots.map(s => s.error
        ? h("tr", {}, h("td", {}, s.run), h("td", { colspan: 6, class: "error" }, s.error))
        : h("tr", {}, h("td", {}, h("a", { href: `#/snapshot/${s.run}`, class: "id" }, s.run)), h("td", {}, s.created),
          h("td", {}, s.task ? factLink(s.task) : h("span", { class: "muted" }, "none")), h("td", {}, s.records),
          h("td", {}, s.code), h("td", {}, s.briefing), h("td", {}, kb(s.bytes))))))));
}

function budget(usage) {
  return h("div", { class: "budget" }, usage.map(row => {
    const limit = row.limit_bytes;
    const items = row.limit_items ? `${row.items} of ${row.limit_items}` : `${row.items}`;
    return [h("span", {}, row.part),
      limit ? h("meter", { min: 0, max: limit, value: row.bytes, high: limit * 0.9, optimum: 0, title: `${row.bytes} of ${limit} bytes` })
        : h("span", { class: "muted" }, "within records"),
      h("span", { class: "muted" }, `${items} items · ${kb(row.bytes)}${limit ? ` of ${kb(limit)}` : ""}`)];
  }));
}

function item(it) {
  const label = it.title ? [factLink(it.key), " ", it.title] : [h("code", {}, it.key)];
  return h("details", { class: "item" }, h("summary", {}, label, h("span", { class: "muted" }, ` · ${kb(it.bytes)}`)),
    h("pre", { class: "snapshot" }, it.text));
}

export async function snapshotView(main, run) {
  const s = await api(`/api/snapshots/${encodeURIComponent(run)}`);
  const task = s.inputs.task;
  const parts = Object.entries(s.parts).filter(([, items]) => items.length);
  main.replaceChildren(h("div", {},
    h("p", { class: "crumbs" }, h("a", { href: "#/snapshots" }, "What the agent saw"), " / ", s.run),
    h("h1", {}, "Run ", s.run),
    h("p", {}, `Assembled ${s.created}`, task ? [" for ", factLink(task.id), ` ${task.title}`] : null,
      s.inputs.prompt ? [" from the prompt ", h("q", {}, s.inputs.prompt)] : null),
    (s.warnings || []).map(w => h("p", { class: "warning" }, w)),
    h("h3", {}, "Budget use"), budget(s.usage),
    parts.map(([name, items]) => h("section", {}, h("h3", {}, `${PART_TITLES[name] || name} (${items.length})`),
      items.map(item))),
    s.skipped.length ? h("section", {}, h("h3", {}, `Left out (${s.skipped.length})`), h("ul", { class: "edges" },
      s.skipped.map(k => h("li", {}, h("span", { class: "rel" }, k.part), " ",
        /^[A-Z]+-/.test(k.key) ? factLink(k.key) : h("code", {}, k.key), " ", h("span", { class: "muted" }, k.reason))))) : null,
    h("h3", {}, `The whole text, as delivered (${kb(new TextEncoder().encode(s.text).length)})`),
    h("pre", { class: "snapshot" }, s.text)));
}
