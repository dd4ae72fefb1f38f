"""Stability-optimal discount and gain for nDCG@k (generalizability theory)."""
from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from ._common import axes_or_new
from ._gtheory import GTheory, gtheory, variance_components

#: smallest gain of grade 1 relative to the largest gain (keeps every relevant grade relevant)
MIN_GAIN = 1e-3


def _check_ranking_inputs(labels, scores, k, mask=None):
    try:
        L = np.asarray(labels)
        S = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"labels and scores must be numeric arrays: {exc}") from None
    if L.ndim != 2:
        raise ValueError(f"labels must be 2-D (n_queries, n_docs); got shape {L.shape}")
    if not np.issubdtype(L.dtype, np.integer):
        if np.issubdtype(L.dtype, np.floating) and np.all(np.isfinite(L)) and np.all(L == np.round(L)):
            L = L.astype(np.int64)
        else:
            raise TypeError("labels must hold integer relevance grades")
    if S.ndim != 3:
        raise ValueError(f"scores must be 3-D (n_systems, n_queries, n_docs); got shape {S.shape}")
    if S.shape[1:] != L.shape:
        raise ValueError(f"scores shape {S.shape} does not match labels shape {L.shape} "
                         "(expected (n_systems,) + labels.shape)")
    if S.shape[0] < 2:
        raise ValueError(f"need at least 2 systems; got {S.shape[0]}")
    if np.isnan(S).any():
        raise ValueError("scores contain NaN")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}")
    if mask is None:
        mask = np.ones(L.shape, dtype=bool)
    else:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != L.shape:
            raise ValueError(f"mask shape {mask.shape} does not match labels shape {L.shape}")
    return L.astype(np.int64), S, int(k), mask


@dataclasses.dataclass(frozen=True)
class RankedGains:
    """Grades by rank of every system's top-k (ranked once), for cheap re-weighting.

    ``onehot[s, q, r, g-1]`` is 1 when system s puts a document of grade g at rank r+1
    of query q; ``ideal[q, r, g-1]`` the same for the ideal ranking.  Grades < 1 (and
    empty ranks) contribute no gain.  Only queries with a relevant document are kept
    (``queries``).
    """

    onehot: np.ndarray
    ideal: np.ndarray
    queries: np.ndarray
    max_grade: int
    k: int

    def ndcg(self, discount, gain) -> np.ndarray:
        r"""(n_systems, n_kept_queries) nDCG@k for per-rank ``discount`` (length k) and
        per-grade ``gain`` (length max_grade + 1, gain[0] ignored, taken as 0).

        .. math:: nDCG = \frac{\sum_r w_r\, g(\ell_r)}{\sum_r w_r\, g(\ell^*_r)}

        (0 where the ideal DCG is 0).
        """
        w = np.asarray(discount, dtype=np.float64)
        g = np.asarray(gain, dtype=np.float64)[1:]
        dcg = (self.onehot @ g) @ w  # sum_r w_r sum_g 1[l_r = g] gain_g
        idcg = (self.ideal @ g) @ w
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(idcg > 0, dcg / idcg, 0.0)
        return out


def rank_gains(labels, scores, k: int, mask=None) -> RankedGains:
    """Rank each (system, query) row once; see :class:`RankedGains`.

    Ties are broken pessimistically: among equal scores the lower label comes first.
    Documents with ``mask`` False (padding) are never ranked.
    """
    L, S, k, mask = _check_ranking_inputs(labels, scores, k, mask)
    n_sys, n_q, n_d = S.shape
    Lc = np.where(mask, np.maximum(L, 0), -1)  # grades < 0 count as 0; padding -1
    G = int(max(Lc.max(initial=0), 0))
    kk = min(k, n_d)
    Lb = np.broadcast_to(Lc, S.shape)
    # primary key: valid first; then score descending; then label ascending (pessimistic)
    order = np.lexsort((Lb, -S, np.broadcast_to(~mask, S.shape)), axis=-1)[..., :kk]
    ranked = np.take_along_axis(Lb, order, axis=-1)  # (n_sys, n_q, kk)
    ideal = -np.sort(-Lc, axis=-1)[:, :kk]
    keep = np.flatnonzero(ideal[:, 0] > 0)
    grades = np.arange(1, G + 1)
    onehot = np.zeros((n_sys, keep.size, k, G))
    onehot[:, :, :kk, :] = ranked[:, keep, :, None] == grades
    ideal_oh = np.zeros((keep.size, k, G))
    ideal_oh[:, :kk, :] = ideal[keep, :, None] == grades
    return RankedGains(onehot, ideal_oh, keep, G, k)


def standard_discounts(k: int) -> dict:
    """log2 (1/log2(r+1)), Zipf (1/r) and linear ((k-r+1)/k) discounts for ranks r = 1..k."""
    r = np.arange(1, k + 1, dtype=np.float64)
    return {"log2": 1.0 / np.log2(r + 1.0), "zipf": 1.0 / r, "linear": (k - r + 1.0) / k}


def standard_gain(max_grade: int, kind: str = "exponential") -> np.ndarray:
    """Gain per grade 0..max_grade: ``exponential`` 2**g - 1 or ``linear`` g."""
    g = np.arange(max_grade + 1, dtype=np.float64)
    if kind == "exponential":
        return 2.0**g - 1.0
    if kind == "linear":
        return g
    raise ValueError(f"gain must be 'exponential' or 'linear'; got {kind!r}")


@dataclasses.dataclass(frozen=True)
class DiscountReport:
    """One discount/gain setting with its G-study and topics needed for the target Phi."""

    name: str
    discount: np.ndarray
    gain: np.ndarray
    gtheory: GTheory
    phi: float
    topics_needed: float


@dataclasses.dataclass
class StabilityResult:
    """Result of :func:`stable_discount`: one :class:`DiscountReport` per setting.

    ``rows`` lists log2, Zipf, linear (with the baseline gain) and ``optimal``;
    ``optimal`` is the last row; ``target_phi`` the Phi target used for ``topics_needed``.
    """

    rows: list
    target_phi: float
    k: int
    n_topics: int
    success: bool
    message: str

    @property
    def optimal(self) -> DiscountReport:
        return self.rows[-1]

    def to_markdown(self, digits: int = 4) -> str:
        lines = [f"| discount | gain | var_system | var_topic | var_interaction | Phi({self.n_topics}) "
                 f"| topics for Phi >= {self.target_phi:g} |",
                 "|---|---|---:|---:|---:|---:|---:|"]
        for r in self.rows:
            g = r.gtheory
            gain = ", ".join(f"{x:.3g}" for x in r.gain[1:] / max(r.gain.max(), 1e-300))
            lines.append(f"| {r.name} | {gain} | {g.var_system:.{digits}g} | {g.var_topic:.{digits}g} | "
                         f"{g.var_interaction:.{digits}g} | {r.phi:.{digits}f} | {r.topics_needed} |")
        return "\n".join(lines) + "\n"

    def plot(self, ax=None, path=None):
        """Plot the discount curves (each scaled to weight 1 at rank 1)."""
        fig, ax = axes_or_new(ax)
        ranks = np.arange(1, self.k + 1)
        for r in self.rows:
            ax.plot(ranks, r.discount / r.discount[0], marker="o", markersize=3,
                    label=f"{r.name} (n = {r.topics_needed})")
        ax.set_xlabel("rank")
        ax.set_ylabel("discount weight (rank 1 = 1)")
        ax.set_title(f"nDCG@{self.k} discounts; topics needed for Phi >= {self.target_phi:g}")
        ax.legend()
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        return fig


def _report(name, rg, discount, gain, target):
    g = gtheory(rg.ndcg(discount, gain))
    return DiscountReport(name, np.asarray(discount, float), np.asarray(gain, float), g,
                          float(g.phi()), g.topics_needed(target))


def stable_discount(labels, scores, k: int = 10, *, optimize_gain: bool = True,
                    gain: str = "exponential", target_phi: float = 0.95, mask=None,
                    maxiter: int = 200) -> StabilityResult:
    r"""Find the per-rank discount (and per-grade gain) that make nDCG@k most stable.

    Stability is the dependability :math:`\Phi` of the systems x topics nDCG@k
    matrix (see :func:`gtheory`).  Since
    :math:`\Phi(n) = 1/(1 + (\sigma^2_t + \sigma^2_{st,e}) / (n \sigma^2_s))`, the
    weights that maximise :math:`\Phi(n)` are the same for every n.  The search is
    over

    * discounts :math:`w_1 = 1 \ge w_2 \ge \dots \ge w_k \ge 0`, written
      :math:`w_r = \sum_{j \ge r} \delta_j` with :math:`\delta \ge 0`, :math:`\sum\delta = 1`;
    * gains (if ``optimize_gain``) :math:`0 = g_0 < g_1 \le \dots \le g_G = 1`, written
      :math:`g_c = \sum_{j \le c} \epsilon_j` with :math:`\epsilon \ge 0`,
      :math:`\epsilon_1 \ge 10^{-3}`, :math:`\sum \epsilon = 1`; otherwise the ``gain``
      baseline is kept;

    maximising :math:`\Phi` with ``scipy.optimize.minimize(method="SLSQP")`` from
    the log2, Zipf and linear starting points (the best result is kept).  Every
    (system, query) row is ranked once (ties pessimistic: among equal scores the
    lower label first); each candidate is then a matrix product over the ranked
    grades.  Queries without a relevant document are left out (their nDCG is 0 for
    every weighting); grades below 0 count as 0.

    Parameters
    ----------
    labels : array_like of int, shape (n_queries, n_docs)
        Relevance grades.
    scores : array_like, shape (n_systems, n_queries, n_docs)
        Scores of several systems for the same documents (n_systems >= 2).
    k : int, default 10
        Cut-off.
    optimize_gain : bool, default True
        Also optimise the gain of each grade.
    gain : {'exponential', 'linear'}, default 'exponential'
        Gain of the baselines (:math:`2^g - 1` or g) and the starting gain.
    target_phi : float, default 0.95
        Target for the "topics needed" column.
    mask : array_like of bool, shape (n_queries, n_docs), optional
        False marks padding (no document).
    maxiter : int, default 200
        Iterations of each SLSQP run.

    Returns
    -------
    StabilityResult
        ``rows`` (log2, zipf, linear, optimal), ``optimal``, ``to_markdown()``, ``plot()``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.stats import stable_discount
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 3, size=(20, 15))
    >>> quality = np.array([0.5, 1.0, 1.5, 2.0])[:, None, None]
    >>> scores = quality * labels + rng.normal(size=(4, 20, 15))
    >>> res = stable_discount(labels, scores, k=5)
    >>> [r.name for r in res.rows]
    ['log2', 'zipf', 'linear', 'optimal']
    >>> res.optimal.phi >= max(r.phi for r in res.rows[:3]) - 1e-9
    True
    """
    from scipy.optimize import minimize

    if not 0.0 < float(target_phi) < 1.0:
        raise ValueError(f"target_phi must be in (0, 1); got {target_phi!r}")
    rg = rank_gains(labels, scores, k, mask)
    if rg.queries.size < 2:
        raise ValueError("need at least 2 queries with a relevant document")
    G = rg.max_grade
    base_gain = standard_gain(G, gain)
    discounts = standard_discounts(rg.k)
    rows = [_report(name, rg, w, base_gain, target_phi) for name, w in discounts.items()]

    def unpack(theta):
        delta = theta[:k]
        w = np.cumsum(delta[::-1])[::-1]  # w_r = sum_{j >= r} delta_j
        if optimize_gain:
            g = np.concatenate([[0.0], np.cumsum(theta[k:])])  # g_c = sum_{j <= c} eps_j
        else:
            g = base_gain
        return w, g

    def objective(theta):
        w, g = unpack(theta)
        M = rg.ndcg(w, g)
        _, _, _, vs, vt, ve = variance_components(M)
        total = vs + (vt + ve) / M.shape[1]
        return -(vs / total) if total > 0 else 0.0  # -Phi(n_topics)

    def to_theta(w, g):
        w = np.asarray(w, float) / w[0]
        delta = w - np.append(w[1:], 0.0)
        if not optimize_gain:
            return delta
        gg = np.asarray(g, float) / g[-1]
        return np.concatenate([delta, np.diff(gg)])

    bounds = [(0.0, 1.0)] * k
    constraints = [{"type": "eq", "fun": lambda th: np.sum(th[:k]) - 1.0}]
    if optimize_gain:
        bounds += [(MIN_GAIN, 1.0)] + [(0.0, 1.0)] * (G - 1)
        constraints.append({"type": "eq", "fun": lambda th: np.sum(th[k:]) - 1.0})
    best = None
    messages = []
    for w0 in discounts.values():
        x0 = np.clip(to_theta(w0, base_gain), [b[0] for b in bounds], [b[1] for b in bounds])
        res = minimize(objective, x0, method="SLSQP", bounds=bounds, constraints=constraints,
                       options={"maxiter": int(maxiter), "ftol": 1e-10})
        x = np.clip(res.x, [b[0] for b in bounds], [b[1] for b in bounds])
        val = objective(x)
        messages.append(str(res.message))
        if best is None or val < best[0]:
            best = (val, x, bool(res.success))
    # never report something worse than the best starting point
    start_best = min(rows, key=lambda r: -r.phi)
    w, g = unpack(best[1])
    opt = _report("optimal", rg, w, g, target_phi)
    if opt.phi < start_best.phi:
        opt = dataclasses.replace(start_best, name="optimal")
    rows.append(opt)
    return StabilityResult(rows, float(target_phi), rg.k, int(rg.queries.size), best[2], "; ".join(messages))
