// infill workbench: the form -> POST /api/fill -> the aligned view of the ranked hypotheses.
// The rendering follows `infill run --view aligned` (cli/io.py): the gap region of each
// hypothesis stacked under the input, a confidence digit under each filled character, colour by
// the probability of its token (>= 0.5, >= 0.1, below), characters differing from rank 1 marked.
"use strict";

// characters of context either side of a gap: 12 as the CLI, 8 on a phone-width screen
const context = () => (window.matchMedia("(max-width: 30rem)").matches ? 8 : 12);

const EXAMPLES = {
  english: [
    {label: "Hamlet", text: "To be, or not to ___, that is the question.", gap: ""},
    {label: "Romeo", text: "O Romeo, Romeo! wherefore art ___ Romeo?", gap: ""},
    {label: "two tokens", text: "All the world's a ___, and all the men and women merely players.", gap: 2},
  ],
  greek: [
    {label: "Odyssey 1.1 (Leiden)", text: "ἄνδρα μοι ἔννεπε, μ[..]σα, πολύτροπον, ὃς μάλα [.3]λὰ", gap: 1},
    {label: "Iliad 1.1", text: "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος", gap: 1},
    {label: "with damage", text: "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτρ?π?ν, -ς μάλα πολλὰ", gap: 1},
  ],
  protein: [
    {label: "AcyP", text: "MAKRVYFLAHGGQVQGVGFRYFTQKRASEYGLTGWCRNTD?????GEAQGDEDALKK", gap: 1},
    {label: "___ gap", text: "MKTAYIAKQR___ISFVKSHFSRQ", gap: 2},
  ],
  antibody: [
    {label: "CDR-H3", text: "EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQMNSLRAEDTAVYYCAK?????????WGQGTLVTVSS", gap: 1},
  ],
};
EXAMPLES.text = EXAMPLES.english;

const $ = (id) => document.getElementById(id);
const state = {models: [], options: null, result: null, busy: false};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "style") node.style.cssText = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

// ---- confidence (cli/io.py: confidence_style, confidence_digit, char_probs) -----------------
function confClass(p) {
  if (!(p >= 0.1)) return "conf-low";
  return p >= 0.5 ? "conf-high" : "conf-mid";
}

function confDigit(p) {
  return Number.isFinite(p) ? String(Math.min(9, Math.floor(Math.max(p, 0) * 10))) : "·";
}

// {character offset: probability} for every filled character: a character gets the probability
// of the token that starts at or before it within its gap (a word piece covers several).
function charProbs(c) {
  const out = new Map();
  const starts = c.positions.map((p) => [p.index, p.prob ?? NaN]).sort((a, b) => a[0] - b[0]);
  for (const [start, end] of c.spans) {
    let inside = starts.filter(([i]) => start <= i && i < end);
    if (!inside.length) inside = [[start, NaN]];
    for (let off = start; off < end; off++) {
      let prob = inside[0][1];
      for (const [i, p] of inside) if (i <= off) prob = p;
      out.set(off, prob);
    }
  }
  return out;
}

function tokenAt(c, off) {
  let best = null;
  for (const p of c.positions) if (p.index <= off && (!best || p.index >= best.index)) best = p;
  return best;
}

function filledChar(ch, prob, pos, differs) {
  const span = el("span", {class: `ch ${confClass(prob)}${differs ? " differs" : ""}`,
                           style: `--p:${Number.isFinite(prob) ? prob.toFixed(3) : 0}`});
  if (pos) {
    const p = Number.isFinite(prob) ? prob.toFixed(3) : "unknown";
    const logq = Number.isFinite(pos.logq) ? pos.logq.toFixed(3) : "−∞";
    span.title = `token ${JSON.stringify(pos.token)} · p = ${p} · log q = ${logq} · ` +
                 `step ${pos.step + 1}`;
  }
  span.append(el("span", {class: "g"}, ch === " " ? "\u00a0" : ch),
              el("span", {class: "d", "aria-hidden": "true"}, confDigit(prob)));
  return span;
}

// ---- the aligned view ----------------------------------------------------------------------
function renderAligned(result, box = $("aligned")) {
  box.replaceChildren();
  const comps = result.completions;
  if (!comps.length) {
    box.append(el("p", {class: "empty"}, "(no completion)"));
    return;
  }
  const CONTEXT = context();
  const top = comps[0];
  const topChars = Array.from(top.text);
  top.spans.forEach(([s0, e0], k) => {
    const block = el("div", {class: "gap-block"});
    if (top.spans.length > 1) block.append(el("h3", {}, `Gap ${k + 1}`));
    const table = el("table", {class: "aligned"});
    const left0 = Math.max(0, s0 - CONTEXT);
    const inputRow = el("tr", {class: "input-row"},
      el("th", {scope: "row"}, "input"), el("td", {class: "score"}, ""),
      el("td", {class: "line"},
         (left0 ? "…" : "") + topChars.slice(left0, s0).join(""),
         el("span", {class: "hole"}, "?".repeat(e0 - s0)),
         topChars.slice(e0, e0 + CONTEXT).join("")));
    table.append(el("thead", {}, inputRow));
    const body = el("tbody");
    const refFill = topChars.slice(s0, e0);
    comps.forEach((c, r) => {
      const chars = Array.from(c.text);
      const [s, e] = c.spans[k];
      const left = Math.max(0, s - CONTEXT);
      const probs = charProbs(c);
      const fill = el("span", {class: "fill"});
      for (let off = s; off < e; off++) {
        const differs = r > 0 && (off - s >= refFill.length || refFill[off - s] !== chars[off]);
        fill.append(filledChar(chars[off], probs.get(off), tokenAt(c, off), differs));
      }
      body.append(el("tr", {class: "hyp", "data-rank": String(r + 1)},
        el("th", {scope: "row"}, String(r + 1)),
        el("td", {class: "score"}, fmtScore(c.score)),
        el("td", {class: "line"}, (left ? "…" : "") + chars.slice(left, s).join(""), fill,
           chars.slice(e, e + CONTEXT).join(""))));
    });
    table.append(body);
    block.append(el("div", {class: "scroll"}, table));
    box.append(block);
  });
}

function renderRanked(result, list = $("ranked")) {
  list.replaceChildren();
  for (const c of result.completions) {
    const chars = Array.from(c.text);
    const probs = charProbs(c);
    const line = el("span", {class: "text"});
    let plain = "";
    chars.forEach((ch, i) => {
      if (probs.has(i)) {
        if (plain) line.append(plain);
        plain = "";
        line.append(el("mark", {class: confClass(probs.get(i)),
                                style: `--p:${(probs.get(i) || 0).toFixed(3)}`}, ch));
      } else {
        plain += ch;
      }
    });
    if (plain) line.append(plain);
    list.append(el("li", {class: "hypothesis", "data-text": c.text},
                   line, el("span", {class: "score"}, fmtScore(c.score))));
  }
}

// every answer replaces the one before: the text results and an EpiDoc upload's alike
function clearResults() {
  state.result = null;
  $("results").hidden = true;
  for (const id of ["notes", "aligned", "ranked", "records", "defaults"]) $(id).replaceChildren();
  $("summary").textContent = "";
  $("read-as").hidden = true;
  $("epidoc-result").hidden = true;
  $("check-result").hidden = true;
  $("readings-result").hidden = true;
  for (const id of ["readings-table", "readings-notes", "readings-lacunae"]) $(id).replaceChildren();
  for (const id of ["check-text", "check-table", "check-notes"]) $(id).replaceChildren();
  for (const id of ["epidoc-lacunae", "epidoc-defaults"]) $(id).replaceChildren();
  for (const id of ["epidoc-summary", "epidoc-leiden", "epidoc-status"]) $(id).textContent = "";
  setStatus("");
}

// an answer's section, shown and scrolled to the top of the window (the form is long)
function reveal(section) {
  section.hidden = false;
  section.scrollIntoView({block: "start"});
}

// "1 lacuna", "3 lacunae"
function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

function shown(v) {            // a value as text; "" for none (never "undefined" or "null")
  if (v === null || v === undefined || Number.isNaN(v)) return "";
  return Array.isArray(v) ? v.map(shown).join("–") : String(v);
}

const OPTION_NAMES = {gap: "gap length", length_score: "length score", beam_size: "beam",
                      rerank: "rerank", lacuna_edges: "lacuna edges"};

// the options the model's recommendation chose, on one line: "defaults: scorer standard, order
// left-to-right (builtin:greek's)"; the reason behind it opens below (as the CLI's status line)
function defaultsNote(cfg, answer = {}) {
  const d = cfg && cfg.defaults;
  if (!d || !d.options || !d.options.length) return null;
  const used = d.options.map((k) => {
    const v = shown(k in cfg ? cfg[k] : answer[k]);
    return v ? `${OPTION_NAMES[k] || k} ${v}` : OPTION_NAMES[k] || k;
  });
  const whose = !d.source || d.source === "infill" ? "infill's" : `${d.source}'s`;
  const line = el("summary", {}, `defaults: ${used.join(", ")} (${whose})`);
  const note = el("details", {class: "defaults"}, line);
  if (d.why) {
    line.title = d.why;
    note.append(el("p", {}, `Why: ${d.why}`));
  }
  return note;
}

function modelRow(name) {
  return state.models.find((m) => m.name === name) || {};
}

// what was filled: "2 gaps, 5 characters", "1 gap, 13 residues" (the positions the best
// hypothesis filled, in the model's unit)
function extent(result) {
  const top = result.completions && result.completions[0];
  if (!top) return "";
  const unit = (modelRow(result.model).unit || "positions").replace(/s$/, "");
  return `${plural(top.spans.length, "gap")}, ${plural(top.positions.length, unit)}`;
}

// "builtin:greek · standard · left-to-right · beam 5 · 2 gaps, 5 characters · seed 0 · …"
function summary(result, what, ms, filled = extent(result)) {
  const cfg = result.config || {};
  const parts = [result.model, cfg.scorer, cfg.order,
                 cfg.beam_size ? `beam ${cfg.beam_size}` : "",
                 cfg.rerank ? `reranked by score with ${cfg.rerank}` : "",
                 cfg.lacuna_edges === "letters" ? "no space at a lacuna's edges" : "", filled,
                 shown(cfg.seed) ? `seed ${cfg.seed}` : "",
                 ms === undefined ? what : `${what} in ${ms} ms`];
  return parts.filter(Boolean).join(" · ");
}

// FASTA exports only for sequences (protein and antibody models)
function offerFasta(model) {
  const fam = modelRow(model).family;
  const fasta = fam === "protein" || fam === "antibody";
  for (const b of document.querySelectorAll("#results .fasta")) b.hidden = !fasta;
}

function render(result, typed, ms) {
  state.result = result;
  $("single").hidden = false;
  $("records").hidden = true;
  offerFasta(result.model);
  $("summary").textContent = summary(result, plural(result.completions.length, "hypothesis",
                                                    "hypotheses"), ms);
  const readAs = $("read-as");
  readAs.hidden = result.input === typed;
  readAs.replaceChildren("Read as ", el("code", {}, result.input));
  const chosen = defaultsNote(result.config, result);
  $("defaults").replaceChildren(...(chosen ? [chosen] : []));
  const notes = $("notes");
  notes.replaceChildren();
  for (const n of result.notes) notes.append(el("li", {}, n));
  if (result.windows && result.windows.length) {
    notes.append(el("li", {}, `longer than the model's context: decoded in ` +
                              `${plural(result.windows.length, "window")} centred on the gaps`));
  }
  renderAligned(result);
  renderRanked(result);
  reveal($("results"));
}

// every record of a FASTA text ("record": "all"): one section per record, its name as heading;
// a record's error shows in its own section only
function renderRecords(answer, typed, ms) {
  state.result = answer;
  $("single").hidden = true;
  const box = $("records");
  box.hidden = false;
  box.replaceChildren();
  const recs = answer.records;
  const filled = recs.filter((r) => r.error === null);
  const first = filled[0] || recs[0];
  offerFasta(first.model);
  $("summary").textContent = summary(first, plural(recs.length, "record"), ms, "");
  const chosen = defaultsNote(first.config, first);
  $("defaults").replaceChildren(...(chosen ? [chosen] : []));
  const typedSeqs = fastaRecords(typed);
  recs.forEach((r, k) => {
    const sec = el("section", {class: "record", "data-id": r.id ?? ""});
    sec.append(el("h3", {class: "record-name"}, `${k + 1}. ${r.header || r.id || "(no name)"}`));
    if (r.error !== null) {
      sec.append(el("p", {class: "record-error"}, `Error: ${r.error}`));
      box.append(sec);
      return;
    }
    if (typedSeqs[k] !== undefined && r.input !== typedSeqs[k]) {
      sec.append(el("p", {class: "read-as"}, "Read as ", el("code", {}, r.input)));
    }
    sec.append(el("p", {class: "summary"}, extent(r)));
    const notes = el("ul", {class: "notes"}, ...r.notes.map((n) => el("li", {}, n)));
    const aligned = el("div", {class: "aligned-view"});
    const ranked = el("ol", {class: "ranked"});
    renderAligned(r, aligned);
    renderRanked(r, ranked);
    sec.append(notes, aligned, el("h4", {}, "Full texts"), ranked);
    box.append(sec);
  });
  if (filled.length) {           // the legends, once, as in the one-input view
    box.append(el("div", {class: "record-legends"},
      ...Array.from(document.querySelectorAll("#single .legend"), (p) => p.cloneNode(true))));
  }
  reveal($("results"));
  return filled.length;
}

// ---- export --------------------------------------------------------------------------------
function asJSON() {
  return JSON.stringify(state.result, null, 2) + "\n";
}

function fmtScore(x) {   // JSON has no -inf: such a score arrives as null
  return Number.isFinite(x) ? x.toFixed(4) : "-inf";
}

function asFASTA() {   // as `infill run --output-format fasta` (every record: each its designs)
  if (state.result.records) {
    return state.result.records.filter((r) => r.error === null).map((r) => fastaOf(r)).join("");
  }
  return fastaOf(state.result);
}

function fastaOf(r) {
  const id = r.id ?? "input";
  return r.completions.map((c) => {
    const lines = [];
    for (let i = 0; i < c.text.length; i += 60) lines.push(c.text.slice(i, i + 60));
    return `>${id}|rank=${c.rank}|score=${fmtScore(c.score)}|model=${r.model}\n` +
           `${lines.join("\n")}\n`;
  }).join("");
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = el("textarea", {class: "visually-hidden"});
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  setStatus(`${what} copied`);
}

function download(text, name, type) {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const a = el("a", {href: url, download: name});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---- the form ------------------------------------------------------------------------------
function setStatus(text, isError = false) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", isError);
}

function family() {
  const m = state.models.find((r) => r.name === $("model").value);
  return m ? m.family : "text";
}

function onModelChange() {
  const fam = family();
  document.body.dataset.family = fam;
  $("region-field").hidden = fam !== "antibody";
  $("text").lang = fam === "greek" ? "grc" : (fam === "english" || fam === "text" ? "en" : "");
  for (const li of document.querySelectorAll("#conventions li")) {
    li.classList.toggle("na", !li.dataset.families.split(" ").includes(fam));
  }
  const box = $("examples");
  box.replaceChildren(el("span", {class: "examples-label"}, "Try:"));
  for (const ex of EXAMPLES[fam] || []) {
    const b = el("button", {type: "button", class: "example"}, ex.label);
    b.addEventListener("click", () => {
      $("text").value = ex.text;
      $("gap").value = ex.gap;
      $("text").focus();
    });
    box.append(b);
  }
  if (!$("text").value && EXAMPLES[fam]) $("text").placeholder = EXAMPLES[fam][0].text;
}

function intField(id) {
  const v = $(id).value.trim();
  return /^\d+$/.test(v) ? Number(v) : v;   // the server says what is wrong with anything else
}

// The gap's length: N, LO-HI or word; empty: the model's default (null)
function gapField() {
  const v = intField("gap");
  return v === "" ? null : v;
}

// FASTA text: the server fills one record or all of them; the picker says which (1-based, the
// first by default; "all": every record, each answered on its own)
function fastaHeaders(text) {
  const first = text.split("\n").map((l) => l.trim()).find((l) => l && !l.startsWith(";"));
  if (!first || !first.startsWith(">")) return [];
  return text.split("\n").map((l) => l.trim()).filter((l) => l.startsWith(">"))
    .map((l) => l.slice(1).trim());
}

function fastaRecords(text) {   // the sequences, as the server reads them (infill/data/fasta.py)
  const seqs = [];
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (!line || line.startsWith(";")) continue;
    if (line.startsWith(">")) seqs.push("");
    else if (seqs.length) seqs[seqs.length - 1] += line.replace(/\s+/g, "");
  }
  return seqs;
}

function onTextChange() {
  const headers = fastaHeaders($("text").value);
  const keep = $("record").value;
  $("record-field").hidden = headers.length === 0;
  const options = headers.map((h, i) =>
    el("option", {value: String(i + 1)}, `${i + 1}: ${h || "(no name)"}`));
  if (headers.length > 1) options.push(el("option", {value: "all"}, `all ${headers.length} records`));
  $("record").replaceChildren(...options);
  if (keep === "all" ? headers.length > 1 : keep && Number(keep) <= headers.length) {
    $("record").value = keep;
  }
}

function payload() {
  const body = {text: $("text").value, model: $("model").value, gap: gapField(),
                marker: $("marker").value, scorer: $("scorer").value || null,
                beam_size: intField("beam"), top_k: intField("top_k"), seed: intField("seed")};
  if ($("order").value) body.order = $("order").value;     // else the model's default
  if ($("rerank").value) body.rerank = $("rerank").value;
  if ($("lacuna_edges").value) body.lacuna_edges = $("lacuna_edges").value;
  const record = $("record").value;
  if (!$("record-field").hidden && record) body.record = record === "all" ? "all" : Number(record);
  if (!$("region-field").hidden && $("region").value) body.region = $("region").value;
  const pivot = $("pivot").value.trim().split(/\s+/).filter(Boolean);
  if (pivot.length) body.pivot = pivot.length === 1 ? pivot[0] : pivot;
  return body;
}

function fillPayload() {
  const body = payload();               // and what only a fill takes: unclear letters restored
  if ($("fill-unclear").checked) body.unclear = "restore";
  return body;
}

async function submit(event) {
  event.preventDefault();
  if (state.busy) return;
  const body = fillPayload();
  if (!body.text.trim()) {
    setStatus("Type a text with at least one gap.", true);
    $("text").focus();
    return;
  }
  state.busy = true;
  $("submit").disabled = true;
  document.body.classList.add("busy");
  clearResults();                // a new request never shows the previous one's results
  setStatus("Filling…");
  const t0 = performance.now();
  try {
    const res = await fetch("/api/fill", {method: "POST", body: JSON.stringify(body),
                                          headers: {"Content-Type": "application/json"}});
    const data = await res.json().catch(() => ({error: `HTTP ${res.status}`}));
    if (!res.ok || data.error) throw new Error(data.error || `HTTP ${res.status}`);
    const ms = Math.round(performance.now() - t0);
    if (data.records) {
      const filled = renderRecords(data, body.text, ms);
      const failed = data.records.length - filled;
      setStatus(`${filled} of ${data.records.length} records filled` +
                (failed ? `, ${failed} with an error (shown under its name)` : "") + ` (${ms} ms)`);
    } else {
      render(data, body.text, ms);
      setStatus(`${plural(data.completions.length, "hypothesis", "hypotheses")} (${ms} ms)`);
    }
  } catch (err) {
    clearResults();              // an error never sits above the previous request's results
    setStatus(err.message, true);
  } finally {
    state.busy = false;
    $("submit").disabled = false;
    document.body.classList.remove("busy");
  }
}

// ---- the check view (POST /api/check, as infill check) ------------------------------------
function pct(p) {
  return p >= 0.001 ? p.toFixed(3) : p.toExponential(0);
}

function renderCheck(data, ms) {
  const shownText = data.shown, box = $("check-text");
  let at = 0;
  for (const p of data.positions) {
    const [s, e] = p.span;
    if (s > at) box.append(shownText.slice(at, s));
    const attrs = {class: p.flagged ? "tok doubtful" : "tok",
                   title: `${p.written} ${pct(p.prob)}; best other: ${p.best} ${pct(p.best_prob)}`};
    box.append(el("span", attrs, shownText.slice(s, e)));
    at = e;
  }
  if (at < shownText.length) box.append(shownText.slice(at));
  $("check-notes").replaceChildren(...(data.notes || []).map((n) => el("li", {}, n)));
  const flagged = data.positions.filter((p) => p.flagged);
  $("check-summary").textContent = `${plural(flagged.length, "doubtful reading")} of ` +
    `${data.checked} checked (threshold ${data.threshold}; ${data.model}; ${ms} ms)`;
  const head = el("tr", {}, ...["pos", "written", "p", "best other", "p", "log-ratio"]
    .map((h) => el("th", {}, h)));
  $("check-table").replaceChildren(head, ...flagged.map((p) => el("tr", {},
    ...[p.position, p.written, pct(p.prob), p.best, pct(p.best_prob), p.log_ratio.toFixed(2)]
      .map((v) => el("td", {}, String(v))))));
  reveal($("check-result"));
}

async function runCheck() {
  if (state.busy) return;
  const body = {text: $("text").value, model: $("model").value, marker: $("marker").value};
  if (!body.text.trim()) {
    setStatus("Type a text to check.", true);
    $("text").focus();
    return;
  }
  state.busy = true;
  $("check-button").disabled = true;
  clearResults();
  setStatus("Checking…");
  const t0 = performance.now();
  try {
    const res = await fetch("/api/check", {method: "POST", body: JSON.stringify(body),
                                           headers: {"Content-Type": "application/json"}});
    const data = await res.json().catch(() => ({error: `HTTP ${res.status}`}));
    if (!res.ok || data.error) throw new Error(data.error || `HTTP ${res.status}`);
    const ms = Math.round(performance.now() - t0);
    renderCheck(data, ms);
    setStatus(`${plural(data.flagged.length, "doubtful reading")} (${ms} ms)`);
  } catch (err) {
    clearResults();
    setStatus(err.message, true);
  } finally {
    state.busy = false;
    $("check-button").disabled = false;
  }
}

// ---- candidate readings (POST /api/readings, as infill run --readings) ------------------------
function renderReadings(data, ms) {
  const cfg = data.config;
  $("readings-summary").textContent = `${plural(data.combinations.length, "combination")} ` +
    `scored with ${cfg.scorer}, ${cfg.order} (beam ${cfg.beam_size}` +
    (cfg.length_score ? `; lengths ranked by ${cfg.length_score}` : "") +
    (cfg.rerank ? `; reranked by score with ${cfg.rerank}` : "") + `; ${data.model}; ${ms} ms)`;
  const ranked = Boolean(cfg.length_score || cfg.rerank);
  $("readings-notes").replaceChildren(...(data.notes || []).map((n) => el("li", {}, n)));
  const cols = ["prob", "score", ...(ranked ? ["rank_score"] : []), "beam rank", "readings"];
  const head = el("tr", {}, ...cols.map((h) => el("th", {}, h)));
  $("readings-table").replaceChildren(head, ...data.combinations.map((c) => el("tr", {},
    ...[c.prob.toFixed(3), fmtScore(c.score), ...(ranked ? [fmtScore(c.rank_score)] : []),
        c.beam_rank ?? "not in the top-k", c.readings.join(" | ") + (c.exact ? "" : " (lower bound)")]
      .map((v) => el("td", {}, String(v))))));
  $("readings-lacunae").replaceChildren(...(data.lacunae.length > 1 ? data.lacunae : []).map((l) =>
    el("div", {}, `lacuna ${l.lacuna + 1}: ` +
       l.readings.map((r) => `${r.text} ${r.prob.toFixed(3)}`).join(", "))));
  $("readings-beam").textContent = `the beam's top-${data.completions.length}: ` +
    data.completions.map((c) => `${c.rank} ${c.fills.join(" | ")} (${fmtScore(c.score)})`).join("; ");
  reveal($("readings-result"));
}

async function runReadings() {
  if (state.busy) return;
  const body = payload();
  delete body.record;
  delete body.region;
  body.readings = $("readings").value.split("\n").map((l) => l.trim()).filter(Boolean);
  if (!body.text.trim() || !body.readings.length) {
    setStatus("Type a text with its lacunae and one line of readings per lacuna.", true);
    $(body.text.trim() ? "readings" : "text").focus();
    return;
  }
  state.busy = true;
  $("readings-button").disabled = true;
  clearResults();
  setStatus("Scoring readings…");
  const t0 = performance.now();
  try {
    const res = await fetch("/api/readings", {method: "POST", body: JSON.stringify(body),
                                              headers: {"Content-Type": "application/json"}});
    const data = await res.json().catch(() => ({error: `HTTP ${res.status}`}));
    if (!res.ok || data.error) throw new Error(data.error || `HTTP ${res.status}`);
    const ms = Math.round(performance.now() - t0);
    renderReadings(data, ms);
    setStatus(`${plural(data.combinations.length, "combination")} of readings (${ms} ms)`);
  } catch (err) {
    clearResults();
    setStatus(err.message, true);
  } finally {
    state.busy = false;
    $("readings-button").disabled = false;
  }
}

async function getJSON(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.json();
}

async function init() {
  $("fill-form").addEventListener("submit", submit);
  $("check-button").addEventListener("click", runCheck);
  $("readings-button").addEventListener("click", runReadings);
  $("text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      $("fill-form").requestSubmit();
    }
  });
  $("model").addEventListener("change", onModelChange);
  $("text").addEventListener("input", onTextChange);
  $("copy-json").addEventListener("click", () => copy(asJSON(), "JSON"));
  $("copy-fasta").addEventListener("click", () => copy(asFASTA(), "FASTA"));
  $("download-json").addEventListener("click",
    () => download(asJSON(), "infill-result.json", "application/json"));
  $("download-fasta").addEventListener("click",
    () => download(asFASTA(), "infill-result.fasta", "text/plain"));
  try {
    const [options, models] = await Promise.all([getJSON("/api/options"), getJSON("/api/models")]);
    state.options = options;
    state.models = models;
    $("scorer").replaceChildren(el("option", {value: ""}, "model's default"),
                                ...options.scorers.map((s) => el("option", {value: s}, s)));
    $("region").append(...(options.regions || []).map((r) => el("option", {value: r}, r)));
    $("order").replaceChildren(el("option", {value: ""}, "model's default"),
                               ...options.orders.map((s) => el("option", {value: s}, s)));
    $("rerank").replaceChildren(el("option", {value: ""}, "model's default"),
                                ...options.reranks.map((s) => el("option", {value: s}, s)));
    $("lacuna_edges").replaceChildren(el("option", {value: ""}, "model's default"),
      ...options.lacuna_edges.map((s) => el("option", {value: s}, s)));
    $("model").replaceChildren(...models.map((m) => el("option",
      {value: m.name, title: m.description}, `${m.name} (${m.knows || m.family}${m.status === "loaded" ? ", loaded" : ""})`)));
    const d = options.defaults;
    $("model").value = d.model;
    $("scorer").value = "";
    $("order").value = "";
    $("rerank").value = "";
    $("lacuna_edges").value = "";
    for (const k of ["gap", "beam", "top_k", "seed"]) $(k).value = d[k === "beam" ? "beam_size" : k] ?? "";
    $("marker").value = d.marker;
    const lim = options.limits;
    $("beam").max = lim.max_beam;
    $("top_k").max = lim.max_top_k;
    $("text").maxLength = lim.max_text;
    onModelChange();
    document.body.dataset.ready = "1";
  } catch (err) {
    setStatus(`cannot reach the server: ${err.message}`, true);
  }
}

init();
