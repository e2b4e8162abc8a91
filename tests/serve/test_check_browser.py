"""The workbench's check view in a real browser: a line with a typo typed, "Check readings"
pressed, the flagged pieces marked in the text and listed in the table (the answer of
``POST /api/check``). Skipped where Chromium, its driver or selenium is absent."""
from __future__ import annotations

import pytest

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

WAIT = 60


def test_page_marks_the_doubtful_readings(cli_server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1100, 900)
    browser.get(cli_server + "/")
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    browser.execute_script("const s = document.getElementById('model');"
                           "s.value = 'builtin:english'; s.dispatchEvent(new Event('change'));")
    text = browser.find_element(By.ID, "text")
    text.clear()
    text.send_keys("To be, or not to be, that is the questoin.")
    browser.find_element(By.ID, "check-button").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#check-text .doubtful")
        or "error" in d.find_element(By.ID, "status").get_attribute("class"))
    marked = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#check-text .doubtful")]
    assert marked == ["quest", "o", "in"], browser.find_element(By.ID, "status").text
    assert browser.find_element(By.ID, "check-text").text == \
        "To be, or not to be, that is the questoin."
    rows = browser.find_elements(By.CSS_SELECTOR, "#check-table tr")
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows[1:]] == \
        ["quest", "##o", "##in"]
    assert "3 doubtful readings of 15 checked" in browser.find_element(By.ID, "check-summary").text
    text.clear()                                             # a fill clears the check view
    text.send_keys("To be, or not to ___, that is the question.")
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "results").is_displayed())
    assert not browser.find_element(By.ID, "check-result").is_displayed()
