"""The workbench page in a real browser: headless Chromium loads it from ``infill serve``, a
Greek line with Leiden lacunae is submitted from the keyboard, and the ranked hypotheses (the
same as a direct ``fill_each`` call) appear in the aligned view, at desktop and phone widths.

Skipped where Chromium, its driver or selenium is absent (Debian: ``apt-get install chromium
chromium-driver``; ``pip install selenium``). Screenshots go to the test's temporary folder, and
also to ``$INFILL_SCREENSHOTS`` when set (docs/WORKBENCH.md's come from there)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

ODYSSEY = "ἄνδρα μοι ἔννεπε, μ[..]σα, πολύτροπον, ὃς μάλα [.3]λὰ"
ODYSSEY_READ = "ἄνδρα μοι ἔννεπε, μ??σα, πολύτροπον, ὃς μάλα ???λὰ"
WAIT = 30


def _save(driver, tmp_path: Path, name: str) -> Path:
    """A full-page screenshot (the window grown to the page's height)."""
    width = driver.get_window_size()["width"]
    for _ in range(3):        # the window holds the page's whole height (plus the browser's own)
        missing = driver.execute_script(
            "return document.documentElement.scrollHeight - window.innerHeight")
        if missing <= 0:
            break
        driver.set_window_size(width, driver.get_window_size()["height"] + missing)
    path = tmp_path / name
    driver.save_screenshot(str(path))
    target = os.environ.get("INFILL_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / name)
    return path


def _restore(driver, base: str, text: str, width: int):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
    driver.set_window_size(width, 900)
    driver.get(base + "/")
    WebDriverWait(driver, WAIT).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    assert Select(driver.find_element(By.ID, "model")).first_selected_option \
        .get_attribute("value") == "builtin:greek"
    box = driver.find_element(By.ID, "text")
    box.clear()
    box.send_keys(text)
    box.send_keys(Keys.CONTROL, Keys.ENTER)            # keyboard submission
    WebDriverWait(driver, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")
        or "error" in d.find_element(By.ID, "status").get_attribute("class"))


def test_page_restores_a_line_of_homer(cli_server, browser, catalog, expected_fn, tmp_path):
    from selenium.webdriver.common.by import By
    want = expected_fn(catalog, "builtin:greek", ODYSSEY_READ, top_k=5)

    _restore(browser, cli_server, ODYSSEY, 1100)
    texts = [li.get_attribute("data-text")
             for li in browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")]
    assert texts == [c["text"] for c in want["completions"]]
    assert browser.find_element(By.ID, "read-as").text == f"Read as {ODYSSEY_READ}"
    # the aligned view: one block per gap, the input row and one row per hypothesis, a
    # confidence digit under every filled character, differing characters marked
    blocks = browser.find_elements(By.CSS_SELECTOR, "#aligned .gap-block")
    assert len(blocks) == 2
    for k, block in enumerate(blocks):
        rows = block.find_elements(By.CSS_SELECTOR, "tbody tr.hyp")
        assert [r.get_attribute("data-rank") for r in rows] == ["1", "2", "3", "4", "5"]
        for row, c in zip(rows, want["completions"]):
            chars = row.find_elements(By.CSS_SELECTOR, ".fill .ch")
            assert "".join(ch.find_element(By.CLASS_NAME, "g").text for ch in chars) == \
                c["fills"][k]
            probs = [p["prob"] for p in c["positions"] if p["gap_index"] == k]
            assert [ch.find_element(By.CLASS_NAME, "d").text for ch in chars] == \
                [str(min(9, int(p * 10))) for p in probs]
    assert browser.find_elements(By.CSS_SELECTOR, "#aligned .ch.differs")
    # the exports: the answer itself, and FASTA records as `infill run --output-format fasta`
    assert browser.execute_script("return JSON.parse(asJSON())") == want
    assert browser.execute_script("return asFASTA()") == "".join(
        f">input|rank={c['rank']}|score={c['score']:.4f}|model=builtin:greek\n{c['text']}\n"
        for c in want["completions"])
    shot = _save(browser, tmp_path, "workbench-greek.png")
    assert shot.stat().st_size > 10_000

    # phone width: the page fits (no sideways scrolling of the page itself)
    _restore(browser, cli_server, ODYSSEY, 390)
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")) == 5
    _save(browser, tmp_path, "workbench-phone.png")


def test_page_shows_errors(cli_server, browser):
    from selenium.webdriver.common.by import By
    _restore(browser, cli_server, "ἄνδρα μοι [.3", 1100)
    status = browser.find_element(By.ID, "status")
    assert "error" in status.get_attribute("class")
    assert status.text.startswith("malformed Leiden sigla at column 11: '[' (lacuna) is never closed")


def test_page_uploads_an_epidoc_file(cli_server, browser):
    """The workbench's EpiDoc upload: readings per lacuna, the Leiden text, the download."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc" / "handmade.xml"
    browser.get(cli_server + "/")
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    browser.find_element(By.ID, "epidoc-file").send_keys(str(fixture))
    WebDriverWait(browser, WAIT * 4).until(     # its uncertain lacunae: every length decoded
        lambda d: "restored" in d.find_element(By.ID, "epidoc-status").text
        or "Error" in d.find_element(By.ID, "epidoc-status").text)
    assert browser.find_element(By.ID, "epidoc-status").text == "handmade.xml: 3 lacunae restored"
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#epidoc-lacunae li")
             if "note" not in li.get_attribute("class")]
    # a lacuna of uncertain length is decoded over its whole range, and says so
    assert [i.split(":")[0] for i in items] == ["line 2, 3 characters", "line 5, 3–5 characters",
                                                "line 7, 2–4 characters"]
    assert browser.find_element(By.ID, "epidoc-leiden").text.splitlines()[0] == "ὁ δῆμος ἐτίμησεν"
    assert browser.find_element(By.ID, "epidoc-download").is_displayed()


PROTEIN_FASTA = (">first some protein\nMKVLAAGIVALLLAAGCSSS??KEELKAQLEQ\n"
                 ">second\nMSDKIIHLTDDSFDTDVLKADGAILVDFWA??WCGPCKMIAPILDEIADEY\n")


def _ready(driver, base: str, width: int = 1100):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.set_window_size(width, 900)
    driver.get(base + "/")
    WebDriverWait(driver, WAIT).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")


def _submit_and_wait(driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    driver.execute_script("document.getElementById('status').textContent = ''")
    driver.find_element(By.ID, "text").send_keys(Keys.CONTROL, Keys.ENTER)
    WebDriverWait(driver, WAIT * 4).until(
        lambda d: d.find_element(By.ID, "status").text not in ("", "Filling…"))


def test_page_takes_fasta_and_offers_its_records(cli_server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    _ready(browser, cli_server)
    Select(browser.find_element(By.ID, "model")).select_by_value("builtin:protein")
    assert not browser.find_element(By.ID, "record-field").is_displayed()
    box = browser.find_element(By.ID, "text")
    box.clear()
    box.send_keys(PROTEIN_FASTA)
    records = Select(browser.find_element(By.ID, "record"))
    assert browser.find_element(By.ID, "record-field").is_displayed()
    assert [o.text for o in records.options] == ["1: first some protein", "2: second",
                                                 "all 2 records"]
    records.select_by_value("2")
    _submit_and_wait(browser)
    status = browser.find_element(By.ID, "status")
    assert "error" not in status.get_attribute("class"), status.text
    notes = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#notes li")]
    assert "FASTA: filled record 2 of 2 (second)" in notes
    sequence = PROTEIN_FASTA.split("\n")[3]
    texts = [li.get_attribute("data-text")
             for li in browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")]
    assert texts and all(len(t) == len(sequence) and t[:30] == sequence[:30] for t in texts)


def test_an_error_clears_the_previous_results(cli_server, browser):
    from selenium.webdriver.common.by import By
    _restore(browser, cli_server, ODYSSEY, 1100)
    assert browser.find_element(By.ID, "results").is_displayed()
    box = browser.find_element(By.ID, "text")
    box.clear()
    box.send_keys("ἄνδρα μοι [.3")
    _submit_and_wait(browser)
    assert "error" in browser.find_element(By.ID, "status").get_attribute("class")
    assert not browser.find_element(By.ID, "results").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis") == []


def test_region_picker_only_for_antibody_models(cli_server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    _ready(browser, cli_server)
    models = Select(browser.find_element(By.ID, "model"))
    families = {m["name"]: m["family"] for m in browser.execute_script("return state.models")}
    antibody = [n for n, f in families.items() if f == "antibody"]
    assert not browser.find_element(By.ID, "region-field").is_displayed()   # builtin:greek
    assert antibody, "no antibody model offered: the test set-up installs the 'antibody' extra"
    models.select_by_value(antibody[0])
    assert browser.find_element(By.ID, "region-field").is_displayed()
    regions = [o.get_attribute("value")
               for o in Select(browser.find_element(By.ID, "region")).options]
    assert regions == ["", "fr1", "cdr1", "fr2", "cdr2", "fr3", "cdr3", "fr4"]


THREE_RECORDS = PROTEIN_FASTA + ">broken one\nMKV1AA??LL\n"


def _fill_all_records(driver, base: str, width: int):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    _ready(driver, base, width)
    Select(driver.find_element(By.ID, "model")).select_by_value("builtin:protein")
    box = driver.find_element(By.ID, "text")
    box.clear()
    box.send_keys(THREE_RECORDS)
    records = Select(driver.find_element(By.ID, "record"))
    assert [o.text for o in records.options][-1] == "all 3 records"
    records.select_by_value("all")
    _submit_and_wait(driver)


@pytest.mark.parametrize("width", [1100, 390])
def test_page_fills_every_record_at_once(cli_server, browser, post_fn, tmp_path, width):
    """"all records": one section per record under its name, each with the server's answer for
    that record; the broken record shows its error in its own section only; the page fits."""
    from selenium.webdriver.common.by import By
    status, want = post_fn(cli_server, "/api/fill", {"text": THREE_RECORDS, "record": "all",
                                                     "model": "builtin:protein"})
    assert status == 200
    _fill_all_records(browser, cli_server, width)
    status = browser.find_element(By.ID, "status")
    assert "error" not in status.get_attribute("class")
    assert status.text.startswith("2 of 3 records filled, 1 with an error (shown under its name)")
    assert not browser.find_element(By.ID, "single").is_displayed()
    sections = browser.find_elements(By.CSS_SELECTOR, "#records section.record")
    assert [s.find_element(By.CSS_SELECTOR, "h3.record-name").text for s in sections] == \
        ["1. first some protein", "2. second", "3. broken one"]
    for section, rec in zip(sections[:2], want["records"][:2]):
        texts = [li.get_attribute("data-text")
                 for li in section.find_elements(By.CSS_SELECTOR, "ol.ranked li.hypothesis")]
        assert texts == [c["text"] for c in rec["completions"]] and texts
        assert section.find_elements(By.CSS_SELECTOR, ".aligned-view .gap-block")
        assert not section.find_elements(By.CLASS_NAME, "record-error")
    error = sections[2].find_elements(By.CLASS_NAME, "record-error")
    assert [e.text for e in error] == [f"Error: {want['records'][2]['error']}"]
    assert want["records"][2]["error"].startswith("invalid residue '1'")
    assert not sections[2].find_elements(By.CSS_SELECTOR, "li.hypothesis")
    # the exports hold every record: the answer itself, the designs of each filled record
    assert browser.execute_script("return JSON.parse(asJSON())")["records"][1]["id"] == "second"
    fasta = browser.execute_script("return asFASTA()")
    assert [line.split("|")[0] for line in fasta.splitlines() if line.startswith(">")] == \
        [">first"] * len(want["records"][0]["completions"]) + \
        [">second"] * len(want["records"][1]["completions"])
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")
    _save(browser, tmp_path, f"workbench-records-{width}.png")


def test_a_new_request_clears_the_records(cli_server, browser):
    """After every record was shown, one chosen record replaces them (and the other way)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    _fill_all_records(browser, cli_server, 1100)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#records section.record")) == 3
    Select(browser.find_element(By.ID, "record")).select_by_value("2")
    _submit_and_wait(browser)
    assert browser.find_element(By.ID, "single").is_displayed()
    assert not browser.find_element(By.ID, "records").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#records section.record") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")
    Select(browser.find_element(By.ID, "record")).select_by_value("3")   # the broken record
    _submit_and_wait(browser)
    assert "error" in browser.find_element(By.ID, "status").get_attribute("class")
    assert not browser.find_element(By.ID, "results").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis, section.record") == []


# ---- what a user sees: the answer in view, one short defaults line, nothing undefined -------

ANTIBODY = ("EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQ"
            "MNSLRAEDTAVYYCAKDRGYSSGWYFDYWGQGTLVTVSS")
EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc>
<titleStmt><title>a test</title></titleStmt><publicationStmt><p>test</p></publicationStmt>
<sourceDesc><p>test</p></sourceDesc></fileDesc></teiHeader><text><body>
<div type="edition" xml:lang="grc"><ab><lb n="1"/><w>ὁ</w> <w>δῆμος</w> <w>ἐτίμησεν</w>
<lb n="2"/><w>Ἀρ<gap reason="lost" quantity="3" unit="character"/>ος</w>{more}</ab></div>
</body></text></TEI>
"""
ONE_LACUNA = EDITION.format(more="")
TWO_LACUNAE = EDITION.format(
    more=' <w>στρα<gap reason="lost" quantity="2" unit="character"/>όν</w>')
SIZES = [(1280, 900), (390, 844)]


def _open(driver, base: str, size: tuple[int, int]):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.set_window_size(*size)
    driver.get(base + "/")
    WebDriverWait(driver, WAIT).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")


def _fill(driver, model: str, text: str, region: str = "", top_k: str = "5"):
    """Fill ``text`` with ``model`` from the form (the page as left by the previous answer)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    Select(driver.find_element(By.ID, "model")).select_by_value(model)
    if region:
        Select(driver.find_element(By.ID, "region")).select_by_value(region)
    for field, value in (("gap", ""), ("top_k", top_k), ("text", text)):
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    _submit_and_wait(driver)
    status = driver.find_element(By.ID, "status")
    assert "error" not in status.get_attribute("class"), status.text


def _upload(driver, path: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.find_element(By.ID, "epidoc-file").send_keys(str(path))
    WebDriverWait(driver, WAIT * 4).until(
        lambda d: "restored" in d.find_element(By.ID, "epidoc-status").text
        or "Error" in d.find_element(By.ID, "epidoc-status").text)
    return driver.find_element(By.ID, "epidoc-status").text


def _in_view(driver, selector: str) -> bool:
    """The first element ``selector`` finds lies within the window (top to bottom)."""
    return driver.execute_script("""
        const e = document.querySelector(arguments[0]);
        if (!e) return false;
        const b = e.getBoundingClientRect();
        return b.height > 0 && b.top >= 0 && b.bottom <= window.innerHeight
               && b.left >= 0 && b.left < window.innerWidth;""", selector)


def _reads_cleanly(driver) -> str:
    """The page's visible text, asserted free of 'undefined', 'null' and 'NaN'."""
    import re
    text = driver.execute_script("return document.body.innerText")
    bad = re.search(r"undefined|\bnull\b|NaN", text)
    assert bad is None, text[max(0, bad.start() - 80):bad.end() + 40]
    return text


def _fasta_offered(driver) -> bool:
    from selenium.webdriver.common.by import By
    return any(b.is_displayed() for b in driver.find_elements(By.CSS_SELECTOR, "#results .fasta"))


def _antibody_answer(browser, cli_server, post_fn, first_row: str) -> None:
    """An antibody's CDR-H3 redesigned on the page: the answer of POST /api/fill, in view,
    counted in residues, offered as FASTA."""
    from selenium.webdriver.common.by import By
    families = {m["name"]: m["family"] for m in browser.execute_script("return state.models")}
    antibody = next(n for n, f in families.items() if f == "antibody")
    status, want = post_fn(cli_server, "/api/fill", {"text": ANTIBODY, "model": antibody,
                                                     "region": "cdr3", "top_k": 5}, timeout=240)
    assert status == 200, want
    _fill(browser, antibody, ANTIBODY, region="cdr3")
    assert _in_view(browser, first_row)
    _reads_cleanly(browser)
    residues = len(want["completions"][0]["fills"][0])
    assert residues > 1
    assert f"1 gap, {residues} residues" in browser.find_element(By.ID, "summary").text
    assert _fasta_offered(browser)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")) == 5


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_answers_come_into_view_and_read_cleanly(cli_server, browser, post_fn, tmp_path, size):
    """English, Greek, an antibody region (in the narrow window) and an EpiDoc file, one after
    the other: each answer
    replaces the one before, lies in the window (the page scrolls to it), says what it filled in
    the model's unit, shows the model's defaults on one line and never reads 'undefined'."""
    from selenium.webdriver.common.by import By
    _open(browser, cli_server, size)
    first_row = "#aligned tr.hyp[data-rank='1']"

    _fill(browser, "builtin:english", "To be, or not to ___, that is the question.")
    assert _in_view(browser, first_row) and _in_view(browser, "#results-title")
    text = _reads_cleanly(browser)
    summary = browser.find_element(By.ID, "summary").text
    assert "1 gap, 1 token" in summary and "5 hypotheses" in summary, summary
    defaults = browser.find_element(By.CSS_SELECTOR, "#defaults details.defaults")
    line = defaults.find_element(By.TAG_NAME, "summary").text
    assert line == "defaults: gap length word, scorer hcb, order left-to-right, " \
                   "length score pll-word (builtin:english's)", line
    assert defaults.get_attribute("open") is None          # the reason only on demand
    assert "held-out validation lines" not in text
    assert not _fasta_offered(browser)                     # FASTA: sequences only
    _save(browser, tmp_path, f"workbench-english-{size[0]}.png")
    _open(browser, cli_server, size)                       # _save grew the window

    _fill(browser, "builtin:greek", ODYSSEY)
    assert _in_view(browser, first_row)
    _reads_cleanly(browser)
    assert "2 gaps, 5 characters" in browser.find_element(By.ID, "summary").text
    assert browser.find_element(By.CSS_SELECTOR, "#defaults summary").text == \
        ("defaults: scorer standard, order left-to-right, lacuna edges letters "
         "(builtin:greek's)")
    assert not _fasta_offered(browser)

    if size == min(SIZES):          # the narrow window (AntiBERTy's decode is the test's cost)
        _antibody_answer(browser, cli_server, post_fn, first_row)

    # an EpiDoc upload replaces the text's answer (and a text's answer the upload's)
    from selenium.webdriver.support.ui import Select
    Select(browser.find_element(By.ID, "model")).select_by_value("builtin:greek")
    two = tmp_path / "two.xml"
    two.write_text(TWO_LACUNAE, encoding="utf-8")
    assert _upload(browser, two) == "two.xml: 2 lacunae restored"
    assert not browser.find_element(By.ID, "results").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis, #aligned tr") == []
    assert browser.find_element(By.ID, "epidoc-result").is_displayed()
    assert _in_view(browser, "#epidoc-lacunae li")
    assert browser.find_element(By.CSS_SELECTOR, "#epidoc-defaults summary").text == \
        ("defaults: scorer standard, order left-to-right, lacuna edges letters "
         "(builtin:greek's)")
    _reads_cleanly(browser)
    _fill(browser, "builtin:greek", ODYSSEY)
    assert not browser.find_element(By.ID, "epidoc-result").is_displayed()
    assert browser.find_element(By.ID, "epidoc-status").text == ""
    assert browser.find_elements(By.CSS_SELECTOR, "#epidoc-lacunae li") == []
    assert _in_view(browser, first_row)
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")


def test_counts_read_in_the_singular(cli_server, browser, tmp_path):
    """One lacuna restored, one hypothesis: no '1 lacunae', no '1 hypotheses'."""
    from selenium.webdriver.common.by import By
    _open(browser, cli_server, SIZES[0])
    _fill(browser, "builtin:greek", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος", top_k="1")
    assert browser.find_element(By.ID, "status").text.startswith("1 hypothesis (")
    assert "1 gap, 1 character · seed 0 · 1 hypothesis in" in \
        browser.find_element(By.ID, "summary").text
    one = tmp_path / "one.xml"
    one.write_text(ONE_LACUNA, encoding="utf-8")
    assert _upload(browser, one) == "one.xml: 1 lacuna restored"
    assert browser.find_element(By.ID, "epidoc-summary").text.endswith("· 1 lacuna")
    _reads_cleanly(browser)


def test_checkbox_sits_beside_its_label(cli_server, browser):
    from selenium.webdriver.common.by import By
    for size in SIZES:
        _open(browser, cli_server, size)
        box = browser.find_element(By.ID, "hide-supplied").rect
        words = browser.find_element(By.CSS_SELECTOR, "label.check span").rect
        assert 0 <= words["x"] - (box["x"] + box["width"]) <= 16, (box, words)
        assert abs(words["y"] - box["y"]) <= 16, (box, words)


def test_page_restores_an_unclear_letter_when_asked(cli_server, browser):
    """An underdotted letter is read as written (no gap: an error line), or, with the fill
    form's "restore unclear letters" ticked, restored among its look-alikes (--unclear
    restore): the decree's δήμωι."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    text = "ἔδοξε τῆι βουλῆι καὶ τῶι δ̣ήμωι"
    _restore(browser, cli_server, text, 1100)
    assert "error" in browser.find_element(By.ID, "status").get_attribute("class")
    assert not browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")
    browser.find_element(By.ID, "fill-unclear").click()
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis"))
    first = browser.find_element(By.CSS_SELECTOR, "#ranked li.hypothesis")
    assert first.get_attribute("data-text").endswith("δήμωι")


def test_page_reranks_when_asked(cli_server, browser, catalog, expected_fn):
    """The Rerank picker sends ``rerank``: the Odyssey's line ranked by (score + pll) / 2 is what
    ``fill_each(..., rerank="pll")`` answers (μέσσα before μοῦσα), and the summary says so."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    want = expected_fn(catalog, "builtin:greek", ODYSSEY_READ, top_k=5, rerank="pll")
    plain = expected_fn(catalog, "builtin:greek", ODYSSEY_READ, top_k=5)
    assert [c["text"] for c in want["completions"]] != [c["text"] for c in plain["completions"]]
    _restore(browser, cli_server, ODYSSEY, 1100)
    Select(browser.find_element(By.ID, "rerank")).select_by_value("pll")
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: "reranked by score with pll" in d.find_element(By.ID, "summary").text)
    texts = [li.get_attribute("data-text")
             for li in browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")]
    assert texts == [c["text"] for c in want["completions"]]


def test_page_keeps_spaces_off_a_lacunas_edges_unless_asked(cli_server, browser, catalog,
                                                            expected_fn):
    """builtin:latin's default (letters) and the Lacuna edges picker's 'any' answer what
    ``fill_each`` answers with each, and the summary says when the rule ran."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    text = "d m?????felici vixit annis xxv"
    want = {edges: [c["text"] for c in expected_fn(catalog, "builtin:latin", text, top_k=5,
                                                   **({"lacuna_edges": edges} if edges else {})
                                                   )["completions"]]
            for edges in ("", "any")}
    assert want[""] != want["any"]
    _ready(browser, cli_server)
    Select(browser.find_element(By.ID, "model")).select_by_value("builtin:latin")
    box = browser.find_element(By.ID, "text")
    box.clear()
    box.send_keys(text)
    for edges in ("", "any"):
        Select(browser.find_element(By.ID, "lacuna_edges")).select_by_value(edges)
        _submit_and_wait(browser)
        WebDriverWait(browser, WAIT).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis"))
        texts = [li.get_attribute("data-text")
                 for li in browser.find_elements(By.CSS_SELECTOR, "#ranked li.hypothesis")]
        assert texts == want[edges]
        summary = browser.find_element(By.ID, "summary").text
        assert ("no space at a lacuna's edges" in summary) == (edges == "")
