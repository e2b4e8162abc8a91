"""Metropolis–Hastings from the energies a masked LM defines (SPEC §3).

Energies of a sequence x (sum over every scored position t, see :func:`scored_positions`):

- ``E_raw(x)   = -sum_t f_t(x_t; x with t masked)``, f the unnormalized logit;
- ``E_local(x) = -sum_t log q_t(x_t | x with t masked)`` (the pseudo-log-likelihood).

Each costs T forward rows (the T one-position-masked copies), batched into as few calls as
``max_rows`` allows. For infilling the context is fixed but its terms still depend on the gap
tokens, so E sums over *all* scored positions of the sequence, context included, as the SPEC says.

Sampler (:func:`mh`): a sweep (epoch) visits the gap positions left-to-right or in a random order,
in blocks of ``b`` positions (``b = 1``: single-site). One step masks the block I, draws every
``w_i ~ r_i(. | x with I masked)`` independently from one forward pass, where ``r_i`` is the
model's masked conditional restricted to the allowed tokens, optionally tempered
(``proposal_temperature``) and nucleus-truncated (``top_p``), and accepts ``x'`` with probability

    min(1, exp(-E(x')/tau + E(x)/tau) * prod_i r_i(x_i | .) / prod_i r_i(x'_i | .))

computed in log space (:func:`log_acceptance`). ``tau`` is the target temperature, lowered
linearly per epoch by ``anneal`` (mode seeking). The degenerate Gibbs baseline (``gibbs=True``)
always accepts. All chains advance together: one forward call serves every chain at a step.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from infill.errors import ConfigError, InputError
from infill.models.base import MaskedLM, pad_batch

__all__ = [
    "ENERGIES", "ChainResult", "Sample", "SampleResult", "energy", "log_acceptance", "mh",
    "proposal_log_probs", "rescore", "sample", "scored_positions",
]

ENERGIES = ("local", "raw")
ORDERS = ("left-to-right", "random")


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
@dataclass
class Sample:
    """One distinct state the chains visited.

    ``tokens``: ids at the gap positions (position order); ``energy``: E(x) (untempered);
    ``count``: how many (chain, step) pairs after burn-in sat in this state; ``text``/``fills``:
    the rendered completion (text-level API only).
    """

    tokens: tuple[int, ...]
    energy: float
    count: int
    text: str | None = None
    fills: list[str] | None = None


@dataclass
class ChainResult:
    """What :func:`mh` returns.

    ``samples``      -- distinct visited states, most visited first (ties: lower energy first)
    ``best``         -- the lowest-energy state ever visited (mode seeking), burn-in included
    ``final``        -- each chain's last state
    ``energy_trace`` -- [epochs + 1, chains] float64: each chain's energy at the start and
                        after every epoch
    ``temperatures`` / ``block_sizes`` -- the schedule actually used, one entry per epoch
    ``proposals`` / ``accepted`` / ``novel`` -- counts over all chains and steps; a proposal is
                        *novel* when it is accepted and differs from the current state
    """

    positions: list[int]
    samples: list[Sample]
    best: Sample
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
    """:func:`sample`'s result: a :class:`ChainResult` whose samples carry text and fills."""

    text: str = ""
    settings: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# energies
# ---------------------------------------------------------------------------------------------
def scored_positions(model: MaskedLM, ids: Sequence[int]) -> list[int]:
    """Positions t that E sums over: every position holding an ordinary output token.

    Structural specials (cls/bos, sep/eos, pad) and any other id in ``model.special_ids`` are
    skipped; a sequence still holding ``model.mask_id`` cannot be scored (InputError).
    """
    if any(int(i) == model.mask_id for i in ids):
        raise InputError("cannot compute the energy of a sequence that still holds a mask")
    special = model.special_ids
    return [t for t, i in enumerate(ids) if int(i) < model.vocab_size and int(i) not in special]


def _score_fn(model: MaskedLM, kind: str):
    if kind == "local":
        return model.log_probs
    if kind == "raw":
        fn = getattr(model, "logits", None)
        if not callable(fn) or getattr(type(model), "logits", None) is MaskedLM.logits:
            raise ConfigError(
                f"energy 'raw' needs the model's unnormalized logits, and the adapter for "
                f"{getattr(model, 'name', type(model).__name__)!r} has no logits() method; "
                "use energy 'local'")
        return fn
    raise ConfigError(f"unknown energy {kind!r}; choose one of {', '.join(ENERGIES)}")


def _as_batch(model: MaskedLM, input_ids) -> tuple[torch.Tensor, torch.Tensor]:
    """One sequence or several (possibly of different lengths) -> padded [N, T] ids + mask."""
    if isinstance(input_ids, torch.Tensor):
        seqs = [input_ids.tolist()] if input_ids.dim() == 1 else input_ids.tolist()
    else:
        seqs = list(input_ids)
        if seqs and not isinstance(seqs[0], (list, tuple, torch.Tensor)):
            seqs = [seqs]
        seqs = [s.tolist() if isinstance(s, torch.Tensor) else list(s) for s in seqs]
    if not seqs or any(len(s) == 0 for s in seqs):
        raise InputError("nothing to score: empty sequence")
    return pad_batch(seqs, model.pad_id)


@torch.inference_mode()
def _energy_terms(model: MaskedLM, ids: torch.Tensor, attn: torch.Tensor, scored: torch.Tensor,
                  kind: str, max_rows: int) -> torch.Tensor:
    """Per-position terms -f_t(x_t; x_{-t}) as [N, T] float64 (0 where not scored)."""
    fn = _score_fn(model, kind)
    jobs = scored.nonzero(as_tuple=False)                      # [J, 2]: (row, t)
    terms = torch.zeros(ids.shape, dtype=torch.float64)
    for start in range(0, jobs.shape[0], max_rows):
        job = jobs[start: start + max_rows]
        r, t = job[:, 0], job[:, 1]
        rows = ids[r].clone()
        gold = rows[torch.arange(len(r)), t].clone()
        rows[torch.arange(len(r)), t] = model.mask_id
        out = fn(rows.to(model.device), attn[r].to(model.device), t[:, None].to(model.device))
        vals = out[:, 0, :].gather(-1, gold[:, None].to(out.device))[:, 0]
        terms[r, t] = -vals.detach().to("cpu", torch.float64)
    if not torch.isfinite(terms).all():
        raise InputError("the model gave a non-finite score to a token of the sequence")
    return terms


def energy(model: MaskedLM, input_ids, kind: str = "local",
           positions: Sequence[int] | None = None, max_rows: int = 256) -> torch.Tensor:
    """E_local or E_raw of one or several sequences (SPEC §3) -> float64 tensor [N].

    ``input_ids``: one sequence (list / 1-D tensor) or several (a list of them, or a 2-D tensor).
    ``positions``: the positions t to sum over (shared by all rows); default every scored
    position of each row (:func:`scored_positions`). ``max_rows`` bounds the rows per forward call.
    """
    _score_fn(model, kind)
    if max_rows < 1:
        raise ConfigError("max_rows must be at least 1")
    ids, attn = _as_batch(model, input_ids)
    scored = torch.zeros(ids.shape, dtype=torch.bool)
    for r in range(ids.shape[0]):
        row = ids[r, attn[r]].tolist()
        pos = scored_positions(model, row) if positions is None else list(positions)
        if any(not 0 <= p < len(row) for p in pos):
            raise InputError(f"position out of range for a sequence of length {len(row)}")
        if positions is not None and any(row[p] == model.mask_id for p in pos):
            raise InputError("cannot compute the energy of a sequence that still holds a mask")
        scored[r, pos] = True
    return _energy_terms(model, ids, attn, scored, kind, max_rows).sum(-1)


_energy = energy  # the functions below take an ``energy`` argument that shadows the name


# ---------------------------------------------------------------------------------------------
# one MH step: proposal and acceptance
# ---------------------------------------------------------------------------------------------
def proposal_log_probs(log_q: torch.Tensor, allowed: torch.Tensor | None = None,
                       temperature: float = 1.0, top_p: float | None = None) -> torch.Tensor:
    """log r(.) of the proposal actually drawn from: the model's masked conditional ``log_q``
    [..., V] restricted to ``allowed`` tokens, tempered (``softmax(log_q / temperature)``) and
    nucleus-truncated (the smallest set of most probable tokens whose tempered mass reaches
    ``top_p``), renormalized. Tokens outside the support get ``-inf``.
    """
    lp = log_q.to(torch.float64)
    if allowed is not None:
        lp = lp.masked_fill(~allowed.to(lp.device), float("-inf"))
    lp = torch.log_softmax(lp / temperature, dim=-1)
    if top_p is not None and top_p < 1.0:
        sorted_lp, order = lp.sort(dim=-1, descending=True)
        mass_before = sorted_lp.exp().cumsum(-1) - sorted_lp.exp()
        keep_sorted = mass_before < top_p                       # the first one is always kept
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        lp = torch.log_softmax(lp.masked_fill(~keep, float("-inf")), dim=-1)
    return lp


def log_acceptance(e_cur: torch.Tensor, e_prop: torch.Tensor, log_q_fwd: torch.Tensor,
                   log_q_rev: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """log of the MH acceptance probability, in log space (never overflows, never NaN):

    ``min(0, (E(x) - E(x')) / tau + log q(x | x') - log q(x' | x))``.

    Equal energies (also equal infinities) contribute 0; an impossible reverse move
    (``log_q_rev = -inf``) gives ``-inf`` (always rejected).
    """
    e_cur, e_prop = e_cur.to(torch.float64), e_prop.to(torch.float64)
    diff = torch.where(e_cur == e_prop, torch.zeros_like(e_cur), e_cur - e_prop) / tau
    fwd, rev = log_q_fwd.to(torch.float64), log_q_rev.to(torch.float64)
    ratio = torch.where(rev == fwd, torch.zeros_like(rev), rev - fwd)
    out = diff + ratio
    # +inf + -inf (absurd energies against an impossible reverse move) -> reject.
    out = torch.where(torch.isnan(out), torch.full_like(out, float("-inf")), out)
    return out.clamp(max=0.0)


def _gumbel_argmax(lp: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One draw per row of the categorical exp(lp) (Gumbel-max), deterministic under ``gen``."""
    u = torch.rand(lp.shape, generator=gen, dtype=torch.float64)
    u = u.clamp(min=1e-300, max=1.0 - 1e-16)
    return (lp - torch.log(-torch.log(u))).argmax(-1)


def _propose(model: MaskedLM, x: torch.Tensor, block: torch.Tensor, allowed: torch.Tensor,
             proposal_temperature: float, top_p: float | None, gen: torch.Generator):
    """One proposal per chain from one forward pass: mask ``block`` in every row of ``x``
    [C, T], draw each position independently from its proposal distribution.

    Returns (x' [C, T], log q(x'|x) [C], log q(x|x') [C], changed [C] bool). The reverse
    probability comes from the same pass: x and x' agree outside the block.
    """
    chains = x.shape[0]
    masked = x.clone()
    masked[:, block] = model.mask_id
    log_q = model.log_probs(masked.to(model.device),
                            torch.ones_like(masked, dtype=torch.bool).to(model.device),
                            block.repeat(chains, 1).to(model.device))
    lp = proposal_log_probs(log_q.detach().to("cpu"), allowed, proposal_temperature, top_p)
    w = _gumbel_argmax(lp, gen)                                           # [C, b]
    cur = x[:, block]
    fwd = lp.gather(-1, w[..., None])[..., 0].sum(-1)
    rev = lp.gather(-1, cur[..., None])[..., 0].sum(-1)
    prop = x.clone()
    prop[:, block] = w
    return prop, fwd, rev, (w != cur).any(-1)


# ---------------------------------------------------------------------------------------------
# schedules and initial states
# ---------------------------------------------------------------------------------------------
def _temperatures(temperature: float, anneal: float, min_temperature: float,
                  epochs: int) -> list[float]:
    """Target temperature per epoch: ``max(min_temperature, temperature - anneal * epoch)``."""
    return [max(min_temperature, temperature - anneal * e) for e in range(epochs)]


def _block_sizes(block: int, n: int, epochs: int, schedule: str) -> list[int]:
    """Block size per epoch: ``fixed``, or ``anneal`` = linear from ``block`` down to 1."""
    block = min(block, n)
    if schedule == "fixed" or epochs == 1:
        return [block] * epochs
    return [max(1, round(block - (block - 1) * e / (epochs - 1))) for e in range(epochs)]


def _greedy(model: MaskedLM, ids: list[int], allow_special: bool) -> tuple[int, ...]:
    """Left-to-right greedy fill: beam size 1 with the standard scorer (infill.decode)."""
    from infill.api import decode
    hyps = decode(model, ids, scorer="standard", order="left-to-right", beam_size=1,
                  allow_special=allow_special)
    return tuple(int(t) for t in hyps[0].tokens)


def _initial_states(model, ids, positions, allowed, allow_special, init, chains,
                    gen) -> torch.Tensor:
    """[chains, n] initial gap tokens: 'greedy', 'random', one token tuple, a list of tuples,
    or hypotheses with ``.tokens`` (e.g. a beam result; cycled over the chains)."""
    n = len(positions)
    if isinstance(init, str):
        if init == "greedy":
            start = list(ids)
            for p in positions:
                start[p] = model.mask_id
            return torch.tensor(_greedy(model, start, allow_special)).repeat(chains, 1)
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
    return torch.tensor([states[c % len(states)] for c in range(chains)], dtype=torch.long)


def _check_options(energy_kind, proposal_temperature, top_p, block, block_schedule, temperature,
                   anneal, min_temperature, epochs, chains, order, burn_in):
    if energy_kind not in ENERGIES:
        raise ConfigError(f"unknown energy {energy_kind!r}; choose one of {', '.join(ENERGIES)}")
    if not proposal_temperature > 0 or not math.isfinite(proposal_temperature):
        raise ConfigError("the proposal temperature must be a positive number")
    if top_p is not None and not 0.0 < top_p <= 1.0:
        raise ConfigError("top_p must be in (0, 1]")
    if block < 1:
        raise ConfigError("the block size must be at least 1")
    if block_schedule not in ("anneal", "fixed"):
        raise ConfigError("block_schedule must be 'anneal' or 'fixed'")
    if not temperature > 0 or not min_temperature > 0:
        raise ConfigError("target temperatures must be positive")
    if anneal < 0:
        raise ConfigError("anneal must be >= 0 (temperature decrease per epoch)")
    if epochs < 1 or chains < 1:
        raise ConfigError("epochs and chains must be at least 1")
    if order not in ORDERS:
        raise ConfigError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
    if not 0 <= burn_in < epochs:
        raise ConfigError("burn_in must be in [0, epochs)")


# ---------------------------------------------------------------------------------------------
# the sampler
# ---------------------------------------------------------------------------------------------
@torch.inference_mode()
def mh(model: MaskedLM, input_ids, positions: Sequence[int] | None = None, *,
       energy: str = "local", proposal_temperature: float = 1.0, top_p: float | None = None,
       block: int = 1, block_schedule: str = "anneal", temperature: float = 1.0,
       anneal: float = 0.0, min_temperature: float = 0.01, epochs: int = 10, chains: int = 4,
       order: str = "left-to-right", burn_in: int = 0, init="greedy", gibbs: bool = False,
       allow_special: bool = False, seed: int = 0, max_rows: int = 256) -> ChainResult:
    """Run ``chains`` MH chains (or the degenerate Gibbs chain) over the gap positions.

    ``input_ids``: one sequence; the gap positions are ``positions`` or, by default, those
    holding ``model.mask_id``. Only they move; everything else is fixed context. ``init``: the
    warm start -- ``"greedy"`` (left-to-right greedy fill), ``"random"``, a tuple of gap tokens, or
    a list of tuples / hypotheses with ``.tokens`` (cycled over chains). One epoch = one sweep over
    the gap positions (``order``) in blocks (see :func:`_block_sizes`); epoch e runs at target
    temperature ``max(min_temperature, temperature - anneal * e)``. Visits are counted after every
    step of epochs ``>= burn_in``. Deterministic under ``seed``.
    """
    energy_kind = energy
    _check_options(energy_kind, proposal_temperature, top_p, block, block_schedule, temperature,
                   anneal, min_temperature, epochs, chains, order, burn_in)
    if not gibbs:
        _score_fn(model, energy_kind)
    ids = (input_ids.tolist() if isinstance(input_ids, torch.Tensor) else
           [int(i) for i in input_ids])
    if positions is None:
        positions = [t for t, i in enumerate(ids) if i == model.mask_id]
    positions = sorted(int(p) for p in positions)
    if not positions:
        raise InputError("no gap: nothing to sample (no mask in the input)")
    if len(set(positions)) != len(positions) or not 0 <= positions[0] <= positions[-1] < len(ids):
        raise InputError("gap positions must be distinct and inside the sequence")
    model.check_length(len(ids))
    n = len(positions)
    gen = torch.Generator().manual_seed(int(seed))
    allowed = model.allowed_mask(allow_special).cpu()
    if not allowed.any():
        raise ConfigError("no token may be placed in a gap")

    pos_t = torch.tensor(positions, dtype=torch.long)
    x = torch.tensor(ids, dtype=torch.long).repeat(chains, 1)
    x[:, pos_t] = _initial_states(model, ids, positions, allowed, allow_special, init, chains,
                                  gen)
    scored_row = torch.zeros(len(ids), dtype=torch.bool)
    context = x[0].clone()
    context[pos_t] = allowed.nonzero()[0, 0]          # any ordinary token: find context specials
    scored_row[scored_positions(model, context.tolist())] = True
    scored_row[pos_t] = True

    rows_used = 0

    def energies(states: torch.Tensor) -> torch.Tensor:
        """E of each row of ``states``; chains in the same state share one evaluation."""
        nonlocal rows_used
        if states.shape[0] == 0:
            return torch.zeros(0, dtype=torch.float64)
        uniq, inverse = torch.unique(states, dim=0, return_inverse=True)
        rows_used += int(scored_row.sum()) * uniq.shape[0]
        sc = scored_row.repeat(uniq.shape[0], 1)
        return _energy_terms(model, uniq, torch.ones_like(sc), sc, energy_kind,
                             max_rows).sum(-1)[inverse]

    e = energies(x)
    trace = [e.clone()]
    temps = _temperatures(temperature, anneal, min_temperature, epochs)
    blocks = _block_sizes(block, n, epochs, block_schedule)

    counts: dict[tuple[int, ...], int] = {}
    known_e: dict[tuple[int, ...], float] = {}
    best_state: tuple[int, ...] | None = None
    best_e = float("inf")

    def remember(states: torch.Tensor, es: torch.Tensor | None, count: bool) -> None:
        nonlocal best_state, best_e
        uniq, inverse, n_of = torch.unique(states[:, pos_t], dim=0, return_inverse=True,
                                           return_counts=True)
        first = torch.full((len(uniq),), len(inverse), dtype=torch.long)
        first = first.scatter_reduce(0, inverse, torch.arange(len(inverse)), "amin")
        for u, key in enumerate(map(tuple, uniq.tolist())):
            if count:
                counts[key] = counts.get(key, 0) + int(n_of[u])
            if es is not None:
                ek = float(es[first[u]])
                known_e[key] = ek
                if ek < best_e:
                    best_e, best_state = ek, key

    remember(x, e, count=False)
    proposals = accepted = novel = steps = 0
    for epoch in range(epochs):
        tau, b = temps[epoch], blocks[epoch]
        if order == "random":
            visit = pos_t[torch.randperm(n, generator=gen)]
        else:
            visit = pos_t
        for start in range(0, n, b):
            block_pos = visit[start: start + b]
            prop, fwd, rev, changed = _propose(model, x, block_pos, allowed,
                                               proposal_temperature, top_p, gen)
            rows_used += chains
            u = torch.rand(chains, generator=gen, dtype=torch.float64)
            if gibbs:
                acc = torch.ones(chains, dtype=torch.bool)
            else:
                e_prop = e.clone()
                e_prop[changed] = energies(prop[changed])
                log_a = log_acceptance(e, e_prop, fwd, rev, tau)
                acc = torch.log(u) < log_a
                e = torch.where(acc, e_prop, e)
            x = torch.where(acc[:, None], prop, x)
            proposals += chains
            accepted += int(acc.sum())
            novel += int((acc & changed).sum())
            steps += 1
            remember(x, None if gibbs else e, count=epoch >= burn_in)
        if gibbs:
            e_epoch = energies(x)
            remember(x, e_epoch, count=False)
            trace.append(e_epoch)
        else:
            trace.append(e.clone())

    if gibbs:
        missing = [k for k in counts if k not in known_e]
        if missing:
            states = torch.tensor(ids, dtype=torch.long).repeat(len(missing), 1)
            states[:, pos_t] = torch.tensor(missing, dtype=torch.long)
            for k, v in zip(missing, energies(states).tolist()):
                known_e[k] = v
        for k, v in known_e.items():
            if v < best_e:
                best_e, best_state = v, k

    samples = sorted((Sample(k, known_e[k], c) for k, c in counts.items()),
                     key=lambda s: (-s.count, s.energy, s.tokens))
    return ChainResult(
        positions=positions, samples=samples,
        best=Sample(best_state, best_e, counts.get(best_state, 0)),
        final=[tuple(s) for s in x[:, pos_t].tolist()],
        energy_trace=torch.stack(trace), temperatures=temps, block_sizes=blocks,
        proposals=proposals, accepted=accepted, novel=novel, steps=steps,
        forward_rows=rows_used)


# ---------------------------------------------------------------------------------------------
# text-level API
# ---------------------------------------------------------------------------------------------
def _split_fills(encoding, tokens: Sequence[int]) -> list[list[int]]:
    by_pos = dict(zip(encoding.positions, tokens))
    return [[by_pos[p] for p in g] for g in encoding.gaps]


def sample(model: MaskedLM, text, gap: int = 1, energy: str = "local",
           proposal_temperature: float = 1.0, top_p: float | None = None, block: int = 1,
           anneal: float = 0.0, epochs: int = 10, chains: int = 4, seed: int = 0,
           marker: str = "___", **options):
    """Sample completions of ``text`` (each ``marker`` -> ``gap`` masked tokens) by MH.

    Returns a :class:`SampleResult` for one text (a list of them for a list of texts) whose
    ``samples`` carry ``.text``, ``.fills``, ``.tokens``, ``.energy`` and visit ``.count``, most
    visited first; ``.best`` is the lowest-energy completion seen. Further ``options`` go to
    :func:`mh` (``temperature``, ``min_temperature``, ``block_schedule``, ``order``, ``burn_in``,
    ``init``, ``gibbs``, ``allow_special``, ``max_rows``).
    """
    if isinstance(text, (list, tuple)):
        return [sample(model, t, gap, energy, proposal_temperature, top_p, block, anneal, epochs,
                       chains, seed, marker, **options) for t in text]
    if gap < 1:
        raise ConfigError("the gap length must be at least 1")
    enc = model.encode(text, gap, marker)
    res = mh(model, enc.input_ids, enc.positions, energy=energy,
             proposal_temperature=proposal_temperature, top_p=top_p, block=block,
             anneal=anneal, epochs=epochs, chains=chains, seed=seed, **options)

    def rendered(s: Sample) -> Sample:
        full, fills = model.render(enc, _split_fills(enc, s.tokens))
        return Sample(s.tokens, s.energy, s.count, full, fills)

    settings = dict(gap=gap, energy=energy, proposal_temperature=proposal_temperature,
                    top_p=top_p, block=block, anneal=anneal, epochs=epochs, chains=chains,
                    seed=seed, **options)
    return SampleResult(
        positions=res.positions, samples=[rendered(s) for s in res.samples],
        best=rendered(res.best), final=res.final, energy_trace=res.energy_trace,
        temperatures=res.temperatures, block_sizes=res.block_sizes, proposals=res.proposals,
        accepted=res.accepted, novel=res.novel, steps=res.steps, forward_rows=res.forward_rows,
        text=text, settings=settings)


def rescore(model: MaskedLM, texts_or_ids, energy: str = "local",
            max_rows: int = 256) -> list[float]:
    """Energies of complete texts (tokenized with the model's specials) or id sequences, in
    input order. Lower is better; sort by it to rank completions (e.g. a beam)."""
    items = [texts_or_ids] if isinstance(texts_or_ids, str) else list(texts_or_ids)
    if not items:
        return []
    if isinstance(items[0], int):
        items = [items]
    seqs = [model.tokenize(it) if isinstance(it, str) else it for it in items]
    for s in seqs:
        model.check_length(len(s))
    return _energy(model, seqs, energy, max_rows=max_rows).tolist()
