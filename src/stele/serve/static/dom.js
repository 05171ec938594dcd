// Small helpers every view shares: building DOM safely, reading the API, fact links and badges.
// Text from the record only ever reaches the page as textContent, never as HTML.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

export async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  const data = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw new Error(data.error || `HTTP ${r.status}`);
  return data;
}

export const factLink = id => h("a", { href: `#/fact/${encodeURIComponent(id)}`, class: "id" }, id);
export const badge = (text, cls = "") => h("span", { class: `badge ${cls}` }, text);
export const kindBadge = kind => badge(kind, `kind-${kind}`);
export const thead = columns => h("thead", {}, h("tr", {}, columns.map(c => h("th", {}, c))));

export function problems(list) {
  if (!list || !list.length) return null;
  return h("details", { class: "problems" },
    h("summary", {}, `${list.length} problem${list.length > 1 ? "s" : ""} in the record (run stele doctor)`),
    h("ul", {}, list.map(p => h("li", {}, p))));
}

export function matcher(q) {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return null;
  return f => {
    const hay = [f.id, f.kind, f.title, f.summary || "", ...(f.tags || []), ...(f.anchors || [])]
      .join(" ").toLowerCase();
    return words.every(w => hay.includes(w));
  };
}
