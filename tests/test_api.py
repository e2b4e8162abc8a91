"""The public API's own helpers: length buckets, per-input results."""
from __future__ import annotations

import infill
from infill.api import length_buckets


def test_length_buckets_group_similar_lengths_and_keep_every_index():
    lengths = [8, 60, 10, 9, 200, 61, 12]
    buckets = length_buckets(lengths)
    assert sorted(i for b in buckets for i in b) == list(range(len(lengths)))
    assert buckets == [[0, 2, 3, 6], [1, 5], [4]]
    for b in buckets:
        lo, hi = min(lengths[i] for i in b), max(lengths[i] for i in b)
        assert hi <= 1.25 * lo + 8
    assert length_buckets([5, 5, 6]) == [[0, 1, 2]]         # alike: one batch, one pass a step


def test_mixed_lengths_are_decoded_in_buckets_with_the_same_results(bert):
    """A bucket's batch holds no padding beyond its own longest input; the answers equal
    decoding every input alone."""
    calls = []
    inner = bert.log_probs

    def counting(ids, attn, pos):
        calls.append(tuple(ids.shape))
        return inner(ids, attn, pos)

    texts = ["the ___ sat", "the ___ sat on the mat the cat sat on the mat the dog sat on the mat"]
    bert.log_probs = counting
    try:
        together = infill.fill(bert, texts, top_k=3)
    finally:
        del bert.log_probs
    lengths = sorted(len(bert.encode(t, 1).input_ids) for t in texts)
    assert lengths[1] > 1.25 * lengths[0] + 8
    assert sorted({shape[1] for shape in calls}) == lengths     # two buckets, each unpadded
    alone = [infill.fill(bert, t, top_k=3)[0] for t in texts]
    assert [[c.tokens for c in cs] for cs in together] == [[c.tokens for c in cs] for cs in alone]


def test_a_positions_gap_index_names_its_gap_and_the_old_key_stays_a_release(bert):
    """``gap_index`` is the gap a filled position belongs to (0 first); ``gap``, its old name,
    is still written beside it in JSON and read from Python with a DeprecationWarning."""
    import pytest
    (best,) = infill.fill(bert, "the ___ sat on ___ mat", gap=2, top_k=1)[0]
    assert [p.gap_index for p in best.positions] == [0, 0, 1, 1]
    rows = best.to_json()["positions"]
    assert [r["gap_index"] for r in rows] == [r["gap"] for r in rows] == [0, 0, 1, 1]
    assert list(rows[0])[:3] == ["gap_index", "gap", "index"]
    with pytest.warns(DeprecationWarning, match="gap_index"):
        assert best.positions[2].gap == 1


def test_fill_each_decodes_batch_size_inputs_together(bert, monkeypatch):
    """``batch_size`` inputs go to the decoder together (it was read only by ``infill run``: the
    Python API decoded every input at once, whatever was asked); the answers do not change."""
    from infill.filling import planner

    texts = ["the ___ sat", "a ___ cat", "my ___ dog", "the ___ ran"]
    sizes = []
    run = planner.run_decoder

    def counted(model, inputs, *a, **k):
        sizes.append(len(inputs))
        return run(model, inputs, *a, **k)

    monkeypatch.setattr(planner, "run_decoder", counted)
    together = infill.fill_each(bert, texts, top_k=3)
    assert sizes == [4]
    sizes.clear()
    apart = infill.fill_each(bert, texts, top_k=3, batch_size=3)
    assert sizes == [3, 1]
    assert [[(c.tokens, round(c.score, 5)) for c in r.completions] for r in together] == \
        [[(c.tokens, round(c.score, 5)) for c in r.completions] for r in apart]


def test_fill_refuses_what_only_a_leiden_reading_honours(bert, greek_char_dir):
    """``region``, ``unclear`` and ``unknown_lengths`` act where fill_inputs reads a text's
    sigla; ``fill`` takes gap markers, so each is a ConfigError naming it, not a no-op."""
    import pytest
    from infill.errors import ConfigError

    greek = infill.load_model(greek_char_dir, device="cpu")
    for model, text, option in [(greek, "Ἀχιλ??ς ἄλγε ἔθη\u0323κε", dict(unclear="restore")),
                                (bert, "the ___ sat", dict(region="cdr3")),
                                (greek, "Ἀχιλ??ς", dict(unknown_lengths="1-3"))]:
        [(name, _)] = option.items()
        with pytest.raises(ConfigError, match=f"'{name}' does not apply to fill's texts"):
            infill.fill(model, text, marker="?" if model is greek else "___", **option)
    assert infill.fill(greek, "Ἀχιλ??ς", marker="?", unclear="keep")      # the default: fine
