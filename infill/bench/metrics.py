"""Infilling metrics (METHODS §4): top-k exact match, BLEU (sacrebleu), BERTScore (bert-score)."""
from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Sequence

from infill.errors import MetricUnavailable
from infill.lazy import LazyModule, torch
from infill.models.encoder import load_encoder, refuse_custom_code

# The metrics' own libraries, on first use (a missing one leaves its column out, said once).
sacrebleu_metrics = LazyModule("sacrebleu.metrics")
bert_score_utils = LazyModule("bert_score.utils")

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
    """BLEU-n with n <= gap length (METHODS §4): min(4, gap length)."""
    return max(1, min(max_order, n_tokens))


def sentence_bleu(hyp: Sequence[int], gold: Sequence[int]) -> float:
    """sacrebleu sentence BLEU (0-100) of one fill vs its gold span, over model tokens.

    BLEU-n with n = min(4, gap length); sacrebleu's default 'exp' smoothing.
    """
    metric = sacrebleu_metrics.BLEU(tokenize="none", max_ngram_order=bleu_order(len(gold)),
                                    effective_order=True)
    return float(metric.sentence_score(_words(hyp), [_words(gold)]).score)


def corpus_bleu(hyps: Sequence[Sequence[int]], golds: Sequence[Sequence[int]]) -> float:
    """sacrebleu corpus BLEU (0-100) of top-1 fills vs gold spans, over model tokens.

    BLEU-n with n = min(4, shortest gold span), so a table column of n-token gaps uses BLEU-n.
    """
    if not hyps:
        return float("nan")
    order = bleu_order(min(len(g) for g in golds))
    metric = sacrebleu_metrics.BLEU(tokenize="none", max_ngram_order=order)
    return float(metric.corpus_score([_words(h) for h in hyps], [[_words(g) for g in golds]]).score)


class BertScore:
    """BERTScore F1 of filled text vs gold text with a configurable scorer model.

    The scorer network is loaded by infill (:func:`infill.models.encoder.load_encoder`: never a
    model folder's own code) and scored with bert-score's greedy matching. ``BertScore.load``
    refuses a folder that asks to run its own code (ModelLoadError) and returns None (with a
    warning) when the model cannot be loaded otherwise: the column is then left out, never
    invented.
    """

    def __init__(self, net, tokenizer, model: str, device: str = "cpu"):
        self.net, self.tokenizer = net, tokenizer
        self.model, self.device = model, device

    @classmethod
    def load(cls, model: str, num_layers: int | None = None,
             device: str | None = None) -> "BertScore | None":
        refuse_custom_code(model, "BERTScore scorer")
        device = device or "cpu"
        try:
            net, tok = load_encoder(model, device=device)
            layers = _scorer_layers(model, net.config, num_layers)
            _cap_length(tok, net.config)
        except Exception as e:  # any failure: say so, leave the column out
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            warnings.warn(f"BERTScore left out: cannot load scorer model {model!r} "
                          f"({reason[:160]})", MetricUnavailable, stacklevel=2)
            return None
        return cls(_HiddenLayer(net, layers), tok, model, device)

    def f1(self, cands: Sequence[str], refs: Sequence[str]) -> list[float]:
        """bert-score's F1 of each candidate against its reference (no idf weights)."""
        if not cands:
            return []
        idf = defaultdict(lambda: 1.0)
        idf[self.tokenizer.sep_token_id] = idf[self.tokenizer.cls_token_id] = 0
        scores = bert_score_utils.bert_cos_score_idf(self.net, list(refs), list(cands),
                                                     self.tokenizer, idf, batch_size=64,
                                                     device=self.device)
        return [float(x) for x in scores[..., 2].cpu()]


def _scorer_layers(model: str, config, num_layers: int | None) -> int:
    """The layer whose hidden states are scored: ``num_layers``, else bert-score's tuned layer
    for the model's name, else the last one; ValueError beyond the network's layers."""
    top = getattr(config, "num_hidden_layers", None) or getattr(config, "num_layers", None)
    layers = num_layers or bert_score_utils.model2layers.get(model) or top
    if not layers or (top and layers > top):
        raise ValueError(f"layer {layers} of a scorer with {top} layers")
    return int(layers)


def _cap_length(tokenizer, config) -> None:
    """The tokenizer's length cut to the positions the network has (bert-score truncates to
    ``model_max_length``)."""
    limit = getattr(config, "max_position_embeddings", 512)
    if config.model_type in ("roberta", "xlm-roberta", "camembert"):
        limit -= (config.pad_token_id or 0) + 1
    if not tokenizer.model_max_length or tokenizer.model_max_length > limit:
        tokenizer.model_max_length = limit


@functools.lru_cache(maxsize=None)
def _hidden_layer_class():
    class HiddenLayer(torch.nn.Module):
        """A network answering bert-score's calls with its hidden states after ``layer`` layers
        (what bert-score reads from a network it cuts to that many layers)."""

        def __init__(self, net, layer: int):
            super().__init__()
            self.net, self.layer = net, layer

        def forward(self, input_ids, attention_mask=None, output_hidden_states=False):
            out = self.net(input_ids, attention_mask=attention_mask, output_hidden_states=True)
            return (out.hidden_states[self.layer],)

    return HiddenLayer


def _HiddenLayer(net, layer: int):
    """:class:`HiddenLayer` (defined on first use: importing this module costs no torch)."""
    return _hidden_layer_class()(net, layer)
