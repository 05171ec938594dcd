// The fact graph: a small deterministic force layout drawn as SVG, no library and no build step.
//
// The layout runs to completion before the first paint (Fruchterman-Reingold with gravity, a fixed
// number of rounds from a fixed spiral start), so the same record always draws the same picture and a
// screenshot needs no waiting for an animation to settle. Dragging moves one node; the wheel zooms and
// dragging the background pans, both by changing the viewBox.

const SVG = "http://www.w3.org/2000/svg";
const ROUNDS = 400;

export function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export function layout(nodes, edges, width = 1000, height = 700) {
  const n = nodes.length;
  const index = new Map(nodes.map((d, i) => [d.id, i]));
  const links = edges.filter(e => index.has(e.src) && index.has(e.dst))
    .map(e => [index.get(e.src), index.get(e.dst)]);
  const pos = nodes.map((_, i) => {
    const r = 18 * Math.sqrt(i + 0.5), a = i * 2.399963;  // golden-angle spiral: spread, deterministic
    return { x: r * Math.cos(a), y: r * Math.sin(a) };
  });
  const k = 0.9 * Math.sqrt((width * height) / Math.max(n, 1));
  const reach2 = (3 * k) ** 2;
  let temp = width / 8;
  for (let round = 0; round < ROUNDS; round++) {
    const disp = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let dx = pos[i].x - pos[j].x, dy = pos[i].y - pos[j].y;
        let d2 = dx * dx + dy * dy;
        if (d2 < 0.01) { dx = 0.1 * (i - j); dy = 0.1; d2 = dx * dx + dy * dy; }
        if (d2 > reach2) continue;  // far facts do not push: unlinked ones would drift off forever
        const f = (k * k) / d2;  // repulsion k²/d, along the unit vector (dx/d)
        disp[i].x += dx * f; disp[i].y += dy * f;
        disp[j].x -= dx * f; disp[j].y -= dy * f;
      }
    }
    for (const [a, b] of links) {
      const dx = pos[a].x - pos[b].x, dy = pos[a].y - pos[b].y;
      const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
      const f = d / k;  // attraction d²/k
      disp[a].x -= dx * f; disp[a].y -= dy * f;
      disp[b].x += dx * f; disp[b].y += dy * f;
    }
    for (let i = 0; i < n; i++) {
      disp[i].x -= 0.08 * pos[i].x * (height / width);  // gravity keeps unlinked facts and loose
      disp[i].y -= 0.08 * pos[i].y;                     // clusters near the middle, in the drawing's shape
      const d = Math.sqrt(disp[i].x ** 2 + disp[i].y ** 2) || 1;
      const step = Math.min(d, temp);
      pos[i].x += (disp[i].x / d) * step;
      pos[i].y += (disp[i].y / d) * step;
    }
    temp = Math.max(1, temp * 0.985);
  }
  return pos;
}

// Scale the layout into the drawing's pixel size (aspect kept), so a node of radius 8 is 8 pixels
// whatever the size of the record; the viewBox starts as those pixels and zooming changes it.
function fit(pos, width, height, pad = 36) {
  if (!pos.length) return;
  const xs = pos.map(p => p.x), ys = pos.map(p => p.y);
  const x0 = Math.min(...xs), y0 = Math.min(...ys);
  const w = Math.max(...xs) - x0 || 1, h = Math.max(...ys) - y0 || 1;
  const s = Math.min((width - 2 * pad) / w, (height - 2 * pad) / h, 2.5);
  const ox = (width - w * s) / 2, oy = (height - h * s) / 2;
  for (const p of pos) { p.x = ox + (p.x - x0) * s; p.y = oy + (p.y - y0) * s; }
}

export function drawGraph(svg, nodes, edges, { onOpen = () => {}, focus = null } = {}) {
  svg.replaceChildren();
  const rect = svg.getBoundingClientRect();
  const width = rect.width || 1000, height = rect.height || 700;
  const pos = layout(nodes, edges, width, height);
  fit(pos, width, height);
  let box = [0, 0, width, height];
  const setBox = () => svg.setAttribute("viewBox", box.map(v => v.toFixed(1)).join(" "));
  setBox();

  const defs = el("defs", {}, svg);
  for (const rel of new Set(edges.map(e => e.rel))) {
    const m = el("marker", { id: `arrow-${rel}`, viewBox: "0 0 10 10", refX: "23", refY: "5",
      markerUnits: "userSpaceOnUse", markerWidth: "8", markerHeight: "8", orient: "auto-start-reverse" },
    defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", class: `arrow rel-${rel}` }, m);
  }
  const edgeLayer = el("g", { class: "edges" }, svg);
  const nodeLayer = el("g", { class: "nodes" }, svg);
  const at = new Map(nodes.map((d, i) => [d.id, i]));
  const lines = [];
  for (const e of edges) {
    if (!at.has(e.src) || !at.has(e.dst)) continue;
    const line = el("line", { class: `edge rel-${e.rel}${e.causal ? " causal" : ""}`,
      "marker-end": `url(#arrow-${e.rel})`, "data-src": e.src, "data-dst": e.dst, "data-rel": e.rel },
    edgeLayer);
    el("title", {}, line).textContent = `${e.src} ${e.rel} ${e.dst}`;
    lines.push({ line, a: at.get(e.src), b: at.get(e.dst) });
  }
  const groups = nodes.map((d, i) => {
    const classes = ["node", `kind-${d.kind}`];
    if (d.inactive) classes.push("inactive");
    if (d.id === focus) classes.push("focus");
    const g = el("g", { class: classes.join(" "), "data-id": d.id, tabindex: "0" }, nodeLayer);
    el("circle", { r: d.kind === "risk" ? 11 : 8 }, g);
    el("text", { y: 22, "text-anchor": "middle" }, g).textContent = d.id;
    el("text", { y: 33, "text-anchor": "middle", class: "label" }, g).textContent = d.label || "";
    el("title", {}, g).textContent = `${d.id} ${d.kind}${d.inactive ? ` (${d.inactive})` : ""}: ${d.title}`;
    g.addEventListener("keydown", ev => { if (ev.key === "Enter") onOpen(d.id); });
    return g;
  });

  const place = () => {
    groups.forEach((g, i) =>
      g.setAttribute("transform", `translate(${pos[i].x.toFixed(1)},${pos[i].y.toFixed(1)})`));
    for (const { line, a, b } of lines) {
      line.setAttribute("x1", pos[a].x.toFixed(1)); line.setAttribute("y1", pos[a].y.toFixed(1));
      line.setAttribute("x2", pos[b].x.toFixed(1)); line.setAttribute("y2", pos[b].y.toFixed(1));
    }
  };
  place();

  // pointer: drag a node, pan the background, click (no movement) opens a fact
  const toGraph = ev => {
    const r = svg.getBoundingClientRect();
    const s = Math.max(box[2] / r.width, box[3] / r.height);
    return { x: box[0] + (ev.clientX - r.left) * s, y: box[1] + (ev.clientY - r.top) * s, s };
  };
  let drag = null;
  svg.addEventListener("pointerdown", ev => {
    const g = ev.target.closest(".node");
    drag = { node: g ? at.get(g.dataset.id) : null, moved: false, box0: box.slice(),
      cx: ev.clientX, cy: ev.clientY };
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener("pointermove", ev => {
    if (!drag) return;
    if (Math.abs(ev.clientX - drag.cx) + Math.abs(ev.clientY - drag.cy) > 3) drag.moved = true;
    if (!drag.moved) return;
    const p = toGraph(ev);
    if (drag.node !== null) {
      pos[drag.node].x = p.x; pos[drag.node].y = p.y;
      place();
    } else {
      box[0] = drag.box0[0] - (ev.clientX - drag.cx) * p.s;
      box[1] = drag.box0[1] - (ev.clientY - drag.cy) * p.s;
      setBox();
    }
  });
  svg.addEventListener("pointerup", () => {
    if (drag && !drag.moved && drag.node !== null) onOpen(nodes[drag.node].id);
    drag = null;
  });
  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    const p = toGraph(ev), f = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    box = [p.x - (p.x - box[0]) * f, p.y - (p.y - box[1]) * f, box[2] * f, box[3] * f];
    setBox();
  }, { passive: false });

  // hovering a node lights up its edges and neighbours
  nodeLayer.addEventListener("pointerover", ev => {
    const g = ev.target.closest(".node");
    if (!g) return;
    const id = g.dataset.id, near = new Set([id]);
    for (const { line } of lines) {
      const on = line.dataset.src === id || line.dataset.dst === id;
      line.classList.toggle("lit", on);
      if (on) { near.add(line.dataset.src); near.add(line.dataset.dst); }
    }
    groups.forEach(n => n.classList.toggle("near", near.has(n.dataset.id)));
    svg.classList.add("hovering");
  });
  nodeLayer.addEventListener("pointerout", () => {
    svg.classList.remove("hovering");
    for (const { line } of lines) line.classList.remove("lit");
  });

  svg.dataset.nodes = String(groups.length);
  svg.dataset.edges = String(lines.length);
  return {
    // dim the facts that do not match a search (empty query: none dimmed)
    highlight(match) {
      let hits = 0;
      groups.forEach((g, i) => {
        const on = match ? match(nodes[i]) : true;
        g.classList.toggle("dim", !on);
        if (on && match) hits++;
      });
      for (const { line, a, b } of lines) line.classList.toggle("dim", !!match &&
        (groups[a].classList.contains("dim") && groups[b].classList.contains("dim")));
      return hits;
    },
  };
}
