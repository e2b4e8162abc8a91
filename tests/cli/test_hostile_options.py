"""Option values from a hostile-input run that once ended in a traceback or were taken silently:
each is now one ``Error:`` line and exit code 2 (CLI), or infill's own error naming the argument
(API) -- the bound is a field rule, so both refuse alike."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import infill
from infill.errors import ConfigError, InfillError, InputError
from infill_cli.main import main

TEXT = "α?β γδ"
BIG = "9" * 5000


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


def refused(r, *words: str) -> str:
    """Assert a one-line ``Error:`` on stderr, exit code 2, no traceback; the line."""
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.output and not r.stdout
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("gap, words", [
    ("²", ["a gap length is a number"]), (BIG, ["at most 9 digits", "5,000 characters"]),
    (f"1-{BIG}", ["at most 9 digits"]), ("٣", ["a gap length is a number"]),
])
def test_gap_text_that_int_cannot_read(runner, greek_char_dir, gap, words):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--gap", gap, TEXT])
    refused(r, "--gap", *words)


@pytest.mark.parametrize("gap", ["²", BIG, f"1-{BIG}", ["2", "²"]])
def test_api_gap_text_is_an_input_error(greek_char_dir, gap):
    model = infill.load_model(greek_char_dir, device="cpu")
    with pytest.raises(InputError) as e:
        infill.fill(model, "α___β", gap=gap)
    assert e.value.field == "gap"


@pytest.mark.parametrize("beam, order", [("20000", "any-order"), ("100000", "best-to-worst")])
def test_dedup_orders_are_within_the_memory_bound(runner, greek_char_dir, beam, order):
    """Dedup compares every pair of candidates ([K, K] masks): the bound counts it."""
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--beam", beam, "--order", order,
                             TEXT])
    refused(r, "GiB per input", "INFILL_MAX_MEMORY_GB")


def test_dedup_memory_is_counted_by_the_selector():
    from infill.decoding.selectors import TopB
    assert TopB(dedup=False).work_bytes(1000, 30, 4, False) == 0
    assert TopB(dedup=True).work_bytes(1000, 30, 4, False) > 16 * 1000 ** 2
    assert TopB(dedup=True).work_bytes(1000, 30, 4, True) > 48 * 1000 ** 2


@pytest.mark.parametrize("value", ["5e-324", "1e-7", "0"])
def test_temperature_below_the_smallest_usable(runner, greek_char_dir, value):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--sampling", "temperature",
                             "--temperature", value, TEXT])
    refused(r, "--temperature", "1e-06")


def test_api_temperature_rule_matches_the_cli():
    from infill.fields import MAX_TEMPERATURE, MIN_TEMPERATURE
    from infill.requests import SampleRequest
    for bad in (5e-324, MIN_TEMPERATURE / 2, MAX_TEMPERATURE * 2):
        with pytest.raises(ConfigError) as e:
            infill.DecodeConfig(sampling="temperature", temperature=bad)
        assert e.value.field == "temperature"
        with pytest.raises(ConfigError):
            SampleRequest(proposal_temperature=bad)
    assert infill.DecodeConfig(sampling="temperature", temperature=MIN_TEMPERATURE)


@pytest.mark.parametrize("value", ["1844674407", "18446744073709551616"])
def test_batch_size_is_bounded(runner, greek_char_dir, value):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--batch-size", value, TEXT])
    refused(r, "--batch-size")


def test_api_batch_size_is_bounded():
    from infill.fields import MAX_BATCH_SIZE
    from infill.jobs.fill import FillRequest
    with pytest.raises(ConfigError) as e:
        FillRequest(batch_size=MAX_BATCH_SIZE + 1)
    assert e.value.field == "batch_size"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "9999999999", "0", "-1", "x"])
def test_memory_variable_out_of_range(runner, greek_char_dir, monkeypatch, value):
    monkeypatch.setenv("INFILL_MAX_MEMORY_GB", value)
    r = runner.invoke(main, ["run", "-m", greek_char_dir, TEXT])
    refused(r, "INFILL_MAX_MEMORY_GB must be a positive number of GiB, at most 1,048,576")


def test_marker_with_a_byte_that_is_not_utf8(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--marker", "\udcff", TEXT])
    refused(r, "--marker is not valid UTF-8: byte 0xff")


@pytest.mark.parametrize("marker", [3, None, b"___", "\udcff", "\ud800"])
def test_api_marker_is_checked(greek_char_dir, marker):
    model = infill.load_model(greek_char_dir, device="cpu")
    with pytest.raises(InfillError) as e:
        infill.fill(model, "α___β", marker=marker)
    assert e.value.field == "marker" and "marker" in str(e.value)


@pytest.mark.parametrize("marker", [3, "\udcff"])
def test_sample_job_marker_is_checked(greek_char_dir, marker):
    from infill.jobs.sample import sample_inputs
    model = infill.load_model(greek_char_dir, device="cpu")
    with pytest.raises(ConfigError) as e:
        sample_inputs(model, ["α___β"], marker=marker)
    assert e.value.field == "marker"
