"""DecodeConfig: one validated object, the registries of names, the deprecated spellings."""
import warnings

import pytest

from infill.config import DECODERS, ORDERS, SAMPLERS, SCORERS, DecodeConfig
from infill.decoding.scorers import (ContextScrambleScorer, HCBScorer, RandomSwapScorer,
                                     StandardScorer)
from infill.decoding.selectors import GumbelSample, TopB
from infill.errors import ConfigError


def test_registries_name_every_choice():
    assert list(SCORERS) == ["hcb", "standard", "scramble", "swap"]
    assert ORDERS == ("left-to-right", "best-to-worst", "any-order")
    assert list(SAMPLERS) == ["pure", "temperature", "nucleus"]
    assert DECODERS == ("beam", "ag")
    built = {name: DecodeConfig(scorer=name).make_scorer() for name in SCORERS}
    assert [type(s) for s in built.values()] == [HCBScorer, StandardScorer, ContextScrambleScorer,
                                                 RandomSwapScorer]
    assert all(s.name == name for name, s in built.items())


def test_the_names_are_the_registries_keys():
    """infill.names spells the names so that the options import no decoding machinery; each
    registry keyed by its classes' own names must have exactly those keys, in order (the first
    is the default)."""
    from infill.data.corpora import CORPORA
    from infill.filling import decoders
    from infill.decoding import orders, scorers
    from infill.names import FAMILIES
    assert SCORERS == tuple(scorers.SCORER_CLASSES)
    assert ORDERS == tuple(orders.ORDERS)
    assert DECODERS == tuple(decoders.DECODERS)
    assert FAMILIES == tuple(CORPORA)


def test_defaults_resolve_the_scorer_and_selector():
    assert DecodeConfig().scorer_name == "hcb"
    assert DecodeConfig(sampling="pure").scorer_name == "standard"   # METHODS §1.1: Score = sum log q
    assert isinstance(DecodeConfig().make_selector(), TopB)
    assert isinstance(DecodeConfig(sampling="nucleus").make_selector(), GumbelSample)
    assert DecodeConfig(order="best-to-worst").make_selector().dedup is True
    assert DecodeConfig(order="left-to-right").make_selector().dedup is False


@pytest.mark.parametrize("options, message", [
    (dict(scorer="standard", pivot="the"), "pivot only applies"),
    (dict(scorer="swap", pivot="the"), "draws its own pivot"),
    (dict(decoder="ag", scorer="hcb"), "takes no scorer"),
    (dict(decoder="ag", pivot="x"), "takes no scorer"),
    (dict(scorer="ag2"), "unknown scorer"),
    (dict(decoder="greedy"), "unknown decoder"),
    (dict(pivot_context="both"), "pivot_context"),
    (dict(pivot=()), "at least one token"),
    (dict(beam_size=True), "integer"),
    (dict(joint_size=0), "at least 1"),
    # an option of the other decoder is refused, never dropped
    (dict(decoder="ag", order="best-to-worst"), "'order' is an option of beam search"),
    (dict(decoder="ag", dedup=False), "'dedup' is an option of beam search"),
    (dict(decoder="ag", dedup_keep="lower"), "'dedup_keep' is an option of beam search"),
    (dict(decoder="ag", pivot_context="mask"), "'pivot_context' is an option of beam search"),
    (dict(joint_size=10), "'joint_size' is an option of the ag decoder"),
    (dict(ag_iterations=5), "'ag_iterations' is an option of the ag decoder"),
    # pivot_context only where a pivot is injected (hcb, scramble)
    (dict(scorer="standard", pivot_context="mask"), "the standard scorer injects none"),
    (dict(scorer="swap", pivot_context="mask"), "the swap scorer injects none"),
    (dict(sampling="pure", pivot_context="mask"), "the standard scorer injects none"),
])
def test_invalid_combinations_fail_at_construction(options, message):
    with pytest.raises(ConfigError, match=message):
        DecodeConfig(**options)


def test_ag_is_a_decoder_with_no_scorer():
    cfg = DecodeConfig(decoder="ag")
    assert cfg.scorer_name == "ag"
    with pytest.raises(ConfigError, match="ag decoder has no scorer"):
        cfg.make_scorer()
    with pytest.raises(ConfigError, match="AG is a decoder"):
        DecodeConfig(scorer="ag")


def test_deprecated_spellings_still_work_with_a_warning():
    with pytest.warns(DeprecationWarning, match="'sample' is now 'sampling'"):
        cfg = DecodeConfig.from_options(sample="nucleus", top_p=0.5)
    assert (cfg.sampling, cfg.top_p) == ("nucleus", 0.5)
    with pytest.raises(ConfigError, match="give 'sampling' only"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            DecodeConfig.from_options(sample="pure", sampling="nucleus")
    assert DecodeConfig.from_options(scorer="ag") == DecodeConfig(decoder="ag")
    with pytest.raises(ConfigError, match="unknown decoding option"):
        DecodeConfig.from_options(beam=5)


def test_replace_and_json_round_trip():
    cfg = DecodeConfig(scorer="hcb", order="best-to-worst", beam_size=7, pivot=["a", "b"])
    assert cfg.pivot == ("a", "b")
    out = cfg.to_json()
    assert out["pivot"] == ["a", "b"] and out["scorer"] == "hcb" and out["beam_size"] == 7
    assert DecodeConfig(**{**out, "pivot": tuple(out["pivot"])}) == cfg
    assert cfg.replace(beam_size=3).beam_size == 3 and cfg.beam_size == 7


def _every_config() -> list[DecodeConfig]:
    """One config per decoder, scorer, order and sampler, and each left out (None)."""
    out = [DecodeConfig(), DecodeConfig(decoder="ag"), DecodeConfig(pivot=("[MASK]", 3))]
    out += [DecodeConfig(scorer=s) for s in SCORERS]
    out += [DecodeConfig(order=o) for o in ORDERS]
    out += [DecodeConfig(sampling=s, scorer=sc) for s in SAMPLERS for sc in (None, "standard")]
    return out


@pytest.mark.parametrize("config", _every_config(), ids=repr)
def test_every_config_round_trips_through_its_json(config):
    import json
    assert DecodeConfig(**config.to_json()) == config
    assert DecodeConfig(**json.loads(json.dumps(config.to_json()))) == config


def test_left_out_is_none_and_the_engine_falls_back_to_infills_defaults():
    c = DecodeConfig()
    assert (c.scorer, c.order) == (None, None)
    assert (c.scorer_name, c.order_name) == ("hcb", "left-to-right")
    assert c.search().order.name == "left-to-right"
    assert DecodeConfig(decoder="ag").to_json()["scorer"] is None     # not "ag": it round-trips


def test_bench_order_codes_come_from_the_order_classes():
    from infill.bench.methods import ORDER_CODES
    from infill.decoding import orders
    from infill.names import ORDER_CODES as NAMED
    assert NAMED == {o.name: o.code for o in orders.ORDERS.values()}
    assert ORDER_CODES == {o.code: o.name for o in orders.ORDERS.values()}
