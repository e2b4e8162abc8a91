"""Metropolis–Hastings chains over the gap positions of one input (METHODS §3).

:func:`mh` runs ``chains`` chains as one batch (one forward call per step serves every chain):
a sweep visits the gap positions left-to-right or in a random order, in blocks
(:func:`~infill.mcmc.kernel.block_sizes`), each step a proposal + acceptance
(:mod:`infill.mcmc.kernel`) on the energy of :mod:`infill.mcmc.energy`; the target temperature
follows :func:`~infill.mcmc.kernel.temperatures` (annealing = mode seeking). The degenerate Gibbs
baseline (``gibbs=True``) always accepts. :func:`sample` is the same at text level.

Options live in one validated :class:`MHOptions`; the run's state (chain states, energies,
visit counts, the best state) in :class:`Chains`, advanced one step at a time.
"""
from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from infill.config import DecodeConfig
from infill.decoding.engine import beam_search
from infill.decoding.letters import letter_masks, position_masks
from infill.decoding.windows import windows_for
from infill.errors import ConfigError, InputError, LongInputWarning
from infill.decoding.pll import energy_terms, score_function, scored_positions
from infill.mcmc.kernel import block_sizes, log_acceptance, propose, temperatures
from infill.models.base import MaskedLM
from infill.requests import BLOCK_SCHEDULES, INITS, SWEEP_ORDERS, SampleRequest

__all__ = ["BLOCK_SCHEDULES", "INITS", "ORDERS", "ChainResult", "Chains", "MHOptions", "SampleResult", "Visit", "mh", "sample"]

ORDERS = SWEEP_ORDERS
"""Visiting orders of the gap positions within a sweep."""


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
@dataclass
class Visit:
    """One distinct state the chains visited (a "sample" of the chain).

    ``tokens``: ids at the gap positions (position order); ``energy``: E(x) (untempered);
    ``count``: how many (chain, step) pairs after burn-in sat in this state; ``text``/``fills``:
    the rendered completion (text-level API only).
    """

    tokens: tuple[int, ...]
    energy: float
    count: int
    text: str | None = None
    fills: list[str] | None = None
    spans: list[tuple[int, int]] | None = None

    def to_json(self) -> dict:
        return {"text": self.text, "fills": None if self.fills is None else list(self.fills),
                "tokens": list(self.tokens), "energy": self.energy, "count": self.count}


@dataclass
class ChainResult:
    """What :func:`mh` returns.

    ``samples``      -- distinct visited states, lowest energy first (ties: most visited first)
    ``best``         -- the lowest-energy state ever visited (mode seeking), burn-in included
    ``final``        -- each chain's last state
    ``energy_trace`` -- [sweeps + 1, chains] float64: each chain's energy at the start and
                        after every sweep
    ``temperatures`` / ``block_sizes`` -- the schedule actually used, one entry per sweep
    ``proposals`` / ``accepted`` / ``novel`` -- counts over all chains and steps; a proposal is
                        *novel* when it is accepted and differs from the current state
    """

    positions: list[int]
    samples: list[Visit]
    best: Visit
    final: list[tuple[int, ...]]
    energy_trace: torch.Tensor
    temperatures: list[float]
    block_sizes: list[int]
    proposals: int
    accepted: int
    novel: int
    steps: int
    forward_rows: int = 0

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposals if self.proposals else float("nan")

    @property
    def novel_rate(self) -> float:
        return self.novel / self.proposals if self.proposals else float("nan")

    def distribution(self) -> dict[tuple[int, ...], float]:
        """Empirical distribution of the visited states (visit frequencies)."""
        total = sum(s.count for s in self.samples)
        return {s.tokens: s.count / total for s in self.samples} if total else {}


@dataclass
class SampleResult(ChainResult):
    """:func:`sample`'s result: a :class:`ChainResult` whose samples carry text and fills.
    ``windows``: the context window the chains ran in when the text was longer than the
    model's maximum length (one ``{start, end, gaps}``: model-token positions of the kept body
    and the indices of the gaps sampled in it, as :attr:`infill.FillResult.windows`), else empty.
    """

    text: str = ""
    settings: dict = field(default_factory=dict)
    windows: list[dict] = field(default_factory=list)

    def to_json(self, top_k: int | None = None) -> dict:
        """What ``infill sample --json`` writes for the input (after its id, text and model): the
        settings (the request's fields and ``gap``), the chains' statistics, the lowest-energy
        state, the ``top_k`` lowest-energy samples (all: None) and the context ``windows``."""
        return {**self.settings, "acceptance_rate": self.acceptance_rate,
                "novel_rate": self.novel_rate, "proposals": self.proposals, "steps": self.steps,
                "distinct": len(self.samples), "temperatures": self.temperatures,
                "block_sizes": self.block_sizes, "energy_trace": self.energy_trace.tolist(),
                "best": self.best.to_json(),
                "samples": [{"rank": r, **s.to_json()}
                            for r, s in enumerate(self.samples[:top_k], 1)],
                "windows": self.windows}


# ---------------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------------
MHOptions = SampleRequest
"""Every option of :func:`mh` (:class:`infill.requests.SampleRequest`), validated at
construction; ``from_options`` reads the old ``temperature=`` as ``target_temperature=``."""


# ---------------------------------------------------------------------------------------------
# initial states
# ---------------------------------------------------------------------------------------------
def _greedy(model: MaskedLM, ids: list[int], allow_special: bool,
            positions: list[int], slot_allowed: torch.Tensor | None = None) -> tuple[int, ...]:
    """Left-to-right greedy fill of ``positions``: beam size 1 with the standard scorer, each
    position taking only the tokens ``slot_allowed`` [n, V] lets it (None: any)."""
    hyps = beam_search(model, [ids], DecodeConfig(scorer="standard", order="left-to-right",
                                                  beam_size=1, allow_special=allow_special
                                                  ).search(), positions=[list(positions)],
                       allowed=[slot_allowed])[0]
    return tuple(int(t) for t in hyps[0].tokens)


def _initial_states(model, ids, positions, allowed, allow_special, init, chains,
                    gen, slot_allowed: torch.Tensor | None = None) -> torch.Tensor:
    """[chains, n] initial gap tokens: 'greedy', 'random', one token tuple, a list of tuples,
    or hypotheses with ``.tokens`` (e.g. a beam result; cycled over the chains); with
    ``slot_allowed`` [n, V] (letter sets) every start lies inside the sets."""
    n = len(positions)
    if isinstance(init, str):
        if init == "greedy":
            start = list(ids)
            for p in positions:
                start[p] = model.mask_id
            return torch.tensor(_greedy(model, start, allow_special, positions, slot_allowed)
                                ).repeat(chains, 1)
        if init == "random" and slot_allowed is not None:     # uniform within each set
            return torch.multinomial(slot_allowed.double(), chains, replacement=True,
                                     generator=gen).T.contiguous()
        if init == "random":
            choices = allowed.nonzero()[:, 0]
            pick = torch.randint(len(choices), (chains, n), generator=gen)
            return choices[pick]
        raise ConfigError(f"unknown init {init!r}; use 'greedy', 'random' or token ids")
    items = list(init.tolist() if isinstance(init, torch.Tensor) else init)
    if items and isinstance(items[0], numbers.Integral):
        items = [items]                                   # one state for every chain
    states = [tuple(int(t) for t in (getattr(it, "tokens", it))) for it in items]
    if not states or any(len(s) != n for s in states):
        raise InputError(f"every initial state must hold exactly {n} tokens (one per gap position)")
    if any(not 0 <= t < model.vocab_size for s in states for t in s):
        raise InputError("an initial token id is outside the model's vocabulary")
    out = torch.tensor([states[c % len(states)] for c in range(chains)], dtype=torch.long)
    if slot_allowed is not None and not slot_allowed.gather(1, out.T).all():
        raise InputError("an initial state places a token outside the letters allowed there",
                         field="letters")
    return out


# ---------------------------------------------------------------------------------------------
# the chains
# ---------------------------------------------------------------------------------------------
class Chains:
    """The state of a run: ``x`` [chains, T] current sequences, ``e`` their energies, visit
    counts and energies of every distinct state, the lowest-energy state seen, and the counters.
    :meth:`step` is one proposal + acceptance for every chain."""

    def __init__(self, model: MaskedLM, ids: list[int], positions: list[int], opts: MHOptions,
                 slot_allowed: torch.Tensor | None = None):
        self.model, self.opts = model, opts
        self.n = len(positions)
        self.gen = torch.Generator().manual_seed(int(opts.seed))
        self.allowed = model.allowed_mask(opts.allow_special).cpu()
        if not self.allowed.any():
            raise ConfigError("no token may be placed in a gap")
        self.ids = ids
        self.pos_t = torch.tensor(positions, dtype=torch.long)
        # the tokens each gap position may take (its letter set, else the model's), by position
        self.at = (self.allowed.expand(len(positions), -1) if slot_allowed is None
                   else slot_allowed.cpu() & self.allowed)
        if not self.at.any(-1).all():
            raise InputError("a gap position has no token that may be placed (its letters are "
                             "all special)", field="letters")
        self.slot_of = torch.zeros(len(ids), dtype=torch.long)
        self.slot_of[self.pos_t] = torch.arange(len(positions))
        x = torch.tensor(ids, dtype=torch.long).repeat(opts.chains, 1)
        x[:, self.pos_t] = _initial_states(model, ids, positions, self.allowed, opts.allow_special,
                                           opts.init, opts.chains, self.gen,
                                           None if slot_allowed is None else self.at)
        self.scored_row = torch.zeros(len(ids), dtype=torch.bool)
        context = x[0].clone()
        context[self.pos_t] = self.allowed.nonzero()[0, 0]   # any ordinary token: find specials
        self.scored_row[scored_positions(model, context.tolist())] = True
        self.scored_row[self.pos_t] = True
        self.rows_used = 0
        self.counts: dict[tuple[int, ...], int] = {}
        self.known_e: dict[tuple[int, ...], float] = {}
        self.best_state: tuple[int, ...] | None = None
        self.best_e = float("inf")
        self.proposals = self.accepted = self.novel = self.steps = 0
        self.x = x
        self.e = self.energies(x)
        self.remember(self.e, count=False)

    def energies(self, states: torch.Tensor) -> torch.Tensor:
        """E of each row of ``states``; chains in the same state share one evaluation."""
        if states.shape[0] == 0:
            return torch.zeros(0, dtype=torch.float64)
        uniq, inverse = torch.unique(states, dim=0, return_inverse=True)
        self.rows_used += int(self.scored_row.sum()) * uniq.shape[0]
        sc = self.scored_row.repeat(uniq.shape[0], 1)
        return energy_terms(self.model, uniq, torch.ones_like(sc), sc, self.opts.energy,
                            self.opts.max_rows).sum(-1)[inverse]

    def remember(self, es: torch.Tensor | None, count: bool) -> None:
        """Record the chains' current states: visit counts (``count``) and energies (``es``)."""
        uniq, inverse, n_of = torch.unique(self.x[:, self.pos_t], dim=0, return_inverse=True,
                                           return_counts=True)
        first = torch.full((len(uniq),), len(inverse), dtype=torch.long)
        first = first.scatter_reduce(0, inverse, torch.arange(len(inverse)), "amin")
        for u, key in enumerate(map(tuple, uniq.tolist())):
            if count:
                self.counts[key] = self.counts.get(key, 0) + int(n_of[u])
            if es is not None:
                ek = float(es[first[u]])
                self.known_e[key] = ek
                if ek < self.best_e:
                    self.best_e, self.best_state = ek, key

    def step(self, block_pos: torch.Tensor, tau: float, count: bool) -> None:
        """Propose at ``block_pos`` in every chain and accept or reject (MH, or always: Gibbs)."""
        o = self.opts
        prop, fwd, rev, changed = propose(self.model, self.x, block_pos,
                                          self.at[self.slot_of[block_pos]],
                                          o.proposal_temperature, o.top_p, self.gen)
        self.rows_used += o.chains
        u = torch.rand(o.chains, generator=self.gen, dtype=torch.float64)
        if o.gibbs:
            acc = torch.ones(o.chains, dtype=torch.bool)
        else:
            e_prop = self.e.clone()
            e_prop[changed] = self.energies(prop[changed])
            acc = torch.log(u) < log_acceptance(self.e, e_prop, fwd, rev, tau)
            self.e = torch.where(acc, e_prop, self.e)
        self.x = torch.where(acc[:, None], prop, self.x)
        self.proposals += o.chains
        self.accepted += int(acc.sum())
        self.novel += int((acc & changed).sum())
        self.steps += 1
        self.remember(None if o.gibbs else self.e, count=count)

    def end_sweep(self) -> torch.Tensor:
        """The chains' energies after a sweep (computed now for Gibbs, which does not track
        them)."""
        if self.opts.gibbs:
            e = self.energies(self.x)
            self.remember(e, count=False)
            return e
        return self.e.clone()

    def finish_gibbs(self) -> None:
        """Gibbs never needed the energy of every visited state: compute the missing ones."""
        missing = [k for k in self.counts if k not in self.known_e]
        if missing:
            states = torch.tensor(self.ids, dtype=torch.long).repeat(len(missing), 1)
            states[:, self.pos_t] = torch.tensor(missing, dtype=torch.long)
            for k, v in zip(missing, self.energies(states).tolist()):
                self.known_e[k] = v
        for k, v in self.known_e.items():
            if v < self.best_e:
                self.best_e, self.best_state = v, k


@torch.inference_mode()
def mh(model: MaskedLM, input_ids, positions: Sequence[int] | None = None,
       options: MHOptions | None = None, progress: Callable[[int, int], None] | None = None,
       letters: dict | None = None, **kw) -> ChainResult:
    """Run MH chains (or the degenerate Gibbs chain) over the gap positions of one sequence.

    ``input_ids``: one sequence; the gap positions are ``positions`` or, by default, those
    holding ``model.mask_id``. Only they move; everything else is fixed context. Options: an
    :class:`MHOptions` and/or its fields as keywords. Sweep e runs at target temperature
    ``max(min_temperature, target_temperature - anneal * e)``; visits are counted after every
    step of sweeps ``>= burn_in``. Deterministic under ``seed``. ``progress``: called as
    ``progress(done, total)`` after each sweep, e.g. to move a bar; None: nothing.
    ``letters``: {gap position: allowed letters or tokens} -- those positions move only among
    them (the proposal is the masked conditional restricted to the set and renormalized, so the
    chain samples the target restricted to the sets; :mod:`infill.decoding.letters`).
    """
    o = MHOptions.from_options(options, **kw)
    if not o.gibbs:
        score_function(model, o.energy)
    try:
        ids = (input_ids.tolist() if isinstance(input_ids, torch.Tensor) else
               [int(i) for i in input_ids])
    except (TypeError, ValueError):
        raise InputError("input_ids must be a sequence of token ids") from None
    if any(not 0 <= t < model.n_input_ids for t in ids):
        raise InputError(f"a token id is outside the model's input vocabulary [0, {model.n_input_ids})")
    if positions is None:
        positions = [t for t, i in enumerate(ids) if i == model.mask_id]
    positions = sorted(int(p) for p in positions)
    if not positions:
        raise InputError("no gap: nothing to sample (no mask in the input)")
    if len(set(positions)) != len(positions) or not 0 <= positions[0] <= positions[-1] < len(ids):
        raise InputError("gap positions must be distinct and inside the sequence")
    model.check_length(len(ids))
    run = Chains(model, ids, positions, o,
                 position_masks(model, letters, positions, o.allow_special))
    trace = [run.e.clone()]
    temps = temperatures(o.target_temperature, o.anneal, o.min_temperature, o.sweeps)
    blocks = block_sizes(o.block, run.n, o.sweeps, o.block_schedule)
    for sweep in range(o.sweeps):
        visit = run.pos_t[torch.randperm(run.n, generator=run.gen)] if o.sweep_order == "random" \
            else run.pos_t
        for start in range(0, run.n, blocks[sweep]):
            run.step(visit[start: start + blocks[sweep]], temps[sweep], count=sweep >= o.burn_in)
        trace.append(run.end_sweep())
        if progress is not None:
            progress(sweep + 1, o.sweeps)
    if o.gibbs:
        run.finish_gibbs()
    samples = sorted((Visit(k, run.known_e[k], c) for k, c in run.counts.items()),
                     key=lambda s: (s.energy, -s.count, s.tokens))
    return ChainResult(
        positions=positions, samples=samples,
        best=Visit(run.best_state, run.best_e, run.counts.get(run.best_state, 0)),
        final=[tuple(s) for s in run.x[:, run.pos_t].tolist()],
        energy_trace=torch.stack(trace), temperatures=temps, block_sizes=blocks,
        proposals=run.proposals, accepted=run.accepted, novel=run.novel, steps=run.steps,
        forward_rows=run.rows_used)


# ---------------------------------------------------------------------------------------------
# text-level API
# ---------------------------------------------------------------------------------------------
def sample(model: MaskedLM, text, gap: int = 1, marker: str = "___",
           options: MHOptions | None = None, window: bool = True,
           progress: Callable[[int, int], None] | None = None, letters: list | None = None,
           **kw):
    """Sample completions of ``text`` (each ``marker`` -> ``gap`` masked tokens) by MH.

    Returns a :class:`SampleResult` for one text (a list of them for a list of texts) whose
    ``samples`` carry ``.text``, ``.fills``, ``.tokens``, ``.energy`` and visit ``.count``, most
    visited first; ``.best`` is the lowest-energy completion seen. Options as in :func:`mh`.
    A text longer than the model's maximum length is sampled in the context window centred on
    its gaps (the energy is that of the windowed sequence; ``.windows`` records it and a
    :class:`~infill.errors.LongInputWarning` says so); ``window=False`` makes it an error.
    ``progress``: called as ``progress(done, total)`` after each sweep of each text's chains.
    ``letters``: the letter sets of the gaps, as :func:`infill.fill` takes them.
    """
    o = MHOptions.from_options(options, **kw)
    if isinstance(text, (list, tuple)):
        return [sample(model, t, gap, marker, o, window, progress, letters) for t in text]
    enc = model.encode(text, gap, marker)
    sets = _letters_at(model, enc, letters, o.allow_special)
    plan, lo, hi = windows_for(model, enc.input_ids, enc.gaps, window)
    if len(plan) > 1:
        raise InputError(f"the gaps are too far apart to sample them jointly in one context "
                         f"window of the model's maximum length ({model.max_length}); sample "
                         "them one at a time")
    w = plan[0]
    res = mh(model, w.ids(enc.input_ids, lo, hi), [p - w.left + lo for p in enc.positions], o,
             progress=progress,
             letters=None if sets is None else {p - w.left + lo: e for p, e in sets.items()})

    def rendered(s: Visit) -> Visit:
        r = model.render(enc, enc.split(s.tokens))
        return Visit(s.tokens, s.energy, s.count, r.text, r.fills, r.spans)

    windows = []
    if len(enc.input_ids) > model.max_length:
        windows = [{"start": w.left, "end": w.right, "gaps": list(w.gaps)}]
        warnings.warn(f"input longer than the model's maximum length ({model.max_length} "
                      "tokens): sampled in the longest context window centred on the gaps",
                      LongInputWarning, stacklevel=2)
    settings = dict(gap=gap, **{k: v for k, v in dataclasses.asdict(o).items()
                                if k not in ("init", "max_rows")})
    if isinstance(o.init, str):
        settings["init"] = o.init
    return SampleResult(
        positions=res.positions, samples=[rendered(s) for s in res.samples],
        best=rendered(res.best), final=res.final, energy_trace=res.energy_trace,
        temperatures=res.temperatures, block_sizes=res.block_sizes, proposals=res.proposals,
        accepted=res.accepted, novel=res.novel, steps=res.steps, forward_rows=res.forward_rows,
        text=text, settings=settings, windows=windows)


def _letters_at(model: MaskedLM, enc, letters, allow_special: bool) -> dict | None:
    """{encoding position: entry} of per-gap ``letters`` (checked against the gaps); in a text
    typed without word division (``enc.undivided``) every other position a letter, as the
    beam's (:func:`infill.decoding.letters.apply_undivided`)."""
    if letters is None and not getattr(enc, "undivided", False):
        return None
    out = {}
    if letters is not None:
        letter_masks(model, letters, enc.gaps, allow_special)    # the checks, one line each
        out = {p: e for g, entry in zip(enc.gaps, letters) if entry is not None
               for p, e in zip(g, entry) if e is not None}
    if getattr(enc, "undivided", False):
        out = {p: out.get(p, model.alphabet.letters) for p in enc.positions}
    return out
