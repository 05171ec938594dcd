// "With and without": the stored runs of `stele eval --agent` (.stele/eval/agent/RUN/), each with its
// pass rate per arm and interval, the difference (Newcombe's and the paired interval), and per task; a
// run's page shows its report.

import { api, factLink, h, thead } from "./dom.js";

const pct = x => (x === null || x === undefined ? "-" : `${Math.round(100 * x)}%`);
const iv = (i, signed) => `[${i.map(v => (signed && v > 0 ? "+" : "") + Math.round(100 * v)).join(", ")}]`;

function arms(a) {
  return Object.entries(a || {}).map(([name, x]) => `${name} ${x.passed}/${x.total} ${pct(x.rate)} ${iv(x.interval)}`).join(" · ");
}

function diff(d) {
  if (!d) return "-";
  const paired = d.paired ? ` · paired ${iv(d.paired.interval, true)} (${d.paired.with_only} / ${d.paired.without_only} of ${d.paired.pairs})` : "";
  return `${d.value > 0 ? "+" : ""}${Math.round(100 * d.value)} pts ${iv(d.interval, true)}${paired}`;
}

export async function evalsView(main) {
  const data = await api("/api/eval/agent");
  const title = h("h1", {}, "With and without: what the memory changes in what an agent does");
  const body = data.runs.length
    ? h("table", { class: "facts runs" }, thead(["run", "suite", "harness", "pass rate per arm", "difference"]),
      h("tbody", {}, data.runs.map(r => h("tr", {},
        h("td", {}, h("a", { href: `#/eval/${encodeURIComponent(r.run)}`, class: "id" }, r.run)),
        h("td", {}, r.suite), h("td", {}, r.harness), h("td", {}, arms(r.arms)),
        h("td", {}, diff(r.difference), r.stopped ? h("span", { class: "muted" }, ` (stopped: ${r.stopped})`) : null)))))
    : h("p", { class: "muted" }, "No runs yet: `stele eval --agent --init`, then `stele eval --agent SUITE --harness claude` (docs/eval.md).");
  main.replaceChildren(h("div", {}, title, h("p", { class: "muted" },
    "Pass rates with 95% Wilson intervals; the difference (with minus without) with Newcombe's interval, then the paired bootstrap interval over runs of the same task and run number (pairs only with / only without passed, of all pairs). An interval that spans 0 has not shown a difference."), body));
}

export async function evalView(main, run) {
  const r = await api(`/api/eval/agent/${encodeURIComponent(run)}`);
  const rows = Object.entries(r.tasks).map(([name, t]) => h("tr", {}, h("td", {}, name), h("td", {}, arms(t.arms)),
    h("td", {}, diff(t.difference)),
    h("td", {}, Object.keys(t.injected || {}).slice(0, 8).map((id, i) => [i ? ", " : "", factLink(id)]))));
  main.replaceChildren(h("div", {}, h("h1", {}, `${r.suite} in ${r.harness}`),
    h("p", { class: "muted" }, `commit ${r.commit.slice(0, 12)} · started ${r.started} · ${Math.round(r.seconds)} s`),
    h("table", { class: "facts runs" }, thead(["task", "pass rate per arm", "difference", "Stele delivered (with)"]),
      h("tbody", {}, rows, h("tr", {}, h("td", {}, h("strong", {}, "overall")), h("td", {}, arms(r.overall.arms)),
        h("td", {}, diff(r.overall.difference)), h("td", {})))),
    h("h2", {}, "Report"), h("pre", { class: "whole" }, r.report)));
}
