// klea-serve search page: vanilla JS over the JSON API (/api/search, /api/facets,
// /api/documents, /api/papers/{file}/citations, /api/papers/.../pages/N.png, /api/graph). State lives in the URL (?q=&mode=&year_from=...), so
// back/forward and shared links work.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
};

const state = { q: "", mode: "", year_from: "", year_to: "", author: [], journal: [], tag: [], collection: [], language: [], doc: "" };
const FACETS = ["author", "journal", "tag", "collection", "language"];  // each a list in state and a search parameter

// A chunk's language is an ISO 639-1 code ("zh", "und" when unknown): shown by its name in
// the reader's language, the code kept beside it so the URL parameter is recognisable.
const LANGUAGE_NAMES = (() => {
  try { return new Intl.DisplayNames([navigator.language, "en"], { type: "language" }); } catch (error) { return null; }
})();
function facetLabel(key, value) {
  if (key !== "language") return value;
  if (value === "und") return "Unknown (und)";
  let name = null;
  try { name = LANGUAGE_NAMES && LANGUAGE_NAMES.of(value); } catch (error) { /* not a language code */ }
  return name && name !== value ? `${name} (${value})` : value;
}

function readUrl() {
  const p = new URLSearchParams(location.search);
  state.q = p.get("q") || "";
  state.mode = p.get("mode") || "";
  state.year_from = p.get("year_from") || "";
  state.year_to = p.get("year_to") || "";
  for (const key of FACETS) state[key] = p.getAll(key);
  state.doc = p.get("doc") || "";
}

function writeUrl(push = true) {
  const p = new URLSearchParams();
  for (const key of ["q", "mode", "year_from", "year_to", "doc"]) if (state[key]) p.set(key, state[key]);
  for (const key of FACETS) for (const v of state[key]) p.append(key, v);
  const url = `${location.pathname}?${p}`;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

// An answer that is not ok throws an Error carrying its HTTP status (error.status).
async function api(path) {
  const response = await fetch(path);
  let body = {};
  try { body = await response.json(); } catch (error) { /* not JSON: a proxy's error page */ }
  if (!response.ok) {
    const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    const error = new Error(body.detail ? detail : `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

function highlighted(text, highlights) {
  const frag = document.createDocumentFragment();
  let at = 0;
  for (const [start, end] of highlights) {
    frag.append(text.slice(at, start), el("mark", {}, text.slice(start, end)));
    at = end;
  }
  frag.append(text.slice(at));
  return frag;
}

function renderChips(chips) {
  const box = $("#chips");
  box.replaceChildren();
  for (const chip of chips) {
    const label = (chip.negated ? "NOT " : "") + (chip.fields.length ? chip.fields.join(",") + ":" : "")
      + (chip.phrase ? `"${chip.text}"` : chip.text) + (chip.prefix ? "*" : "");
    const cls = "chip" + (chip.negated ? " negated" : "") + (chip.operator === "OR" ? " or" : "");
    box.append(el("span", { class: cls, title: chip.operator ? `joined by ${chip.operator}` : "" }, label));
  }
}

function renderError(error) {
  const box = $("#query-error");
  if (!error) { box.hidden = true; box.textContent = ""; $("#q").removeAttribute("aria-invalid"); return; }
  box.hidden = false;
  box.textContent = `${error.caret}\n${error.message}`;
  $("#q").setAttribute("aria-invalid", "true");
  if (error.position !== null) {
    $("#q").focus();
    $("#q").setSelectionRange(error.position, error.position + Math.max(1, error.token.length));
  }
}

function byline(hit) {
  const parts = [];
  if (hit.authors && hit.authors.length) parts.push(hit.authors.join(", "));
  if (hit.year) parts.push(String(hit.year));
  if (hit.journal) parts.push(hit.journal);
  if (hit.citekey) parts.push(`[@${hit.citekey}]`);
  if (hit.pages && hit.pages.length) parts.push(hit.pages.length > 1 ? `pp. ${hit.pages[0]}–${hit.pages[hit.pages.length - 1]}` : `p. ${hit.pages[0]}`);
  return parts.join(" · ");
}

function renderHits(result) {
  const list = $("#hits");
  list.replaceChildren();
  for (const [index, hit] of result.hits.entries()) {
    const open = el("a", { href: `?doc=${encodeURIComponent(hit.file)}`, class: "title",
      onclick: (event) => { event.preventDefault(); openPaper(hit.file); } }, hit.title);
    const rank = el("span", { class: "rank", "aria-hidden": "true" }, String(index + 1));
    const item = el("li", { class: "hit" }, el("h3", {}, rank, open), el("p", { class: "byline" }, byline(hit)));
    for (const snippet of hit.snippets) {
      if (!snippet.text) continue;
      item.append(el("p", { class: "snippet" }, highlighted(snippet.text, snippet.highlights)));
    }
    const legs = [];
    if (hit.lexical_rank) legs.push(`lexical #${hit.lexical_rank}`);
    if (hit.semantic_rank) legs.push(`semantic #${hit.semantic_rank}`);
    if (legs.length) item.append(el("p", { class: "legs" }, legs.join(", ")));
    list.append(item);
  }
}

// -- results grouped by paper (group=paper, the page's default) ---------------------

function pagesLabel(pages) {
  if (!pages || !pages.length) return "";
  if (pages.length === 1) return `p. ${pages[0]}`;
  const runs = [];
  let start = pages[0], end = pages[0];
  for (const page of [...pages.slice(1), null]) {
    if (page === end + 1) { end = page; continue; }
    runs.push(start === end ? String(start) : `${start}–${end}`);
    start = end = page;
  }
  return `pp. ${runs.join(", ")}`;
}

function paperByline(paper) {
  const parts = [];
  if (paper.authors.length) {
    parts.push(paper.authors.join(", ") + (paper.authors_total > paper.authors.length ? " et al." : ""));
  }
  if (paper.year) parts.push(String(paper.year));
  if (paper.journal) parts.push(paper.journal);
  if (paper.citekey) parts.push(`[@${paper.citekey}]`);
  const pages = pagesLabel(paper.pages);
  if (pages) parts.push(pages);
  return parts.join(" · ");
}

function passageItem(passage) {
  const item = el("li", { class: "passage" });
  const where = [pagesLabel(passage.pages), passage.headings.length ? passage.headings[passage.headings.length - 1] : ""]
    .filter(Boolean).join(" · ");
  if (where) item.append(el("p", { class: "where" }, where));
  // the card names the title already: a passage shows its title snippet only when alone
  const texts = passage.snippets.filter((s) => s.text);
  const shown = texts.some((s) => s.field !== "title") ? texts.filter((s) => s.field !== "title") : texts;
  for (const snippet of shown) item.append(el("p", { class: "snippet" }, highlighted(snippet.text, snippet.highlights)));
  const legs = [];
  if (passage.lexical_rank) legs.push(`lexical #${passage.lexical_rank}`);
  if (passage.semantic_rank) legs.push(`semantic #${passage.semantic_rank}`);
  if (legs.length) item.append(el("p", { class: "legs" }, legs.join(", ")));
  return item;
}

function renderPapers(result) {
  const list = $("#hits");
  list.replaceChildren();
  for (const paper of result.papers) {
    const open = el("a", { href: `?doc=${encodeURIComponent(paper.file)}`, class: "title",
      onclick: (event) => { event.preventDefault(); openPaper(paper.file); } }, paper.title);
    const rank = el("span", { class: "rank", "aria-hidden": "true" }, String(paper.rank));
    const card = el("li", { class: "hit paper-card" }, el("h3", {}, rank, open), el("p", { class: "byline" }, paperByline(paper)));
    const passages = el("ol", { class: "best-passages", "aria-label": `Best passages of ${paper.title}` });
    for (const passage of paper.passages) passages.append(passageItem(passage));
    card.append(passages);
    if (paper.hits > paper.passages.length) {
      card.append(el("p", { class: "legs" }, `${paper.hits} matching passages in this paper`));
    }
    list.append(card);
  }
}

function resultCount(result) {
  const n = result.papers ? result.papers.length : result.hits.length;
  const noun = result.papers ? "paper" : "result";
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function graphIds(result) {
  return result.papers ? result.papers.map((p) => p.passages[0].record_id) : result.hits.map((h) => h.record_id);
}

function facetList(key, values, selected) {
  const ul = $(`#facet-${key} ul`);
  ul.replaceChildren();
  $(`#facet-${key}`).hidden = values.length === 0;  // a facet with no values is not shown
  for (const { value, count } of values.slice(0, 12)) {
    const id = `f-${key}-${value}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const box = el("input", { type: "checkbox", id, value });
    box.checked = selected.includes(value);
    box.addEventListener("change", () => {
      state[key] = box.checked ? [...state[key], value] : state[key].filter((v) => v !== value);
      writeUrl();
      run();
    });
    ul.append(el("li", {}, box, el("label", { for: id }, `${facetLabel(key, value)} `, el("span", { class: "count" }, `(${count})`))));
  }
}

async function renderFacets(mine) {
  const params = new URLSearchParams([...FACETS, "year"].map((key) => ["key", key]));
  if (state.q) params.set("q", state.q);
  const problem = $("#facets-error");
  try {
    const result = await api(`/api/facets?${params}`);
    if (mine !== latestRun) return;
    for (const key of FACETS) facetList(key, result.facets[key], state[key]);
    problem.hidden = true;
  } catch (error) {
    if (mine !== latestRun || error.status === 400) return;  // 400: the caret says where
    problem.textContent = error.status === 401
      ? "The filters need the access token: reload the page to give it."
      : `The filters could not be loaded: ${error.message}`;
    problem.hidden = false;
  }
}

function renderGraph(graph) {
  const panel = $("#graph-panel");
  if ((!graph.available && !graph.citations) || graph.nodes.length < 2) { panel.hidden = true; return; }
  panel.hidden = false;
  const svg = $("#graph");
  svg.replaceChildren();
  const ns = "http://www.w3.org/2000/svg";
  const pos = {};
  graph.nodes.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / graph.nodes.length - Math.PI / 2;
    pos[node.id] = [200 + 120 * Math.cos(angle), 150 + 110 * Math.sin(angle)];
  });
  // a citation edge is dashed, in its own colour, with an arrowhead at the cited result
  const marker = document.createElementNS(ns, "marker");
  Object.entries({ id: "cites", viewBox: "0 0 10 10", refX: 19, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: "auto" }).forEach(([k, v]) => marker.setAttribute(k, v));
  const tip = document.createElementNS(ns, "path");
  Object.entries({ d: "M0,0 L10,5 L0,10 z", class: "cites-tip" }).forEach(([k, v]) => tip.setAttribute(k, v));
  marker.append(tip);
  const defs = document.createElementNS(ns, "defs");
  defs.append(marker);
  svg.append(defs);
  for (const edge of graph.edges) {
    const [x1, y1] = pos[edge.source]; const [x2, y2] = pos[edge.target];
    const cites = edge.kind === "citation";
    // a citation bends off the straight line a similarity edge between the same two takes
    const bend = 0.25;
    const cx = (x1 + x2) / 2 - bend * (y2 - y1); const cy = (y1 + y2) / 2 + bend * (x2 - x1);
    const line = document.createElementNS(ns, cites ? "path" : "line");
    const attrs = cites
      ? { d: `M${x1},${y1} Q${cx},${cy} ${x2},${y2}`, "stroke-width": 2,
          class: "edge citation", "marker-end": "url(#cites)" }
      : { x1, y1, x2, y2, "stroke-width": 1 + 4 * edge.weight, class: "edge similarity" };
    Object.entries(attrs).forEach(([k, v]) => line.setAttribute(k, v));
    const title = document.createElementNS(ns, "title");
    title.textContent = cites ? "cites" : "similar in meaning";
    line.append(title);
    svg.append(line);
  }
  graph.nodes.forEach((node, i) => {
    const [x, y] = pos[node.id];
    const g = document.createElementNS(ns, "g");
    const circle = document.createElementNS(ns, "circle");
    Object.entries({ cx: x, cy: y, r: 9, class: "node" }).forEach(([k, v]) => circle.setAttribute(k, v));
    const label = document.createElementNS(ns, "text");
    Object.entries({ x, y: y + 4, "text-anchor": "middle", class: "node-label" }).forEach(([k, v]) => label.setAttribute(k, v));
    label.textContent = String(i + 1);
    const title = document.createElementNS(ns, "title");
    title.textContent = node.title;
    g.append(circle, label, title);
    svg.append(g);
  });
}

// Each run numbers itself: a search or facets answer that comes back after a newer run
// began (filters changed quickly, a slow server) is dropped instead of painted over it.
let latestRun = 0;

async function run() {
  const mine = ++latestRun;
  $("#q").value = state.q;
  $("#mode").value = state.mode;
  $("#year-from").value = state.year_from;
  $("#year-to").value = state.year_to;
  if (state.doc) return openPaper(state.doc, false);
  $("#paper").hidden = true;
  $("#results").hidden = false;
  $("#facets").hidden = false;
  if (!state.q) {
    $("#status").textContent = "Type a question or a Boolean query.";
    $("#hits").replaceChildren(); renderChips([]); renderError(null);
    $("#graph-panel").hidden = true;
    renderFacets(mine);
    return;
  }
  const params = new URLSearchParams({ q: state.q, limit: "10", group: "paper" });
  for (const key of ["mode", "year_from", "year_to"]) if (state[key]) params.set(key, state[key]);
  for (const key of FACETS) for (const v of state[key]) params.append(key, v);
  $("#status").textContent = "Searching…";
  let result;
  try {
    result = await api(`/api/search?${params}`);
  } catch (error) {
    if (mine === latestRun) $("#status").textContent = `Search failed: ${error.message}`;
    return;
  }
  if (mine !== latestRun) return;
  renderChips(result.chips);
  renderError(result.error);
  if (result.papers) renderPapers(result); else renderHits(result);
  const notes = [...result.degraded.map((l) => `${l} leg degraded`), ...result.skipped.map((l) => `${l} leg skipped`)];
  $("#status").textContent = result.error ? "The query is malformed: see the caret above."
    : `${resultCount(result)} (${result.mode}`
      + (result.interpreted_as !== result.query ? `, any of the words` : "") + ")"
      + (notes.length ? ` — ${notes.join(", ")}` : "");
  renderFacets(mine);
  const ids = graphIds(result);
  if (ids.length > 1) {
    fetch("/api/graph", { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ record_ids: ids }) })
      .then((r) => r.json()).then((graph) => { if (mine === latestRun) renderGraph(graph); })
      .catch(() => { if (mine === latestRun) $("#graph-panel").hidden = true; });
  } else $("#graph-panel").hidden = true;
}

// The page of a passage, its lines framed: fetched (so the access token goes with it) and
// shown as a data: URL, which the page's policy allows for images.
function pageToggle(paper, passage) {
  const page = passage.regions[0].page;
  const figure = el("figure", { class: "page-view", hidden: "" });
  const button = el("button", { type: "button", class: "show-page", "aria-expanded": "false" }, `Show page ${page}`);
  button.addEventListener("click", async () => {
    const open = button.getAttribute("aria-expanded") === "true";
    button.setAttribute("aria-expanded", String(!open));
    button.textContent = open ? `Show page ${page}` : `Hide page ${page}`;
    figure.hidden = open;
    if (open || figure.childElementCount) return;
    const url = `/api/papers/${encodeURIComponent(paper.file)}/pages/${page}.png?chunk=${encodeURIComponent(passage.id)}`;
    const response = await fetch(url);
    if (!response.ok) {
      const problem = await response.json().catch(() => ({}));
      figure.append(el("figcaption", {}, problem.detail || `The page cannot be shown (${response.status})`));
      return;
    }
    const data = await new Promise((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      response.blob().then((blob) => reader.readAsDataURL(blob));
    });
    figure.append(
      el("img", { class: "page-image", src: data, alt: `Page ${page} of ${paper.title}, the passage framed in orange` }),
      el("figcaption", {}, `Page ${page}${passage.page_label ? ` (printed ${passage.page_label})` : ""}: the passage is framed.`),
    );
  });
  return el("div", {}, button, figure);
}

function paperLink(fileName, label) {
  return el("a", { href: `?doc=${encodeURIComponent(fileName)}`,
    onclick: (event) => { event.preventDefault(); openPaper(fileName); } }, label);
}

// The paper's place in the library: who cites it here (with the sentences), and its
// references, those the library holds as links to them. Fetched after the passages show;
// an answer for a paper no longer open is dropped.
async function showCitations(fileName, citedBy, references) {
  let found;
  try {
    found = await api(`/api/papers/${encodeURIComponent(fileName)}/citations`);
  } catch (error) {
    citedBy.append(el("p", { class: "help problem" }, `Citations unavailable: ${error.message}`));
    return;
  }
  if (state.doc !== fileName) return;
  if (found.cited_by.length) {
    const citing = el("ul", { class: "cited-by" });
    for (const paper of found.cited_by) {
      const item = el("li", {}, paperLink(paper.file_name, paper.title || paper.file_name));
      for (const sentence of paper.contexts) item.append(el("blockquote", {}, sentence));
      citing.append(item);
    }
    citedBy.append(el("h3", {}, `Cited by, in this library (${found.cited_by.length})`), citing);
  }
  if (found.references.length) {
    const inLibrary = found.references.filter((r) => r.target).length;
    const list = el("ol", { class: "references" });
    for (const ref of found.references) {
      const item = el("li", {}, ref.label ? el("span", { class: "ref-label" }, `[${ref.label}] `) : "", ref.text);
      if (ref.target) item.append(" ", el("span", { class: "in-library" }, "in your library: "), paperLink(ref.target, ref.target));
      list.append(item);
    }
    const summary = `References (${found.references.length}, ${inLibrary} in this library)`;
    references.append(el("details", { open: "" }, el("summary", {}, summary), list));
  }
}

async function openPaper(fileName, push = true) {
  state.doc = fileName;
  if (push) writeUrl();
  let paper;
  try {
    paper = await api(`/api/documents/${encodeURIComponent(fileName)}`);
  } catch (error) {
    $("#status").textContent = `No such paper: ${fileName}`;
    return;
  }
  const body = $("#paper-body");
  body.replaceChildren(
    el("h2", {}, paper.title),
    el("p", { class: "byline" }, byline(paper)),
    el("p", { class: "help" }, `${paper.file} · ${paper.passages.length} passage${paper.passages.length === 1 ? "" : "s"}` + (paper.doi ? ` · doi:${paper.doi}` : "")),
  );
  const list = el("ol", { class: "passages" });
  for (const passage of paper.passages) {
    const head = passage.headings.length ? passage.headings[passage.headings.length - 1] : "";
    const printed = passage.page_label ? `, printed ${passage.page_label}` : "";
    const pages = passage.pages.length ? ` (p. ${passage.pages.join(", ")}${printed})` : "";
    const item = el("li", {}, head || pages ? el("h3", {}, head + pages) : "", el("p", {}, passage.text));
    if (passage.regions && passage.regions.length) item.append(pageToggle(paper, passage));
    list.append(item);
  }
  // cited by above the passages, the reference list after them, as in the paper
  const citedBy = el("section", { class: "citations", "aria-label": "Cited by" });
  const references = el("section", { class: "citations", "aria-label": "References" });
  body.append(citedBy, list, references);
  showCitations(fileName, citedBy, references);
  $("#results").hidden = true;
  $("#facets").hidden = true;
  $("#paper").hidden = false;
  $("#paper").focus();
}

$("#search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  Object.assign(state, { q: $("#q").value.trim(), mode: $("#mode").value, doc: "" });
  writeUrl();
  run();
});
for (const id of ["#year-from", "#year-to"]) {
  $(id).addEventListener("change", () => {
    state.year_from = $("#year-from").value; state.year_to = $("#year-to").value;
    writeUrl(); run();
  });
}
$("#clear-filters").addEventListener("click", () => {
  Object.assign(state, { year_from: "", year_to: "", author: [], journal: [], tag: [], collection: [], language: [] });
  writeUrl(); run();
});
$("#back").addEventListener("click", () => { state.doc = ""; writeUrl(); run(); $("#results").focus(); });
document.addEventListener("keydown", (event) => {
  if (event.key === "/" && document.activeElement !== $("#q")) { event.preventDefault(); $("#q").focus(); }
  if (event.key === "Escape" && !$("#paper").hidden) $("#back").click();
});
window.addEventListener("popstate", () => { readUrl(); run(); });
readUrl();
run();
