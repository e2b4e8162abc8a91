"""Pairwise joints from a masked LM's unary conditionals (SPEC §2; Torroba Hennigen & Kim 2023).

Two layers:

* **Constructions** — pure functions of two conditional tables over candidate sets A, B::

      log_qa_b[i, j] = log q(w_a = A_i | w_b = B_j)     (each column a distribution over A)
      log_qb_a[i, j] = log q(w_b = B_j | w_a = A_i)     (each row a distribution over B)

  :func:`mlm`, :func:`mrf`, :func:`mrf_logits`, :func:`hcb`, :func:`ag` each return the normalized
  log-joint ``[|A|, |B|]`` in the dtype they were given (float64 in -> float64 out).
* **Model side** — :func:`pair_tables` builds those tables for an input and two positions with
  batched forward passes through the adapter protocol (:class:`infill.models.base.MaskedLM`);
  :func:`build_joints` turns them into every joint; :func:`decode_ag` ranks 2-token fills by AG.

Arnold–Gokhale, exactly what is computed. With the tables normalized over the candidates, AG
minimizes over joints J on A x B

    D(J) = sum_j KL(q_{a|b}(.|B_j) || J_{a|b}(.|B_j)) + sum_i KL(q_{b|a}(.|A_i) || J_{b|a}(.|A_i)),

(KL *from* the MLM's conditionals *to* the joint's, unweighted over conditioning tokens).
The SPEC's update J <- normalize[(q_{a|b} + q_{b|a}) / (1/J_a + 1/J_b)] is right: it is the
minorize–maximize step for -D (up to a constant,
-D(J) = sum_ij (α_ij + β_ij) log J_ij - sum_i log J_a(i) - sum_j log J_b(j) with
α_ij = q_{a|b}(A_i|B_j), β_ij = q_{b|a}(B_j|A_i); bound -log J_a(i) and -log J_b(j) by their
tangents at the current iterate; the bound's maximizer is (α_ij + β_ij) / (1/J_a(i) + 1/J_b(j)),
and -D is scale-invariant because sum_ij (α_ij + β_ij) = |A| + |B|, so normalizing is free).
Hence D never increases from one iteration to the next, and its stationary points satisfy
J_{a|b} + J_{b|a} = q_{a|b} + q_{b|a} entrywise; for compatible conditionals the true joint is a
fixed point with D = 0. Convergence is linear, so either give enough iterations or a ``tol``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from infill.errors import ConfigError, InputError
from infill.models.base import MaskedLM, pad_batch

JOINT_NAMES = ("MLM", "MRF-L", "MRF", "HCB", "AG")

__all__ = [
    "JOINT_NAMES", "AGInfo", "PairTables", "mlm", "mrf", "mrf_logits", "hcb", "ag",
    "ag_objective", "conditionals", "pair_tables", "pair_tables_batch", "build_joints",
    "decode_ag",
]


# ================================================================================================
# Constructions (pure functions of the tables)
# ================================================================================================
def _normalize(log_table: torch.Tensor) -> torch.Tensor:
    """Normalize a log-table so that its entries' exponentials sum to one."""
    z = torch.logsumexp(log_table.reshape(-1), dim=0)
    if not torch.isfinite(z):
        raise InputError("the joint has no finite entry (every cell has probability zero)")
    return log_table - z


def _check_pair(x: torch.Tensor, y: torch.Tensor, what: str) -> None:
    if x.dim() != 2 or x.shape != y.shape:
        raise InputError(f"{what}: both tables must be 2-D [|A|, |B|] of the same shape, got "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    if torch.isnan(x).any() or torch.isnan(y).any():
        raise InputError(f"{what}: NaN in the conditional tables")


def _log_cols(log_qa_b: torch.Tensor) -> torch.Tensor:
    """Renormalize every column (a distribution over A) of q_{a|b}."""
    return log_qa_b - torch.logsumexp(log_qa_b, dim=0, keepdim=True)


def _log_rows(log_qb_a: torch.Tensor) -> torch.Tensor:
    """Renormalize every row (a distribution over B) of q_{b|a}."""
    return log_qb_a - torch.logsumexp(log_qb_a, dim=1, keepdim=True)


def mlm(log_qa: torch.Tensor, log_qb: torch.Tensor) -> torch.Tensor:
    """MLM joint: q(w_a) q(w_b), the two marginals under the input with both a and b masked.

    ``log_qa`` [|A|], ``log_qb`` [|B|] (renormalized over the candidates here).
    """
    if log_qa.dim() != 1 or log_qb.dim() != 1:
        raise InputError("mlm: the marginals must be 1-D tables over A and B")
    la = log_qa - torch.logsumexp(log_qa, 0)
    lb = log_qb - torch.logsumexp(log_qb, 0)
    return _normalize(la[:, None] + lb[None, :])


def mrf(log_qa_b: torch.Tensor, log_qb_a: torch.Tensor) -> torch.Tensor:
    """MRF joint: ∝ q_{a|b}(w_a | w_b) · q_{b|a}(w_b | w_a) (log-probabilities, as given)."""
    _check_pair(log_qa_b, log_qb_a, "mrf")
    return _normalize(log_qa_b + log_qb_a)


def mrf_logits(logits_a_b: torch.Tensor, logits_b_a: torch.Tensor) -> torch.Tensor:
    """MRF-L joint: ∝ exp(f_a(w_a; w_b) + f_b(w_b; w_a)) with f the network's unnormalized logits.

    Same formula as :func:`mrf`, but on logits. It is NOT identifiable from log-probabilities:
    log q_{a|b}(w_a|w_b) = f_a(w_a; w_b) - Z_a(w_b), and the per-conditioning-token constants
    Z_a(w_b) + Z_b(w_a) change the joint; so the model side needs the adapter's ``logits``.
    """
    _check_pair(logits_a_b, logits_b_a, "mrf_logits")
    return _normalize(logits_a_b + logits_b_a)


def hcb(log_qa_b: torch.Tensor, log_qb_a: torch.Tensor, pivot: int | None = None,
        log_qa: torch.Tensor | None = None) -> torch.Tensor:
    """Hammersley–Clifford–Besag joint with pivot w'_a = A_pivot:

        q(w_a, w_b) ∝ q_{a|b}(w_a | w_b) / q_{a|b}(w'_a | w_b) · q_{b|a}(w_b | w'_a)

    (the factor 1/q_{b|a}(w'_b | w'_a) of the full identity is constant and cancels). Exact for
    compatible conditionals for any pivot with q_{a|b}(w'_a | w_b) > 0 for every w_b; invariant to
    renormalizing the tables over the candidates.

    ``pivot``: index into A. ``None`` -> the mode of the MLM joint at a, i.e. ``argmax(log_qa)``
    when the marginal ``log_qa`` is given, else index 0 (which is that mode for the candidate sets
    :func:`pair_tables` builds: A is sorted by the marginal, best first).
    """
    _check_pair(log_qa_b, log_qb_a, "hcb")
    n_a = log_qa_b.shape[0]
    if pivot is None:
        pivot = int(torch.argmax(log_qa)) if log_qa is not None else 0
    pivot = int(pivot)
    if not 0 <= pivot < n_a:
        raise ConfigError(f"hcb pivot index {pivot} is outside the candidate set A (size {n_a})")
    denom = log_qa_b[pivot]                                        # [|B|] log q(w'_a | w_b)
    if not torch.isfinite(denom).all():
        raise InputError("hcb pivot is outside the support: q(pivot | w_b) = 0 for some w_b")
    return _normalize(log_qa_b - denom[None, :] + log_qb_a[pivot][None, :])


@dataclass
class AGInfo:
    """Convergence record of :func:`ag`.

    iterations -- updates run; change -- total-variation distance between the last two iterates;
    objective  -- D(J) (see the module docstring) for the start and after every update;
    converged  -- True when ``tol`` was given and ``change <= tol`` stopped the loop.
    """

    iterations: int
    change: float
    objective: list[float] = field(default_factory=list)
    converged: bool = False


def conditionals(log_joint: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The joint's own conditionals in the tables' convention: (log J_{a|b}, log J_{b|a})."""
    return (log_joint - torch.logsumexp(log_joint, dim=0, keepdim=True),
            log_joint - torch.logsumexp(log_joint, dim=1, keepdim=True))


def _kl(log_p: torch.Tensor, log_q: torch.Tensor, dim: int) -> torch.Tensor:
    """KL(p || q) along ``dim`` (0 log 0 = 0; +inf where q = 0 < p)."""
    p = log_p.exp()
    terms = torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))
    return terms.sum(dim)


def ag_objective(log_qa_b: torch.Tensor, log_qb_a: torch.Tensor,
                 log_joint: torch.Tensor) -> float:
    """The AG objective (module docstring):

    D(J) = Σ_j KL(q_{a|b}(.|B_j) || J_{a|b}(.|B_j)) + Σ_i KL(q_{b|a}(.|A_i) || J_{b|a}(.|A_i)).
    """
    ja_b, jb_a = conditionals(log_joint)
    return float(_kl(_log_cols(log_qa_b), ja_b, 0).sum() + _kl(_log_rows(log_qb_a), jb_a, 1).sum())


def ag(log_qa_b: torch.Tensor, log_qb_a: torch.Tensor, iterations: int = 50,
       tol: float | None = None, trace: bool = True) -> tuple[torch.Tensor, AGInfo]:
    """Arnold–Gokhale joint: start uniform; repeat up to ``iterations`` times

        J <- normalize[ (q_{a|b}(w_a|w_b) + q_{b|a}(w_b|w_a)) / (1/J_a(w_a) + 1/J_b(w_b)) ]

    in log space (J_a, J_b the current marginals). Tables are first renormalized over the
    candidates. With ``tol``, stop as soon as the total-variation change between iterates is
    ``<= tol``. ``trace=False`` records the objective only at the start and the end (faster).
    Returns (normalized log-joint, :class:`AGInfo`).
    """
    _check_pair(log_qa_b, log_qb_a, "ag")
    if iterations < 1:
        raise ConfigError(f"ag needs at least one iteration, got {iterations}")
    la, lb = _log_cols(log_qa_b), _log_rows(log_qb_a)
    num = torch.logaddexp(la, lb)                                   # log(a + b)
    n_a, n_b = la.shape
    log_j = torch.full_like(la, -torch.log(torch.tensor(float(n_a * n_b), dtype=la.dtype)).item())
    info = AGInfo(iterations=0, change=float("inf"),
                  objective=[ag_objective(la, lb, log_j)])
    for _ in range(iterations):
        ma = torch.logsumexp(log_j, dim=1, keepdim=True)             # log J_a  [|A|, 1]
        mb = torch.logsumexp(log_j, dim=0, keepdim=True)             # log J_b  [1, |B|]
        # 1/(1/J_a + 1/J_b) = J_a J_b / (J_a + J_b)
        new = _normalize(num + ma + mb - torch.logaddexp(ma, mb))
        change = 0.5 * float((new.exp() - log_j.exp()).abs().sum())
        log_j = new
        info.iterations += 1
        info.change = change
        if trace:
            info.objective.append(ag_objective(la, lb, log_j))
        if tol is not None and change <= tol:
            info.converged = True
            break
    if not trace:
        info.objective.append(ag_objective(la, lb, log_j))
    return log_j, info


# ================================================================================================
# Model side
# ================================================================================================
@dataclass
class PairTables:
    """Everything the joints need for one input and two positions a < b (or a > b).

    ``cand_a``/``cand_b`` -- output ids of the candidate sets A and B: the allowed output
    vocabulary when it has at most ``joint_size`` ids, else the top-``joint_size`` of the
    both-masked marginal, best first; the gold token is appended when given and missing.
    ``log_qa``/``log_qb`` -- marginals with a and b masked; ``log_qa_b``/``log_qb_a`` -- the unary
    conditionals; all renormalized over the candidate sets (float64). ``logits_a_b``/``logits_b_a``
    -- the raw logits on the same grid, or None when the adapter has no ``logits`` method.
    ``gold`` -- (index in A, index in B) of the gold pair, or None.
    """

    a: int
    b: int
    cand_a: torch.Tensor
    cand_b: torch.Tensor
    log_qa: torch.Tensor
    log_qb: torch.Tensor
    log_qa_b: torch.Tensor
    log_qb_a: torch.Tensor
    logits_a_b: torch.Tensor | None = None
    logits_b_a: torch.Tensor | None = None
    gold: tuple[int, int] | None = None


def _has_logits(model: MaskedLM) -> bool:
    """Whether the adapter implements the optional ``logits`` (the base class only raises)."""
    impl = getattr(type(model), "logits", None)
    return callable(impl) and impl is not getattr(MaskedLM, "logits", None)


def _forward(model: MaskedLM, rows: list[list[int]], positions: list[list[int]],
             batch_size: int, want_logits: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """P positions per row; returns (log-probs [R, P, V], logits or None), float64 on CPU.

    Rows are padded with ``pad_id`` and sent in chunks of ``batch_size`` (one model call each).
    With ``want_logits`` the adapter's ``logits`` is called instead and the log-probs are its
    log-softmax (the same single pass).
    """
    lps, lgs = [], []
    for s in range(0, len(rows), batch_size):
        chunk, pos = rows[s:s + batch_size], positions[s:s + batch_size]
        ids, attn = pad_batch(chunk, model.pad_id)
        p = torch.tensor(pos, dtype=torch.long)
        with torch.inference_mode():
            if want_logits:
                lg = model.logits(ids, attn, p).double().cpu()
                lgs.append(lg)
                lps.append(torch.log_softmax(lg, dim=-1))
            else:
                lps.append(model.log_probs(ids, attn, p).double().cpu())
    return torch.cat(lps), (torch.cat(lgs) if want_logits else None)


def _candidates(lp: torch.Tensor, allowed: torch.Tensor, k: int, gold: int | None) -> torch.Tensor:
    scores = lp.masked_fill(~allowed, float("-inf"))
    n = int(allowed.sum())
    top = torch.topk(scores, min(k, n)).indices
    if gold is not None and not bool((top == gold).any()):
        top = torch.cat([top, torch.tensor([gold])])
    return top


def pair_tables_batch(model: MaskedLM, items: list[tuple[list[int], int, int]],
                      joint_size: int = 50, gold: list[tuple[int, int] | None] | None = None,
                      allow_special: bool = False, batch_size: int = 128,
                      logits: bool | None = None) -> list[PairTables]:
    """:func:`pair_tables` for many (input_ids, a, b) items, batching the forward passes across
    items: one pass over every both-masked input, then one pass per conditioning token
    (|A| + |B| rows per item), all in chunks of ``batch_size`` rows.

    ``gold[k]`` = (gold token at a, gold token at b) for item k (added to the candidate sets), or
    None. ``logits``: fetch raw logits for MRF-L (default: when the adapter has ``logits``).
    """
    if joint_size < 1:
        raise ConfigError(f"joint size must be >= 1, got {joint_size}")
    if batch_size < 1:
        raise ConfigError(f"batch size must be >= 1, got {batch_size}")
    want_logits = _has_logits(model) if logits is None else bool(logits)
    if want_logits and not _has_logits(model):
        raise ConfigError("this model adapter has no logits() method, so MRF-L is unavailable")
    golds = gold if gold is not None else [None] * len(items)
    if len(golds) != len(items):
        raise InputError("give one gold pair (or None) per item")
    allowed = model.allowed_mask(allow_special)
    # -- phase 1: marginals with both positions masked (one row per item) ----------------------
    rows, pos = [], []
    for ids, a, b in items:
        ids = [int(t) for t in ids]
        if a == b or not (0 <= a < len(ids) and 0 <= b < len(ids)):
            raise InputError(f"positions ({a}, {b}) must be two different positions of the input "
                             f"(length {len(ids)})")
        model.check_length(len(ids))
        x = list(ids)
        x[a] = x[b] = model.mask_id
        rows.append(x)
        pos.append([a, b])
    marg, _ = _forward(model, rows, pos, batch_size, False)         # [N, 2, V]
    # -- candidates and phase 2: one row per conditioning token ---------------------------------
    cands, rows, pos = [], [], []
    for k, (ids, a, b) in enumerate(items):
        g = golds[k]
        ca = _candidates(marg[k, 0], allowed, joint_size, None if g is None else int(g[0]))
        cb = _candidates(marg[k, 1], allowed, joint_size, None if g is None else int(g[1]))
        cands.append((ca, cb))
        base = [int(t) for t in ids]
        for w in cb.tolist():            # q_{a|b}(. | w_b = w): mask a, put w at b
            x = list(base)
            x[a], x[b] = model.mask_id, w
            rows.append(x)
            pos.append([a])
        for w in ca.tolist():            # q_{b|a}(. | w_a = w): mask b, put w at a
            x = list(base)
            x[a], x[b] = w, model.mask_id
            rows.append(x)
            pos.append([b])
    cond, cond_logits = _forward(model, rows, pos, batch_size, want_logits)
    cond = cond[:, 0]
    cond_logits = None if cond_logits is None else cond_logits[:, 0]
    out, r = [], 0
    for k, (ids, a, b) in enumerate(items):
        ca, cb = cands[k]
        na, nb = len(ca), len(cb)
        qa_rows = cond[r:r + nb][:, ca]                      # [|B|, |A|]: row j = q_a(. | B_j)
        qb_rows = cond[r + nb:r + nb + na][:, cb]            # [|A|, |B|]: row i = q_b(. | A_i)
        la_b, lb_a = _log_cols(qa_rows.T.contiguous()), _log_rows(qb_rows)
        lga = lgb = None
        if cond_logits is not None:
            lga = cond_logits[r:r + nb][:, ca].T.contiguous()
            lgb = cond_logits[r + nb:r + nb + na][:, cb]
        r += na + nb
        lqa, lqb = marg[k, 0][ca], marg[k, 1][cb]
        g = golds[k]
        gi = None
        if g is not None:
            gi = (int((ca == int(g[0])).nonzero()[0]), int((cb == int(g[1])).nonzero()[0]))
        out.append(PairTables(a, b, ca, cb, lqa - torch.logsumexp(lqa, 0),
                              lqb - torch.logsumexp(lqb, 0), la_b, lb_a, lga, lgb, gi))
    return out


def pair_tables(model: MaskedLM, input_ids: list[int] | torch.Tensor, a: int, b: int,
                joint_size: int = 50, gold: tuple[int, int] | None = None,
                allow_special: bool = False, batch_size: int = 128,
                logits: bool | None = None) -> PairTables:
    """Unary-conditional tables for positions a, b of one input (the tokens at a and b are
    ignored: the marginals mask both, each conditional masks one and fills the other with a
    candidate). See :class:`PairTables` and :func:`pair_tables_batch`."""
    ids = input_ids.tolist() if isinstance(input_ids, torch.Tensor) else list(input_ids)
    return pair_tables_batch(model, [(ids, a, b)], joint_size, None if gold is None else [gold],
                             allow_special, batch_size, logits)[0]


def build_joints(t: PairTables, iterations: int = 50, tol: float | None = None,
                 pivot: int | None = None, converged_tol: float | None = None,
                 max_iterations: int = 20000) -> tuple[dict[str, torch.Tensor], AGInfo]:
    """Every joint of :data:`JOINT_NAMES` for one :class:`PairTables` (MRF-L only when logits are
    there). ``pivot``: HCB pivot index into A (default: the MLM mode at a). With
    ``converged_tol`` also "AG*": AG run until its total-variation change is ``<= converged_tol``
    (at most ``max_iterations``), to separate AG's optimum from the 50-iteration truncation.
    Returns ({name: log-joint}, AG convergence info)."""
    joints = {"MLM": mlm(t.log_qa, t.log_qb)}
    if t.logits_a_b is not None and t.logits_b_a is not None:
        joints["MRF-L"] = mrf_logits(t.logits_a_b, t.logits_b_a)
    joints["MRF"] = mrf(t.log_qa_b, t.log_qb_a)
    joints["HCB"] = hcb(t.log_qa_b, t.log_qb_a, pivot=pivot, log_qa=t.log_qa)
    joints["AG"], info = ag(t.log_qa_b, t.log_qb_a, iterations=iterations, tol=tol)
    if converged_tol is not None:
        joints["AG*"], _ = ag(t.log_qa_b, t.log_qb_a, iterations=max_iterations,
                              tol=converged_tol, trace=False)
    return joints, info


def decode_ag(model: MaskedLM, input_ids_list, joint_size: int = 50, iterations: int = 50,
              beam_size: int = 5, allow_special: bool = False, tol: float | None = None,
              batch_size: int = 128) -> list:
    """AG as a decoder for 2-token gaps: for each input (exactly two ``mask_id`` positions), rank
    the pairs of the top-``joint_size`` grid by the AG joint; return up to ``beam_size``
    ``infill.search.Hypothesis`` per input (tokens = ids at the two gap positions in position
    order, score = log AG joint), best first."""
    from infill.search import Hypothesis

    if beam_size < 1:
        raise ConfigError(f"beam size must be >= 1, got {beam_size}")
    items = []
    for ids in input_ids_list:
        seq = ids.tolist() if isinstance(ids, torch.Tensor) else [int(t) for t in ids]
        gaps = [p for p, t in enumerate(seq) if t == model.mask_id]
        if len(gaps) != 2:
            raise ConfigError(f"the AG scorer fills exactly two gap tokens, this input has "
                              f"{len(gaps)}")
        items.append((seq, gaps[0], gaps[1]))
    tables = pair_tables_batch(model, items, joint_size, allow_special=allow_special,
                               batch_size=batch_size, logits=False)
    results = []
    for t in tables:
        log_j, _ = ag(t.log_qa_b, t.log_qb_a, iterations=iterations, tol=tol)
        flat = log_j.reshape(-1)
        top = torch.topk(flat, min(beam_size, flat.numel()))
        nb = log_j.shape[1]
        results.append([
            Hypothesis(tokens=(int(t.cand_a[i // nb]), int(t.cand_b[i % nb])), score=float(s))
            for s, i in zip(top.values.tolist(), top.indices.tolist())])
    return results
