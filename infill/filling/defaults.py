"""A model's recommended decoding defaults: the scorer and order its own benchmark measured best.

A model folder may hold ``defaults.json`` = ``{"scorer": ..., "order": ..., "why": "..."}`` (the
builtins' are written from their accuracy benchmark), and optionally ``"gap"``: what a gap marker
stands for when the user gives no length (builtin:english: ``"word"``, one whole word; infill's
default: 1 token) and ``"length_score"``: how fills of several lengths are ranked together
(builtin:english: ``"pll-word"``; infill's default: ``pll``), ``"length_beam"`` (builtin:greek:
``"shared"``) and ``"rerank"``: how completions of one length are reranked (infill's default and
every builtin's: ``off``; :mod:`infill.filling.reranking`), and ``"temperature"`` and
``"unlisted"``: the calibration of the probabilities it reports (:mod:`infill.filling.calibration`),
and ``"lacuna_edges"``: what a lacuna's first and last characters may be (builtin:latin:
``"letters"``, never a word space; infill's default: ``any``).
When a user does not choose these, the decode uses the model's recommendation, or infill's own
defaults (HCB, left-to-right, 1) for a model that records none;
:class:`Defaults` says which values were used and why, for every front end to show (CLI: one line
on stderr; JSON: ``config.defaults``; workbench).

    config, used = resolve_defaults(model, config)          # None fields: the model's choice
    print(used.line())       # scorer: standard, order: left-to-right (builtin:greek's defaults: ...)
    gap, used = resolve_gap(None, used)                    # "word" for builtin:english
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from infill.config import ORDERS, SCORERS, DecodeConfig
from infill.data.builtins import builtin_path, models_dir
from infill.data.files import read_json
from infill.decoding.lengths import LENGTH_SCORES, parse_length
from infill.errors import InfillError, ModelLoadError
from infill.filling.calibration import MAX_TEMPERATURE, MAX_UNLISTED
from infill.filling.request import given_ranking
from infill.names import LACUNA_EDGES, LENGTH_BEAMS, RERANKS

__all__ = ["DEFAULTS_FILE", "FIELDS", "LIBRARY_DEFAULTS", "Defaults", "Recommendation",
           "fixed_gap", "recommendation", "resolve_defaults", "resolve_fill", "resolve_gap",
           "resolve_length_score", "resolve_length_beam", "resolve_rerank", "resolve_lacuna_edges",
           "RANKING",
           "ranks_lengths",
           "config_json"]

DEFAULTS_FILE = "defaults.json"
FIELDS = ("scorer", "order")
"""The decoding options a model recommends (besides the gap's meaning, ``gap``)."""


@dataclass(frozen=True)
class Recommendation:
    """What a model recommends (``source``: the model, e.g. ``builtin:greek``, or ``infill``);
    ``gap``: a gap marker's length when the user gives none (None: infill's, 1);
    ``length_score``: how fills of different lengths are ranked together (None: infill's, pll);
    ``length_beam``: how their lengths are searched (None: infill's, ``each``);
    ``rerank``: how completions of one length are reranked (None: infill's, ``off``);
    ``temperature``: the calibration temperature of its probabilities (None: 1) and
    ``unlisted``: the log-score of the restorations a set of alternatives leaves out (None:
    none; :mod:`infill.filling.calibration`); ``lacuna_edges``: what a lacuna's first and last
    characters may be (None: infill's, ``any``)."""

    scorer: str
    order: str
    why: str
    source: str = "infill"
    gap: int | str | None = None
    length_score: str | None = None
    length_beam: str | None = None
    rerank: str | None = None
    temperature: float | None = None
    unlisted: float | tuple[float, ...] | None = None
    lacuna_edges: str | None = None


LIBRARY_DEFAULTS = Recommendation(
    "hcb", "left-to-right", "the method's update rule, filling the gap in reading order")
"""infill's own defaults, for a model that records no recommendation."""


@dataclass(frozen=True)
class Defaults:
    """The defaults a decode used: ``values`` (option -> value) and the recommendation behind
    them; ``given``: the ranking options the user chose (:func:`~infill.filling.request.
    given_ranking`), which must rank something (:func:`~infill.filling.request.check_ranking`)."""

    values: dict
    recommendation: Recommendation
    given: frozenset = frozenset()

    def line(self) -> str:
        """One line for a person: ``scorer: standard (builtin:greek's default: why)``."""
        if not self.values:
            return ""
        rec = self.recommendation
        used = ", ".join(f"{k}: {v}" for k, v in self.values.items())
        plural = "s" if len(self.values) > 1 else ""
        whose = "infill's" if rec.source == "infill" else f"{rec.source}'s"
        return f"{used} ({whose} default{plural}: {rec.why})"

    def to_json(self) -> dict:
        rec = self.recommendation
        return {"options": list(self.values), "source": rec.source, "why": rec.why}

    @property
    def temperature(self) -> float | None:
        """The model's calibration temperature (:mod:`infill.filling.calibration`)."""
        return self.recommendation.temperature

    @property
    def unlisted(self) -> float | tuple[float, ...] | None:
        """The model's log-score of the unlisted restorations, or one per number of listed
        alternatives (:mod:`infill.filling.calibration`)."""
        return self.recommendation.unlisted

    def ranked(self, ranks_lengths: bool, reranks: bool = False) -> "Defaults":
        """These defaults as a result reports them: the options of fills of several lengths
        (:data:`RANKING`) only where lengths were ranked, ``rerank`` only where completions of
        one length were reranked."""
        drop = set() if ranks_lengths else set(RANKING)
        if not reranks:
            drop.add("rerank")
        if not drop & set(self.values):
            return self
        return Defaults({k: v for k, v in self.values.items() if k not in drop},
                        self.recommendation, self.given)


def config_json(config, defaults: "Defaults | None", length_score: str | None = None,
                length_beam: str | None = None, rerank: str | None = None,
                lacuna_edges: str | None = None) -> dict:
    """A result's JSON ``config``: the decoding options that ran (``config``, a
    :class:`~infill.config.DecodeConfig` or None), ``defaults`` ({options, source, why}) when some
    took the model's recommendation, -- where fills of several lengths were ranked
    (``length_score`` not None) -- how (``length_score``, ``length_beam``), and ``rerank``
    where completions of one length were reranked (:mod:`infill.filling.reranking`), and
    ``lacuna_edges`` where the model writes word spaces (None: it does not)."""
    out = {} if config is None else config.to_json()
    ranked = length_score is not None
    used = None if defaults is None else defaults.ranked(ranked, rerank is not None)
    if used is not None and used.values:
        out["defaults"] = used.to_json()
    if ranked:
        out["length_score"] = length_score
        if length_beam is not None:
            out["length_beam"] = length_beam
    if rerank is not None:
        out["rerank"] = rerank
    if lacuna_edges is not None:
        out["lacuna_edges"] = lacuna_edges
    return out


RANKING = ("length_score", "length_beam")
"""The options that apply only where fills of several lengths are ranked together."""


def ranks_lengths(gap) -> bool:
    """Whether a (resolved) gap ranks fills of several lengths: a range, ``word`` or a list
    holding one."""
    gaps = gap if isinstance(gap, list) else [gap]
    return not all(isinstance(g, int) and not isinstance(g, bool) for g in gaps)


def _folder(model) -> tuple[Path | None, str]:
    """The model's folder and its label (``builtin:NAME`` for a builtin, else its path)."""
    name = str(getattr(model, "name", model))
    try:
        path = builtin_path(name) if name.startswith("builtin:") else Path(name).expanduser()
    except ModelLoadError:
        return None, name
    try:
        root = models_dir().resolve()
        inside = path.resolve().parent == root or path.resolve().parent.parent == root
    except OSError:
        inside = False
    folder = path if path.is_dir() else (path.parent if inside and path.is_file() else None)
    if folder is not None and inside and folder.resolve().parent == root:
        return folder, f"builtin:{folder.name}"
    return folder, name


def recommendation(model) -> Recommendation:
    """The model's recommendation (a loaded model or a name/path), from its ``defaults.json``,
    or the one a loaded model carries itself (``recommends``: an Aeneas checkpoint's own search);
    :data:`LIBRARY_DEFAULTS` when it records none. A malformed file is a :class:`ModelLoadError`."""
    own = getattr(model, "recommends", None)
    if isinstance(own, dict):
        return Recommendation(**own, source=str(getattr(model, "name", "the model")))
    folder, label = _folder(model)
    path = None if folder is None else folder / DEFAULTS_FILE
    if path is None or not path.is_file():
        return LIBRARY_DEFAULTS
    try:        # bounded: a deeply nested or huge file is one error, never a RecursionError
        data = read_json(path, "model defaults", ModelLoadError)
    except ModelLoadError as e:
        raise ModelLoadError(f"cannot read {e}") from None
    if not isinstance(data, dict) or data.get("scorer") not in SCORERS \
            or data.get("order") not in ORDERS or not isinstance(data.get("why"), str):
        raise ModelLoadError(f"{path}: expected {{\"scorer\": one of {', '.join(SCORERS)}, "
                             f"\"order\": one of {', '.join(ORDERS)}, \"why\": text}}")
    return Recommendation(data["scorer"], data["order"], " ".join(data["why"].split()), label,
                          _gap(data.get("gap"), path), _length_score(data.get("length_score"), path),
                          _length_beam(data.get("length_beam"), path),
                          _rerank(data.get("rerank"), path),
                          _temperature(data.get("temperature"), path),
                          _unlisted(data.get("unlisted"), path),
                          _lacuna_edges(data.get("lacuna_edges"), path))


def _temperature(value, path: Path) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 < value <= MAX_TEMPERATURE:
        raise ModelLoadError(f"{path}: \"temperature\" must be a number in (0, "
                             f"{MAX_TEMPERATURE:g}], got {str(value)[:40]!r}")
    return float(value)


def _unlisted(value, path: Path) -> float | tuple[float, ...] | None:
    """A number, or a list of 1 to 100 (one per number of alternatives listed), each in
    [-MAX_UNLISTED, MAX_UNLISTED]."""
    if value is None:
        return None
    many = isinstance(value, list) and 1 <= len(value) <= 100
    items = value if many else [value]
    if not all(not isinstance(v, bool) and isinstance(v, (int, float)) and abs(v) <= MAX_UNLISTED
               for v in items):
        raise ModelLoadError(f"{path}: \"unlisted\" must be a number in [-{MAX_UNLISTED:g}, "
                             f"{MAX_UNLISTED:g}], or a list of 1 to 100 of them (one per number "
                             f"of alternatives listed), got {str(value)[:40]!r}")
    return tuple(float(v) for v in items) if many else float(value)


def _length_score(kind, path: Path) -> str | None:
    if kind is not None and kind not in LENGTH_SCORES:
        raise ModelLoadError(f"{path}: \"length_score\" must be one of {', '.join(LENGTH_SCORES)}, "
                             f"got {kind!r}")
    return kind


def _length_beam(kind, path: Path) -> str | None:
    if kind is not None and kind not in LENGTH_BEAMS:
        raise ModelLoadError(f"{path}: \"length_beam\" must be one of {', '.join(LENGTH_BEAMS)}, "
                             f"got {str(kind)[:40]!r}")
    return kind


def _rerank(kind, path: Path) -> str | None:
    if kind is not None and kind not in RERANKS:
        raise ModelLoadError(f"{path}: \"rerank\" must be one of {', '.join(RERANKS)}, "
                             f"got {str(kind)[:40]!r}")
    return kind


def _lacuna_edges(kind, path: Path) -> str | None:
    if kind is not None and kind not in LACUNA_EDGES:
        raise ModelLoadError(f"{path}: \"lacuna_edges\" must be one of "
                             f"{', '.join(LACUNA_EDGES)}, got {str(kind)[:40]!r}")
    return kind


def _gap(gap, path: Path) -> int | str | None:
    """A recommended gap length as :func:`~infill.decoding.lengths.parse_length` reads one."""
    if gap is None:
        return None
    try:
        parsed = parse_length(gap) if isinstance(gap, (int, str)) and gap is not True else None
    except InfillError:
        parsed = None
    if parsed is None or (isinstance(parsed, int) and parsed < 1):
        shown = repr(gap)
        raise ModelLoadError(f"{path}: \"gap\" must be a gap length (N, LO-HI or word), "
                             f"got {shown if len(shown) <= 40 else shown[:37] + '...'}")
    return parsed


def resolve_defaults(model, config=None):
    """``config`` (a :class:`~infill.config.DecodeConfig`; None: infill's) with every option
    the user left out (None: not chosen) filled in -- the one place this happens. An explicit
    choice always wins.

    ``order``: the model's recommendation (beam search and its sampling baselines). ``scorer``:
    the model's recommendation for beam search; a sampling baseline scores with the standard
    update (METHODS §1.1); the AG decoder has no scorer. Returns ``(config, Defaults)``, the
    :class:`Defaults` naming the options that took the model's recommendation."""
    config = DecodeConfig() if config is None else config
    rec = recommendation(model)
    values, rules = {}, {}
    if config.order is None and config.decoder == "beam":
        values["order"] = rec.order
    if config.scorer is None and config.decoder == "beam":
        if config.sampling is None:
            values["scorer"] = rec.scorer
        else:
            rules["scorer"] = "standard"
    values = {k: values[k] for k in FIELDS if k in values}
    changes = {**values, **rules}
    return (config.replace(**changes) if changes else config), Defaults(values, rec)


def resolve_fill(model, request):
    """A fill request (:class:`~infill.jobs.fill.FillRequest`) with everything left out filled
    in: its decoding options (:func:`resolve_defaults`), the gap's length, the length score,
    and the beam raised to ``top_k`` when smaller (a fill returns ``top_k`` completions).
    Every front end's fill goes through here once. Returns ``(request, Defaults)``."""
    config, defaults = resolve_defaults(model, request.config)
    gap, defaults = resolve_gap(request.gap, defaults)
    length_score, defaults = resolve_length_score(request.length_score, gap, defaults)
    length_beam, defaults = resolve_length_beam(request.length_beam, gap, defaults)
    rerank, defaults = resolve_rerank(request.rerank, config, defaults)
    edges, defaults = resolve_lacuna_edges(request.lacuna_edges, defaults)
    if request.top_k > config.beam_size:
        config = config.replace(beam_size=request.top_k)
    defaults = dataclasses.replace(defaults, given=given_ranking(request))
    return request.replace(config=config, gap=gap, length_score=length_score,
                           length_beam=length_beam, rerank=rerank, lacuna_edges=edges), defaults


def resolve_gap(gap, defaults: Defaults):
    """``gap`` as given, or (None) the recommended gap length of ``defaults`` (the model's, which
    the returned :class:`Defaults` then records as used), else infill's, 1 token.
    Returns ``(gap, Defaults)``."""
    rec = defaults.recommendation
    if gap is not None:
        return gap, defaults
    if rec.gap is None:
        return 1, defaults
    return rec.gap, Defaults({"gap": rec.gap, **defaults.values}, rec)


def resolve_length_score(length_score: str | None, gap, defaults: Defaults):
    """``length_score`` as given, or (None) the model's recommended one, else infill's, ``pll``.
    The returned :class:`Defaults` records a recommended one as used when ``gap`` (resolved)
    ranks fills of several lengths. Returns ``(length_score, Defaults)``."""
    return _ranking_option("length_score", length_score, gap, defaults, "pll")


def resolve_length_beam(length_beam: str | None, gap, defaults: Defaults):
    """``length_beam`` as given, or (None) the model's recommended one, else infill's, ``each``;
    recorded in the returned :class:`Defaults` as :func:`resolve_length_score` records its
    option. Returns ``(length_beam, Defaults)``."""
    return _ranking_option("length_beam", length_beam, gap, defaults, "each")


def resolve_rerank(rerank: str | None, config, defaults: Defaults):
    """``rerank`` as given, or (None) the model's recommended one for beam search, else
    infill's, ``off`` (a sampling baseline's draws and the AG decoder's joint are not reranked:
    a model's recommendation does not apply to them; an explicit choice does). A recommended
    one is recorded as used; a result reports it only where it reranked (:meth:`Defaults.
    ranked`). Returns ``(rerank, Defaults)``."""
    rec = defaults.recommendation
    if rerank is not None:
        return rerank, defaults
    if rec.rerank is None or config.decoder != "beam" or config.sampling is not None:
        return "off", defaults
    return rec.rerank, Defaults({**defaults.values, "rerank": rec.rerank}, rec)


def resolve_lacuna_edges(edges: str | None, defaults: Defaults):
    """``lacuna_edges`` as given, or (None) the model's recommended one (recorded as used), else
    infill's, ``any``. Returns ``(lacuna_edges, Defaults)``."""
    rec = defaults.recommendation
    if edges is not None:
        return edges, defaults
    if rec.lacuna_edges is None:
        return LACUNA_EDGES[0], defaults
    return rec.lacuna_edges, Defaults({**defaults.values, "lacuna_edges": rec.lacuna_edges}, rec)


def _ranking_option(name: str, given, gap, defaults: Defaults, library: str):
    """An option of fills of several lengths: as given, the model's, or ``library``'s. A
    recommended one is recorded as used whatever ``gap`` is (an input may bring its own range,
    a Leiden ``[c.5]``); a result reports it only where it ranked lengths
    (:meth:`Defaults.ranked`)."""
    rec = defaults.recommendation
    recommended = getattr(rec, name)
    if given is not None:
        return given, defaults
    if recommended is None:
        return library, defaults
    return recommended, Defaults({**defaults.values, name: recommended}, rec)


def fixed_gap(gap: int | None, model) -> tuple[int, str | None]:
    """The gap length of a job that fills a fixed number of tokens at each marker (``sample``):
    ``gap`` as given, else the model's recommended gap when it is one length, else 1 token.
    Returns ``(gap, note)``: the note says why a model's word or range gap was not used."""
    if gap is not None:
        return gap, None
    rec = recommendation(model)
    if rec.gap is None or isinstance(rec.gap, int):
        return rec.gap or 1, None
    what = "one whole word" if rec.gap == "word" else f"{rec.gap} tokens"
    return 1, (f"gap: 1 token ({rec.source}'s default gap, {what}, ranks fills of different "
               "lengths as `infill run` does; sampling fills a fixed number: give --gap N)")
