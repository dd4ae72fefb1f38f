"""Robustness to incomplete judgments and agreement between measures."""
from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Mapping

import numpy as np

from ._common import new_figure, pair_indices

DEFAULT_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def pairwise_differences(matrix) -> np.ndarray:
    """Per-topic differences of every system pair: ``matrix[i] - matrix[j]`` for i < j.

    Parameters
    ----------
    matrix : array_like, shape (n_systems, n_topics)

    Returns
    -------
    numpy.ndarray, shape (n_systems * (n_systems - 1) / 2, n_topics)
        Rows in lexicographic pair order.

    Examples
    --------
    >>> from rankjit.stats import pairwise_differences
    >>> pairwise_differences([[1.0, 2.0], [0.5, 2.5], [0.0, 0.0]]).tolist()
    [[0.5, -0.5], [1.0, 2.0], [0.5, 2.5]]
    """
    from ._common import as_matrix

    M = as_matrix(matrix)
    I, J = pair_indices(M.shape[0])
    return M[I] - M[J]


@dataclasses.dataclass(frozen=True)
class Agreement:
    """Result of :func:`metric_agreement`.

    Attributes
    ----------
    pearson : float
        Pearson correlation of the paired differences (NaN if one side is constant).
    sign_agreement : float
        Share of (pair, topic) cells where sign(a) == sign(b) (0 counts as a sign).
    sign_agreement_nonzero : float
        The same over cells where both differences are non-zero (NaN if none).
    n : int
        Number of cells.
    """

    pearson: float
    sign_agreement: float
    sign_agreement_nonzero: float
    n: int


def metric_agreement(diff_a, diff_b) -> Agreement:
    r"""Agreement of two measures' per-topic differences over system pairs.

    ``diff_a`` and ``diff_b`` hold, for the same (system pair, topic) cells, the
    preference of one system over the other under measures A and B: a difference of
    per-topic scores (``pairwise_differences(matrix)``) or a pairwise measure such
    as RPP.  With :math:`a, b` the flattened cells:

    .. math:: r = \mathrm{pearson}(a, b), \qquad
              \mathrm{agree} = \frac1N \sum_c 1[\operatorname{sign} a_c = \operatorname{sign} b_c]

    Parameters
    ----------
    diff_a, diff_b : array_like, same shape
        E.g. (n_pairs, n_topics).

    Returns
    -------
    Agreement

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.stats import metric_agreement, pairwise_differences
    >>> ndcg = np.array([[0.5, 0.2, 0.9], [0.4, 0.3, 0.9], [0.1, 0.1, 0.5]])
    >>> ap = np.array([[0.4, 0.1, 0.8], [0.3, 0.3, 0.7], [0.2, 0.0, 0.4]])
    >>> a = metric_agreement(pairwise_differences(ndcg), pairwise_differences(ap))
    >>> round(a.sign_agreement, 4)
    0.8889
    """
    from scipy import stats as sps

    try:
        a = np.asarray(diff_a, dtype=np.float64).ravel()
        b = np.asarray(diff_b, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"diff_a and diff_b must be numeric arrays: {exc}") from None
    if np.shape(diff_a) != np.shape(diff_b):
        raise ValueError(f"diff_a and diff_b must have the same shape; got {np.shape(diff_a)} and {np.shape(diff_b)}")
    if a.size < 2:
        raise ValueError("need at least 2 (pair, topic) cells")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("diff_a and diff_b must not contain NaN or infinite values")
    sa, sb = np.sign(a), np.sign(b)
    nz = (sa != 0) & (sb != 0)
    if a.std() == 0 or b.std() == 0:
        r = float("nan")
    else:
        r = float(sps.pearsonr(a, b)[0])
    return Agreement(r, float(np.mean(sa == sb)),
                     float(np.mean(sa[nz] == sb[nz])) if nz.any() else float("nan"), int(a.size))


# ---------------------------------------------------------------------------
# incomplete judgments
# ---------------------------------------------------------------------------
def _resolve_measure(measure, pairwise):
    """A callable from a callable or a measure name (resolved through rankjit at call time)."""
    if callable(measure):
        return measure
    if not isinstance(measure, str):
        raise TypeError(f"a measure must be a callable or a measure name; got {measure!r}")
    if measure.upper() == "RPP":
        def rpp(labels, a, b):
            import rankjit

            fn = getattr(rankjit, "rpp", None)
            if fn is None:
                try:
                    from rankjit.preference import rpp as fn
                except ImportError:
                    raise ValueError("measure 'RPP' needs rankjit.rpp, which this installation lacks") from None
            return np.asarray(fn(labels, a, b), dtype=np.float64)

        rpp.pairwise = True
        return rpp
    if pairwise:
        raise ValueError(f"measure {measure!r} is not pairwise; only 'RPP' is")

    def by_name(labels, scores):
        import rankjit

        if not hasattr(rankjit, "evaluate"):
            raise ValueError(f"measure {measure!r} needs rankjit.evaluate, which this installation lacks")
        out = rankjit.evaluate(labels, scores, [measure], per_query=True)
        return np.asarray(out[measure], dtype=np.float64)

    return by_name


@dataclasses.dataclass
class RobustnessResult:
    """Result of :func:`judgment_robustness`.

    Attributes
    ----------
    fractions : numpy.ndarray, shape (n_fractions,)
        Shares of judged documents dropped.
    tau_system : dict measure -> ndarray (n_fractions, repeats)
        Kendall's tau-b between the system orderings (mean scores) under full and
        reduced judgments.
    tau_preference : dict measure -> ndarray (n_fractions, repeats)
        Kendall's tau-b between the per-query preferences (one per system pair and
        query) under full and reduced judgments.
    full : dict measure -> ndarray
        Per-query scores with full judgments: (n_systems, n_queries), or
        (n_pairs, n_queries) preferences for a pairwise measure.
    """

    fractions: np.ndarray
    tau_system: dict
    tau_preference: dict
    full: dict
    seed: int | None

    def summary(self):
        """Per measure, the mean tau over repeats: {measure: (tau_system, tau_preference)}."""
        with warnings.catch_warnings():  # all-NaN rows stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            return {m: (np.nanmean(self.tau_system[m], axis=1), np.nanmean(self.tau_preference[m], axis=1))
                    for m in self.tau_system}

    def to_dataframe(self):
        """Long-format pandas DataFrame: measure, fraction, repeat, tau_system, tau_preference."""
        import pandas as pd

        rows = []
        for m in self.tau_system:
            for fi, f in enumerate(self.fractions):
                for r in range(self.tau_system[m].shape[1]):
                    rows.append((m, f, r, self.tau_system[m][fi, r], self.tau_preference[m][fi, r]))
        return pd.DataFrame(rows, columns=["measure", "fraction", "repeat", "tau_system", "tau_preference"])

    def plot(self, path=None):
        """Mean Kendall tau (+/- one sd over repeats) against the share of judgments dropped.

        Two panels: system orderings and per-query preferences.  Returns the Figure
        (Agg canvas; pyplot untouched); saved to ``path`` when given.
        """
        fig = new_figure((10.0, 4.0))
        axes = [fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)]
        for ax, data, title in ((axes[0], self.tau_system, "system ordering"),
                                (axes[1], self.tau_preference, "per-query preferences")):
            for m, taus in data.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mean = np.nanmean(taus, axis=1)
                    sd = np.nanstd(taus, axis=1)
                ax.errorbar(self.fractions * 100, mean, yerr=sd, marker="o", markersize=3, capsize=2, label=m)
            ax.set_xlabel("judged documents dropped (%)")
            ax.set_ylabel("Kendall's tau vs full judgments")
            ax.set_title(title)
            ax.set_ylim(min(0.0, ax.get_ylim()[0]), 1.02)
            ax.legend()
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        return fig


def _r(x):
    """Round to 12 decimals so that floating-point noise does not break ties."""
    return np.round(x, 12)


def _drop(labels, judged, fraction, rng):
    """Labels with round(fraction * n_judged(q)) judged documents of each query set to 0."""
    u = rng.random(labels.shape)
    u[~judged] = np.inf
    ranks = np.argsort(np.argsort(u, axis=1, kind="stable"), axis=1, kind="stable")
    n_drop = np.rint(fraction * judged.sum(axis=1)).astype(np.int64)
    drop = (ranks < n_drop[:, None]) & judged
    return np.where(drop, 0, labels)


def _scores_for(fn, labels, S, I, J, pairwise):
    if pairwise:
        return np.vstack([np.asarray(fn(labels, S[i], S[j]), dtype=np.float64) for i, j in zip(I, J)])
    return np.vstack([np.asarray(fn(labels, S[s]), dtype=np.float64) for s in range(S.shape[0])])


def _system_means(X, I, J, n_sys, pairwise):
    if not pairwise:
        return X.mean(axis=1)
    # system score of a pairwise measure: mean preference against every other system
    pref = X.mean(axis=1)
    out = np.zeros(n_sys)
    np.add.at(out, I, pref)
    np.add.at(out, J, -pref)
    return out / (n_sys - 1)


def judgment_robustness(labels, scores, measures, *, fractions=DEFAULT_FRACTIONS, repeats: int = 5,
                        seed=None, judged=None, pairwise=None) -> RobustnessResult:
    r"""Robustness of measures to incomplete judgments (Diaz & Ferraro 2022 protocol).

    For each share f in ``fractions`` and each repeat, round(f x n_judged(q)) of the
    judged documents of every query are dropped at random; **dropped (unjudged)
    documents count as non-relevant (label 0)**.  Each measure is recomputed for
    every system and compared with the full-judgment values by Kendall's tau-b
    (``scipy.stats.kendalltau``, on values rounded to 12 decimals so that rounding
    noise does not break ties; NaN when one side is constant):

    * ``tau_system``: between the orderings of systems by mean score;
    * ``tau_preference``: between the per-query preferences of every system pair,
      :math:`\Delta_{q}(i, j) = m_q(i) - m_q(j)` (or the pairwise measure itself).

    Parameters
    ----------
    labels : array_like of int, shape (n_queries, n_docs)
        Full relevance judgments.
    scores : array_like, shape (n_systems, n_queries, n_docs)
        Scores of every system for the same documents.
    measures : callable, str, or dict name -> (callable or str)
        A callable ``fn(labels, scores) -> (n_queries,)`` per-query scores of one
        system; a pairwise callable ``fn(labels, scores_a, scores_b) -> (n_queries,)``
        (preference of a over b, e.g. RPP) with ``pairwise=True`` or an attribute
        ``fn.pairwise = True``; or a measure name resolved at call time through
        ``rankjit.evaluate(..., per_query=True)`` (``"RPP"`` through ``rankjit.rpp``).
    fractions : sequence of float in (0, 1), default 0.1, 0.2, ..., 0.9
        Shares of judged documents to drop.
    repeats : int, default 5
        Random draws per share.
    seed : int or None
        Seed; draw (f, r) uses ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(round(f*1e6), r)))``
        so results do not depend on the other shares requested.
    judged : array_like of bool, shape (n_queries, n_docs), optional
        Which documents are judged (default: all).
    pairwise : bool, optional
        Whether callables are pairwise (default: their ``pairwise`` attribute, else False).

    Returns
    -------
    RobustnessResult
        Taus as data, ``summary()``, ``to_dataframe()``, ``plot()``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.stats import judgment_robustness
    >>> def precision_at_3(labels, scores):
    ...     top = np.argsort(-scores, axis=1, kind="stable")[:, :3]
    ...     return (np.take_along_axis(labels, top, axis=1) > 0).mean(axis=1)
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 2, size=(8, 10))
    >>> scores = labels * np.arange(1, 5)[:, None, None] + rng.random((4, 8, 10))
    >>> res = judgment_robustness(labels, scores, {"P@3": precision_at_3}, fractions=[0.5], repeats=2, seed=0)
    >>> res.tau_system["P@3"].shape
    (1, 2)
    """
    from scipy import stats as sps

    try:
        L = np.asarray(labels)
        S = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"labels and scores must be numeric arrays: {exc}") from None
    if L.ndim != 2:
        raise ValueError(f"labels must be 2-D (n_queries, n_docs); got shape {L.shape}")
    if S.ndim != 3 or S.shape[1:] != L.shape:
        raise ValueError(f"scores must have shape (n_systems,) + labels.shape = (n, {L.shape[0]}, {L.shape[1]}); "
                         f"got {S.shape}")
    if S.shape[0] < 2:
        raise ValueError(f"need at least 2 systems; got {S.shape[0]}")
    if L.shape[0] < 2:
        raise ValueError(f"need at least 2 queries; got {L.shape[0]}")
    if judged is None:
        judged = np.ones(L.shape, dtype=bool)
    else:
        judged = np.asarray(judged, dtype=bool)
        if judged.shape != L.shape:
            raise ValueError(f"judged shape {judged.shape} does not match labels shape {L.shape}")
    fr = np.asarray(fractions, dtype=np.float64).ravel()
    if fr.size == 0 or not np.all((fr > 0) & (fr < 1)):
        raise ValueError(f"fractions must be a non-empty sequence of numbers in (0, 1); got {fractions!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer; got {repeats!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None; got {seed!r}")
    if not isinstance(measures, Mapping):
        name = measures if isinstance(measures, str) else getattr(measures, "__name__", "measure")
        measures = {name: measures}
    fns = {}
    for name, m in measures.items():
        fn = _resolve_measure(m, bool(pairwise))
        is_pw = bool(getattr(fn, "pairwise", False)) if pairwise is None else bool(pairwise)
        fns[str(name)] = (fn, is_pw)

    n_sys = S.shape[0]
    I, J = pair_indices(n_sys)
    full, full_means = {}, {}
    for name, (fn, pw) in fns.items():
        X = _scores_for(fn, L, S, I, J, pw)
        expected = (I.size if pw else n_sys, L.shape[0])
        if X.shape != expected:
            raise ValueError(f"measure {name!r} returned shape {X.shape}; expected {expected} "
                             "(one value per query)")
        full[name] = X
        full_means[name] = _system_means(X, I, J, n_sys, pw)
    entropy = np.random.SeedSequence().entropy if seed is None else int(seed)
    tau_sys = {name: np.full((fr.size, repeats), np.nan) for name in fns}
    tau_pref = {name: np.full((fr.size, repeats), np.nan) for name in fns}
    for fi, f in enumerate(fr):
        for r in range(repeats):
            rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(round(f * 1e6)), r)))
            Lr = _drop(L, judged, f, rng)
            for name, (fn, pw) in fns.items():
                X = _scores_for(fn, Lr, S, I, J, pw)
                means = _system_means(X, I, J, n_sys, pw)
                if pw:
                    a, b = full[name].ravel(), X.ravel()
                else:
                    a, b = (full[name][I] - full[name][J]).ravel(), (X[I] - X[J]).ravel()
                with warnings.catch_warnings():  # constant input -> NaN, kept as data
                    warnings.simplefilter("ignore")
                    tau_sys[name][fi, r] = sps.kendalltau(_r(full_means[name]), _r(means)).statistic
                    tau_pref[name][fi, r] = sps.kendalltau(_r(a), _r(b)).statistic
    return RobustnessResult(fr, tau_sys, tau_pref, full, seed)
