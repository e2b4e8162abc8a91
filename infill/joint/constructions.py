"""Pairwise joints from two conditional tables: the constructions of METHODS §2 (Torroba Hennigen &
Kim 2023) as pure functions::

      log_qa_b[i, j] = log q(w_a = A_i | w_b = B_j)     (each column a distribution over A)
      log_qb_a[i, j] = log q(w_b = B_j | w_a = A_i)     (each row a distribution over B)

:func:`mlm`, :func:`mrf`, :func:`mrf_logits`, :func:`hcb`, :func:`ag` each return the normalized
log-joint ``[|A|, |B|]`` in the dtype they were given (float64 in -> float64 out);
:func:`build_joints` makes every one of them from a
:class:`~infill.joint.conditional_tables.PairTables`.

Arnold–Gokhale, exactly what is computed. With the tables normalized over the candidates, AG
minimizes over joints J on A x B

    D(J) = sum_j KL(q_{a|b}(.|B_j) || J_{a|b}(.|B_j)) + sum_i KL(q_{b|a}(.|A_i) || J_{b|a}(.|A_i)),

(KL *from* the MLM's conditionals *to* the joint's, unweighted over conditioning tokens).
METHODS §2's update J <- normalize[(q_{a|b} + q_{b|a}) / (1/J_a + 1/J_b)] is right: it is the
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

from infill.lazy import torch

from infill.errors import ConfigError, InputError
from infill.fields import AG_MAX_ITERATIONS
from infill.joint.conditional_tables import PairTables

JOINT_NAMES = ("MLM", "MRF-L", "MRF", "HCB", "AG")

# AG_MAX_ITERATIONS (imported above): the cap on the iterations of AG run "to convergence" (AG*)

__all__ = ["JOINT_NAMES", "AG_MAX_ITERATIONS", "AGInfo", "mlm", "mrf", "mrf_logits", "hcb", "ag",
           "ag_objective", "conditionals", "build_joints"]


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


def normalize_columns(log_qa_b: torch.Tensor) -> torch.Tensor:
    """Renormalize every column (a distribution over A) of q_{a|b}."""
    return log_qa_b - torch.logsumexp(log_qa_b, dim=0, keepdim=True)


def normalize_rows(log_qb_a: torch.Tensor) -> torch.Tensor:
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


def hcb(log_qa_b: torch.Tensor, log_qb_a: torch.Tensor, pivot_index: int | None = None,
        log_qa: torch.Tensor | None = None) -> torch.Tensor:
    """Hammersley–Clifford–Besag joint with pivot w'_a = A[pivot_index]:

        q(w_a, w_b) ∝ q_{a|b}(w_a | w_b) / q_{a|b}(w'_a | w_b) · q_{b|a}(w_b | w'_a)

    (the factor 1/q_{b|a}(w'_b | w'_a) of the full identity is constant and cancels). Exact for
    compatible conditionals for any pivot with q_{a|b}(w'_a | w_b) > 0 for every w_b; invariant to
    renormalizing the tables over the candidates.

    ``pivot_index``: the pivot's index into A (not a token id). ``None`` -> the mode of the MLM joint at a, i.e. ``argmax(log_qa)``
    when the marginal ``log_qa`` is given, else index 0 (which is that mode for the candidate sets
    :func:`pair_tables` builds: A is sorted by the marginal, best first).
    """
    _check_pair(log_qa_b, log_qb_a, "hcb")
    n_a = log_qa_b.shape[0]
    if pivot_index is None:
        pivot_index = int(torch.argmax(log_qa)) if log_qa is not None else 0
    pivot = int(pivot_index)
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


def kl_divergence(log_p: torch.Tensor, log_q: torch.Tensor, dim: int) -> torch.Tensor:
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
    return float(kl_divergence(normalize_columns(log_qa_b), ja_b, 0).sum() + kl_divergence(normalize_rows(log_qb_a), jb_a, 1).sum())


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
    if isinstance(iterations, bool) or not isinstance(iterations, int) \
            or not 1 <= iterations <= AG_MAX_ITERATIONS:
        raise ConfigError(f"ag takes 1 to {AG_MAX_ITERATIONS:,} iterations, got {iterations!r}")
    la, lb = normalize_columns(log_qa_b), normalize_rows(log_qb_a)
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


def build_joints(t: PairTables, iterations: int = 50, tol: float | None = None,
                 pivot_index: int | None = None, converged_tol: float | None = None,
                 max_iterations: int = AG_MAX_ITERATIONS) -> tuple[dict[str, torch.Tensor], AGInfo]:
    """Every joint of :data:`JOINT_NAMES` for one :class:`PairTables` (MRF-L only when logits are
    there). ``pivot_index``: HCB pivot index into A (default: the MLM mode at a). With
    ``converged_tol`` also "AG*": AG run until its total-variation change is ``<= converged_tol``
    (at most ``max_iterations``), to separate AG's optimum from the 50-iteration truncation.
    Returns ({name: log-joint}, AG convergence info)."""
    joints = {"MLM": mlm(t.log_qa, t.log_qb)}
    if t.logits_a_b is not None and t.logits_b_a is not None:
        joints["MRF-L"] = mrf_logits(t.logits_a_b, t.logits_b_a)
    joints["MRF"] = mrf(t.log_qa_b, t.log_qb_a)
    joints["HCB"] = hcb(t.log_qa_b, t.log_qb_a, pivot_index=pivot_index, log_qa=t.log_qa)
    joints["AG"], info = ag(t.log_qa_b, t.log_qb_a, iterations=iterations, tol=tol)
    if converged_tol is not None:
        joints["AG*"], _ = ag(t.log_qa_b, t.log_qb_a, iterations=max_iterations,
                              tol=converged_tol, trace=False)
    return joints, info
