"""Infilling metrics (SPEC §4): top-k exact match, BLEU (sacrebleu), BERTScore (bert-score)."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

from infill.errors import MetricUnavailable

DEFAULT_KS = (1, 5, 10, 20)


def gold_rank(gold: Sequence[int], hyps: Sequence[Sequence[int]]) -> int | None:
    """1-based rank of the gold span among the ranked hypotheses (None if absent)."""
    gold = tuple(gold)
    for r, h in enumerate(hyps, 1):
        if tuple(h) == gold:
            return r
    return None


def topk_hits(rank: int | None, ks: Sequence[int]) -> dict[int, bool]:
    """{k: gold among the k best} for a gold rank from :func:`gold_rank`."""
    return {k: rank is not None and rank <= k for k in ks}


def usable_ks(ks: Sequence[int], beam: int) -> list[int]:
    """The k that a beam of this size can answer (k <= beam), sorted."""
    return sorted(k for k in set(ks) if k <= beam)


def _words(tokens: Sequence[int]) -> str:
    # One BLEU "word" per model token: BLEU over model tokens, whatever their surface form.
    return " ".join(f"t{t}" for t in tokens)


def bleu_order(n_tokens: int, max_order: int = 4) -> int:
    """BLEU-n with n <= gap length (SPEC §4): min(4, gap length)."""
    return max(1, min(max_order, n_tokens))


def sentence_bleu(hyp: Sequence[int], gold: Sequence[int]) -> float:
    """sacrebleu sentence BLEU (0-100) of one fill vs its gold span, over model tokens.

    BLEU-n with n = min(4, gap length); sacrebleu's default 'exp' smoothing.
    """
    from sacrebleu.metrics import BLEU

    metric = BLEU(tokenize="none", max_ngram_order=bleu_order(len(gold)), effective_order=True)
    return float(metric.sentence_score(_words(hyp), [_words(gold)]).score)


def corpus_bleu(hyps: Sequence[Sequence[int]], golds: Sequence[Sequence[int]]) -> float:
    """sacrebleu corpus BLEU (0-100) of top-1 fills vs gold spans, over model tokens.

    BLEU-n with n = min(4, shortest gold span), so a table column of n-token gaps uses BLEU-n.
    """
    from sacrebleu.metrics import BLEU

    if not hyps:
        return float("nan")
    order = bleu_order(min(len(g) for g in golds))
    metric = BLEU(tokenize="none", max_ngram_order=order)
    return float(metric.corpus_score([_words(h) for h in hyps], [[_words(g) for g in golds]]).score)


class BertScore:
    """BERTScore F1 of filled text vs gold text with a configurable scorer model.

    ``BertScore.load(model, num_layers)`` returns None (with a warning) when the model cannot be
    loaded: the column is then left out, never invented.
    """

    def __init__(self, scorer, model: str):
        self.scorer = scorer
        self.model = model

    @classmethod
    def load(cls, model: str, num_layers: int | None = None,
             device: str | None = None) -> "BertScore | None":
        try:
            from transformers.utils import logging as hf_logging
            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
            from bert_score import BERTScorer

            if num_layers is None and (Path(model) / "config.json").exists():
                from transformers import AutoConfig
                num_layers = AutoConfig.from_pretrained(model).num_hidden_layers
            scorer = BERTScorer(model_type=model, num_layers=num_layers, device=device or "cpu")
            tok, cfg = scorer._tokenizer, scorer._model.config
            limit = getattr(cfg, "max_position_embeddings", 512)
            if cfg.model_type in ("roberta", "xlm-roberta", "camembert"):
                limit -= (cfg.pad_token_id or 0) + 1
            if not tok.model_max_length or tok.model_max_length > limit:
                tok.model_max_length = limit  # bert-score truncates to this
        except Exception as e:  # any failure: say so, leave the column out
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            warnings.warn(f"BERTScore left out: cannot load scorer model {model!r} "
                          f"({reason[:160]})", MetricUnavailable, stacklevel=2)
            return None
        return cls(scorer, model)

    def f1(self, cands: Sequence[str], refs: Sequence[str]) -> list[float]:
        if not cands:
            return []
        _, _, f = self.scorer.score(list(cands), list(refs), batch_size=64)
        return [float(x) for x in f]
