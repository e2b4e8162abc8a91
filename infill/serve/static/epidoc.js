// The workbench's EpiDoc upload: POST /api/epidoc with the file's text and the form's options;
// the answer (readings per lacuna, the Leiden text, the restored file to download) replaces the
// previous results, as a text's answer does (app.js: clearResults, reveal, defaultsNote).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  let restored = null;

  function field(id) {
    const v = $(id) ? $(id).value.trim() : "";
    return /^\d+$/.test(v) ? Number(v) : v;
  }

  function item(text, cls = "") {
    const li = document.createElement("li");
    if (cls) li.className = cls;
    li.textContent = text;
    return li;
  }

  // "line 5, 3–5 characters" (a lacuna of uncertain length is decoded over its whole range)
  function where(lac) {
    const place = lac.lb ? `line ${lac.lb}` : `lacuna ${lac.lacuna + 1}`;
    const size = Array.isArray(lac.lengths) && lac.lengths.length === 2
      ? `${lac.lengths[0]}–${lac.lengths[1]} characters` : plural(lac.length, "character");
    return `${place}, ${size}`;
  }

  function reading(r) {
    const p = Number.isFinite(r.prob) ? r.prob.toFixed(3) : "p unknown";
    return `${r.text} (${p}${r.accented === false ? ", unaccented" : ""})`;
  }

  function show(answer) {
    $("epidoc-summary").textContent = summary(answer, plural(answer.lacunae.length, "lacuna",
                                                             "lacunae"), undefined, "");
    const chosen = defaultsNote(answer.config, answer);
    $("epidoc-defaults").replaceChildren(...(chosen ? [chosen] : []));
    $("epidoc-leiden").textContent = answer.leiden;
    const list = $("epidoc-lacunae");
    list.replaceChildren();
    for (const lac of answer.lacunae) {
      const editor = lac.editor ? ` — editor: ${lac.editor}` : "";
      list.append(item(`${where(lac)}: ${lac.readings.map(reading).join(" · ")}${editor}`));
    }
    for (const note of answer.notes) list.append(item(`note: ${note}`, "note"));
    restored = answer.epidoc;
    reveal($("epidoc-result"));
  }

  async function upload() {
    const file = $("epidoc-file").files[0];
    if (!file) return;
    clearResults();                  // the upload's answer replaces whatever was shown
    $("epidoc-status").textContent = `restoring ${file.name} …`;
    const body = {xml: await file.text(), model: $("model").value,
                  hide_supplied: $("hide-supplied").checked,
                  unclear: $("restore-unclear").checked ? "restore" : "keep",
                  beam_size: field("beam"), top_k: field("top_k"), seed: field("seed")};
    if ($("scorer").value) body.scorer = $("scorer").value;
    if ($("order").value) body.order = $("order").value;     // else the model's default
    if ($("rerank").value) body.rerank = $("rerank").value;
    if ($("lacuna_edges").value) body.lacuna_edges = $("lacuna_edges").value;
    let res, answer;
    try {
      res = await fetch("/api/epidoc", {method: "POST", body: JSON.stringify(body),
                                        headers: {"Content-Type": "application/json"}});
      answer = await res.json();
    } catch (err) {
      answer = {error: res ? `HTTP ${res.status}` : err.message};
    }
    if (!res || !res.ok || answer.error) {
      $("epidoc-status").textContent = `Error: ${answer.error || `HTTP ${res.status}`}`;
      return;
    }
    const n = answer.lacunae.length;
    $("epidoc-status").textContent = `${file.name}: ${plural(n, "lacuna", "lacunae")} restored`;
    show(answer);
  }

  function download() {
    const name = ($("epidoc-file").files[0] || {name: "edition.xml"}).name.replace(/\.xml$/i, "");
    const url = URL.createObjectURL(new Blob([restored], {type: "application/xml"}));
    const a = Object.assign(document.createElement("a"), {href: url, download: `${name}.infill.xml`});
    a.click();
    URL.revokeObjectURL(url);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("epidoc-file").addEventListener("change", upload);
    $("hide-supplied").addEventListener("change", upload);
    $("restore-unclear").addEventListener("change", upload);
    $("epidoc-download").addEventListener("click", download);
  });
})();
