"""The workbench's candidate readings in a real browser: a Greek line with a lacuna and two
readings typed, "Score readings" pressed, the table of combinations shown (the answer of
``POST /api/readings``). Skipped where Chromium, its driver or selenium is absent."""
from __future__ import annotations

import shutil
import tempfile

import pytest

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")
pytest.importorskip("selenium", reason="the browser test needs selenium (pip install selenium)")

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(b)), None)
DRIVER = shutil.which("chromedriver")
if BROWSER is None or DRIVER is None:
    pytest.skip("no headless Chromium here (apt-get install chromium chromium-driver)",
                allow_module_level=True)
WAIT = 60
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="infill-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_page_scores_candidate_readings(cli_server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1100, 900)
    browser.get(cli_server + "/")
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    text = browser.find_element(By.ID, "text")
    text.clear()
    text.send_keys("ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι")
    browser.find_element(By.ID, "readings").send_keys("δήμω|δάμω")
    browser.find_element(By.ID, "readings-button").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#readings-table tr td")
        or "error" in d.find_element(By.ID, "status").get_attribute("class"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#readings-table tr")
    assert len(rows) == 3, browser.find_element(By.ID, "status").text
    cells = [r.find_elements(By.TAG_NAME, "td") for r in rows[1:]]
    assert {c[-1].text for c in cells} == {"δήμω", "δάμω"}
    assert sum(float(c[0].text) for c in cells) == pytest.approx(1.0, abs=2e-3)
    assert "beam's top-" in browser.find_element(By.ID, "readings-beam").text
