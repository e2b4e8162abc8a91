// The workbench's EpiDoc upload: POST /api/epidoc with the file's text and the form's options;
// shows the readings per lacuna and the Leiden text, and offers the restored EpiDoc file.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  let restored = null;

  function field(id) {
    const v = $(id) ? $(id).value.trim() : "";
    return /^\d+$/.test(v) ? Number(v) : v;
  }

  function show(answer) {
    $("epidoc-leiden").textContent = answer.leiden;
    $("epidoc-leiden").hidden = false;
    const list = $("epidoc-lacunae");
    list.replaceChildren();
    for (const lac of answer.lacunae) {
      const where = lac.lb ? `line ${lac.lb}` : `lacuna ${lac.lacuna + 1}`;
      const readings = lac.readings.map((r) => `${r.text} (${r.prob.toFixed(3)}${r.accented ? "" : ", unaccented"})`);
      const editor = lac.editor ? ` — editor: ${lac.editor}` : "";
      const item = document.createElement("li");
      item.textContent = `${where}, ${lac.length} characters: ${readings.join(" · ")}${editor}`;
      list.append(item);
    }
    for (const note of answer.notes) {
      const item = document.createElement("li");
      item.className = "note";
      item.textContent = `note: ${note}`;
      list.append(item);
    }
    restored = answer.epidoc;
    $("epidoc-download").hidden = false;
  }

  async function upload() {
    const file = $("epidoc-file").files[0];
    if (!file) return;
    $("epidoc-status").textContent = `restoring ${file.name} …`;
    $("epidoc-download").hidden = true;
    const body = {xml: await file.text(), model: $("model").value,
                  hide_supplied: $("hide-supplied").checked,
                  beam: field("beam"), top_k: field("top_k"), seed: field("seed")};
    if ($("scorer").value) body.scorer = $("scorer").value;
    if ($("order").value) body.order = $("order").value;     // else the model's default
    const res = await fetch("/api/epidoc", {method: "POST", body: JSON.stringify(body),
                                            headers: {"Content-Type": "application/json"}});
    const answer = await res.json();
    if (!res.ok) {
      $("epidoc-status").textContent = `Error: ${answer.error}`;
      return;
    }
    $("epidoc-status").textContent = `${file.name}: ${answer.lacunae.length} lacunae restored`;
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
    $("epidoc-download").addEventListener("click", download);
  });
})();
