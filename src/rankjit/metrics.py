"""Public list measures, one function each; all share the engine of :func:`rankjit.evaluate`.

Every function takes ``labels`` and ``scores`` as ``(n_queries, n_docs)`` matrices
(padding declared by ``lengths=`` or ``mask=``) or as flat arrays with ``offsets=``,
and returns a float64 array with one value per query.  ``docs/metrics.md`` gives
every formula, default and convention.
"""
from __future__ import annotations

import numpy as np

from rankjit import _measures
from rankjit._api import run_list_measures
from rankjit._validation import as_batch, judged_batch, judged_flags_batch, positive_int, scan, ties_code


def _single(family, labels, scores, k, params, *, lengths, mask, offsets, ties, n_relevant=None, ideal_counts=None,
            judged=None):
    k = positive_int(k)
    tcode = ties_code(ties)
    batch = as_batch(labels, scores, lengths=lengths, mask=mask, offsets=offsets)
    scan(batch, check_scores=False)  # the engine tests the scores for NaN as it ranks each row
    if judged is not None:  # Judged@k: P@k of the judged flags
        batch = judged_flags_batch(batch, judged_batch(batch, judged).mask)
    m = _measures.Measure(family, family, k, params)
    request = _measures.Request(m, _measures.resolve(m, {}))
    return run_list_measures(batch, [request], tcode, n_relevant, ideal_counts, check_nan=True)[0]


def precision(labels, scores, k=None, *, rel=1, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Precision at k.

    ``P@k = (1/k) * sum_{r <= min(k, n)} [y_(r) >= rel]``: divided by ``k`` even when
    the row has fewer than ``k`` documents (trec_eval's rule); ``k=None`` divides by
    the row's length (0 for an empty row).

    Parameters
    ----------
    labels, scores : array-like
        ``(n_queries, n_docs)``, or flat with ``offsets=``.
    k : int, optional
        Cutoff; the whole row when None.
    rel : number, default 1
        A document is relevant when ``label >= rel``.
    lengths, mask, offsets
        Padding / ragged layout (see :func:`rankjit.evaluate`).
    ties : str, default "pessimistic"
        Tie rule: "pessimistic", "optimistic", "stable" or "average".

    Returns
    -------
    ndarray of float64, one value per query.

    Examples
    --------
    >>> import numpy as np, rankjit
    >>> rankjit.precision([[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]], [[5, 4, 3, 2, 1]] * 2, k=5).tolist()
    [0.4, 0.4]
    """
    return _single("P", labels, scores, k, {"rel": rel}, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def recall(labels, scores, k=None, *, rel=1, empty="zero", n_relevant=None, lengths=None, mask=None, offsets=None,
           ties="pessimistic"):
    """Recall at k: ``R@k = #{relevant in the top k} / R``.

    ``R`` is the number of relevant documents of the row, or ``n_relevant[q]`` when
    given (judged relevant documents the ranking did not retrieve count too).  A
    query with ``R = 0`` gets ``empty`` ("zero", "one" or "nan").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.recall([[1, 0, 1, 0]], [[4, 3, 2, 1]], k=2).tolist()
    [0.5]
    """
    return _single("R", labels, scores, k, {"rel": rel, "empty": empty}, lengths=lengths, mask=mask, offsets=offsets,
                   ties=ties, n_relevant=n_relevant)


def hit_rate(labels, scores, k=None, *, rel=1, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Success at k (hit rate): 1 when a relevant document is in the top k, else 0.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.hit_rate([[0, 0, 1], [0, 0, 1]], [[3, 2, 1], [1, 2, 3]], k=2).tolist()
    [0.0, 1.0]
    """
    return _single("Success", labels, scores, k, {"rel": rel}, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def rr(labels, scores, k=None, *, rel=1, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Reciprocal rank: ``1 / r`` of the first relevant document at rank ``r <= k``, else 0.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.rr([[0, 1, 0], [0, 0, 0]], [[3, 2, 1], [3, 2, 1]]).tolist()
    [0.5, 0.0]
    """
    return _single("RR", labels, scores, k, {"rel": rel}, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def ap(labels, scores, k=None, *, rel=1, denominator="r", empty="zero", n_relevant=None, lengths=None,
       mask=None, offsets=None, ties="pessimistic"):
    """Average precision at k.

    ``AP@k = sum_{r <= k} [y_(r) >= rel] * P@r / D`` with ``D = R`` (``denominator="r"``,
    the default: trec_eval's map_cut, ir_measures, ranx) or ``D = min(k, R)``
    (``denominator="min_k_r"``: CatBoost's MAP:top, the LTR presets).  Without ``k``
    both are ``R``.  ``R`` as in :func:`recall`.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.ap([[1, 0, 1, 0]], [[4, 3, 2, 1]]).tolist()  # (1/1 + 2/3) / 2
    [0.8333333333333333]
    """
    return _single("AP", labels, scores, k, {"rel": rel, "denominator": denominator, "empty": empty},
                   lengths=lengths, mask=mask, offsets=offsets, ties=ties, n_relevant=n_relevant)


def rprec(labels, scores, *, rel=1, empty="zero", n_relevant=None, lengths=None, mask=None, offsets=None,
          ties="pessimistic"):
    """R-precision: precision at rank R (the number of relevant documents).

    Examples
    --------
    >>> import rankjit
    >>> rankjit.rprec([[1, 0, 1, 0]], [[4, 3, 2, 1]]).tolist()
    [0.5]
    """
    return _single("Rprec", labels, scores, None, {"rel": rel, "empty": empty}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties, n_relevant=n_relevant)


def dcg(labels, scores, k=None, *, gain="linear", discount="log2", base=2.0, dcg=None, gains=None, lengths=None,
        mask=None, offsets=None, ties="pessimistic"):
    """Discounted cumulative gain at k: ``DCG@k = sum_{r <= k} gain(y_(r)) * disc(r)``.

    Parameters
    ----------
    gain : "linear", "exp2" or array, default "linear"
        ``y`` (trec_eval, ir_measures, scikit-learn, ranx's ndcg), ``2^y - 1`` (Burges et
        al.; LightGBM, XGBoost, ranx's ndcg_burges, the LTR presets), or ``gain[y]`` for
        integer grades.
    discount : "log2", "zipf", "logb" or array, default "log2"
        ``1/log2(r+1)``, ``1/r``, ``1`` for ``r < base`` then ``1/log_base(r)``, or
        per-rank weights (0 beyond the array's end).
    base : float, default 2.0
        Base of ``discount="logb"``.
    dcg : {"log2", "exp-log2"}, optional
        ir_measures' spelling of the gain: ``"log2"`` is ``gain="linear"``, ``"exp-log2"``
        ``gain="exp2"`` (with the log2 discount either way).  Not with another ``gain=``.
    gains : dict, optional
        ir_measures' (and trec_eval's ``ndcg.g=v``) gain map ``{grade: gain}``: a grade the
        map does not name keeps its own value as gain.  Integer grades only; not with ``gain=``
        or ``dcg="exp-log2"``.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.dcg([[3, 2]], [[2.0, 1.0]]).tolist()  # 3/log2(2) + 2/log2(3)
    [4.2618595071429155]
    >>> rankjit.dcg([[2, 1]], [[2.0, 1.0]], gains={2: 3}).tolist()  # 3/log2(2) + 1/log2(3)
    [3.6309297535714578]
    """
    params = {"gain": gain, "discount": discount, "base": base, "dcg": dcg, "gains": gains}
    return _single("DCG", labels, scores, k, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def ndcg(labels, scores, k=None, *, gain="linear", discount="log2", base=2.0, dcg=None, gains=None, empty="zero",
         ideal_counts=None, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Normalised DCG at k: ``nDCG@k = DCG@k / IDCG@k``.

    IDCG is the DCG of the row's labels sorted by gain, descending, or of the judged
    documents counted in ``ideal_counts`` (``(n_queries, n_grades)``).  A query whose
    IDCG is 0 gets ``empty``.  Gain and discount (``gain``, ``discount``, ``base``, ``dcg``,
    ``gains``) as in :func:`dcg`.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.ndcg([[0, 1]], [[2.0, 1.0]]).tolist()  # (1/log2 3) / 1
    [0.6309297535714575]
    """
    params = {"gain": gain, "discount": discount, "base": base, "dcg": dcg, "gains": gains, "empty": empty}
    return _single("nDCG", labels, scores, k, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties,
                   ideal_counts=ideal_counts)


def err(labels, scores, k=None, *, max_grade=4, utility="reciprocal", probabilities=False, lengths=None, mask=None,
        offsets=None, ties="pessimistic"):
    """Expected reciprocal rank (Chapelle et al. 2009).

    ``ERR@k = sum_{r <= k} u(r) R_r prod_{i < r} (1 - R_i)`` with
    ``R(y) = (2^y - 1) / 2^max_grade`` (or ``R = y`` with ``probabilities=True``) and
    ``u(r) = 1/r`` (``utility="reciprocal"``) or ``1/log2(r+1)`` (``"log2"``).
    A label above ``max_grade`` is an error.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.err([[4, 0]], [[2.0, 1.0]]).tolist()  # (2^4 - 1) / 2^4
    [0.9375]
    """
    params = {"max_grade": max_grade, "utility": utility, "probabilities": probabilities}
    return _single("ERR", labels, scores, k, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def pfound(labels, scores, k=None, *, p_break=0.15, max_grade=4, probabilities=False, prel=None, lengths=None,
           mask=None, offsets=None, ties="pessimistic"):
    """pFound (Yandex): ``sum_{r <= k} pLook_r * pRel_r``.

    ``pLook_1 = 1``, ``pLook_r = pLook_{r-1} (1 - pRel_{r-1}) (1 - p_break)``;
    ``pRel`` from grades as in :func:`err`, the labels themselves
    (``probabilities=True``), or ``prel[y]`` per grade.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.pfound([[0, 1]], [[2.0, 1.0]], probabilities=True).tolist()  # 0.85 * 1
    [0.85]
    """
    params = {"p_break": p_break, "max_grade": max_grade, "probabilities": probabilities, "prel": prel}
    return _single("pFound", labels, scores, k, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def rbp(labels, scores, k=None, *, p=0.8, rel=None, gain="linear", scale="query", ideal_counts=None, lengths=None,
        mask=None, offsets=None, ties="pessimistic"):
    """Rank-biased precision (Moffat & Zobel 2008): ``RBP@k = (1 - p) sum_{r <= k} g_r p^(r-1)``.

    A user reads rank 1 and goes on to the next rank with probability ``p``
    (persistence); RBP is the expected gain per document read.  No normalisation
    by the query: documents beyond the ranking add nothing, and a cutoff truncates.
    The gain ``g_r`` of the document at rank r is ``gain(y)``, the label itself
    (``gain="linear"``) or ``gain[y]`` (an array by grade), divided by the query's top
    gain with ``scale="query"`` (the default: trec_eval's ``rbp``, ``y / top grade``; the
    top over the query's labels, or over ``ideal_counts``, judged documents retrieved or
    not, when given), as it is with ``scale="none"`` (ranx's ``rbp``).  With ``rel=``
    (ir_measures' ``RBP(rel=...)``) the gains are binary, ``1`` when ``y >= rel``.

    Parameters
    ----------
    labels, scores : array-like
        ``(n_queries, n_docs)``, or flat with ``offsets=``.
    k : int, optional
        Cutoff (no renormalisation); the whole row when None.
    p : float, default 0.8
        Persistence, in [0, 1] (trec_eval's default is 0.9).
    rel : number, optional
        Binary gains at this threshold; excludes a gain array.
    gain : "linear" or array, default "linear"
    scale : {"query", "none"}, default "query"
        Divide the gains by the query's top gain (a query whose top gain is not above 0
        gets 0), or not.
    ideal_counts : (n_queries, n_grades) int array, optional
        Judged documents per grade: the top gain for ``scale="query"``.
    lengths, mask, offsets, ties
        As in :func:`rankjit.evaluate`.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.rbp([[1, 0, 2]], [[3.0, 2.0, 1.0]], p=0.5).tolist()  # 0.5 * (1/2 + 0 + 1 * 0.5^2)
    [0.375]
    >>> rankjit.rbp([[1, 0, 2]], [[3.0, 2.0, 1.0]], p=0.5, scale="none").tolist()  # 0.5 * (1 + 0 + 2 * 0.5^2)
    [0.75]
    >>> rankjit.rbp([[1, 0, 2]], [[3.0, 2.0, 1.0]], p=0.5, rel=1).tolist()  # 0.5 * (1 + 0 + 1 * 0.5^2)
    [0.625]
    """
    params = {"p": p, "rel": rel, "gain": gain, "scale": scale}
    return _single("RBP", labels, scores, k, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties,
                   ideal_counts=ideal_counts)


def set_precision(labels, scores, *, rel=1, relative=False, n_relevant=None, lengths=None, mask=None, offsets=None,
                  ties="pessimistic"):
    """Set precision: the relevant share of the row, every document of it retrieved.

    ``SetP = h / n`` (``h`` relevant documents among the row's ``n``; 0 for an empty
    row): trec_eval's set_P, ir_measures' SetP.  ``relative=True`` divides by
    ``min(n, R)`` instead (:func:`set_relative_precision`).  The order of the row does
    not matter; ``ties`` is accepted for a uniform signature.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.set_precision([[1, 0, 1, 0]], [[4, 3, 2, 1]]).tolist()  # 2 / 4
    [0.5]
    """
    return _single("SetP", labels, scores, None, {"rel": rel, "relative": relative}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties, n_relevant=n_relevant)


def set_recall(labels, scores, *, rel=1, empty="zero", n_relevant=None, lengths=None, mask=None, offsets=None,
               ties="pessimistic"):
    """Set recall: ``SetR = h / R``, the relevant documents of the row over those of the query.

    ``R`` as in :func:`recall` (the row's, or ``n_relevant=``); a query with ``R = 0``
    gets ``empty``.  trec_eval's set_recall, ir_measures' SetR: recall without a cutoff.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.set_recall([[1, 0, 1, 0]], [[4, 3, 2, 1]], n_relevant=[4]).tolist()  # 2 / 4
    [0.5]
    """
    return _single("SetR", labels, scores, None, {"rel": rel, "empty": empty}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties, n_relevant=n_relevant)


def set_f(labels, scores, *, rel=1, beta=1.0, empty="zero", n_relevant=None, lengths=None, mask=None, offsets=None,
          ties="pessimistic"):
    """Set F: ``(1 + beta) P R / (beta P + R)`` of the set precision P and set recall R.

    As trec_eval's set_F and ir_measures' SetF, ``beta`` weighs recall against precision
    as it is given (it is not squared): ``beta=1`` is the harmonic mean.  0 when no
    relevant document is in the row; ``empty`` when the query has none (``R = 0``).

    Examples
    --------
    >>> import rankjit
    >>> rankjit.set_f([[1, 0, 1, 0]], [[4, 3, 2, 1]], n_relevant=[4]).tolist()  # P = R = 1/2
    [0.5]
    """
    return _single("SetF", labels, scores, None, {"rel": rel, "beta": beta, "empty": empty}, lengths=lengths,
                   mask=mask, offsets=offsets, ties=ties, n_relevant=n_relevant)


def set_ap(labels, scores, *, rel=1, empty="zero", n_relevant=None, lengths=None, mask=None, offsets=None,
           ties="pessimistic"):
    """Set AP: ``h^2 / (n R)``, set precision times set recall (trec_eval's set_map, ir_measures' SetAP).

    Examples
    --------
    >>> import rankjit
    >>> rankjit.set_ap([[1, 0, 1, 0]], [[4, 3, 2, 1]], n_relevant=[4]).tolist()  # (2 / 4) * (2 / 4)
    [0.25]
    """
    return _single("SetAP", labels, scores, None, {"rel": rel, "empty": empty}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties, n_relevant=n_relevant)


def set_relative_precision(labels, scores, *, rel=1, empty="zero", n_relevant=None, lengths=None, mask=None,
                           offsets=None, ties="pessimistic"):
    """Relative set precision: ``h / min(n, R)``, the best a row of ``n`` documents can reach being 1.

    trec_eval's set_relative_P, ir_measures' SetRelP (``SetP(relative=True)``).

    Examples
    --------
    >>> import rankjit
    >>> rankjit.set_relative_precision([[1, 0, 0, 0]], [[4, 3, 2, 1]], n_relevant=[2]).tolist()  # 1 / min(4, 2)
    [0.5]
    """
    return _single("SetRelP", labels, scores, None, {"rel": rel, "empty": empty}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties, n_relevant=n_relevant)


def interpolated_precision(labels, scores, recall, *, rel=1, rounding="trec_eval9", empty="zero", n_relevant=None,
                           lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Interpolated precision at a recall level: ``IPrec@x = max_{j >= c} j / rank_j``.

    ``c`` relevant documents reach the level ``x``: ``c = floor(x R + 0.9)``
    (``rounding="trec_eval9"``, the default: trec_eval 9, pytrec_eval and ir_measures) or
    ``c = lround(x R)``, half away from zero (``"trec_eval10"``: trec_eval 10's
    iprec_at_recall).  ``rank_j`` is the rank of the j-th relevant document; the maximum
    runs over ``j >= max(c, 1)`` and is 0 when fewer than ``c`` relevant documents are
    ranked.  ``empty`` when ``R = 0``.  ``ties="average"`` is not available.
    ir_measures writes it ``IPrec@0.2``.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.interpolated_precision([[1, 0, 0, 1]], [[4, 3, 2, 1]], 0.5).tolist()  # max(1/1, 2/4)
    [1.0]
    >>> rankjit.interpolated_precision([[1, 0, 0, 1]], [[4, 3, 2, 1]], 1.0).tolist()  # 2/4
    [0.5]
    """
    params = {"recall": recall, "rel": rel, "rounding": rounding, "empty": empty}
    return _single("IPrec", labels, scores, None, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties,
                   n_relevant=n_relevant)


def num_q(labels, scores, *, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """1 per query: ``evaluate`` sums it to the number of queries (trec_eval's num_q, ir_measures' NumQ).

    Examples
    --------
    >>> import rankjit
    >>> labels, scores = [[1, 0], [0, 0]], [[2, 1], [2, 1]]
    >>> rankjit.num_q(labels, scores).tolist(), rankjit.evaluate(labels, scores, "NumQ")
    ([1.0, 1.0], {'NumQ': 2.0})
    """
    return _single("NumQ", labels, scores, None, {}, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def num_ret(labels, scores, *, rel=None, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """The documents of each row (with ``rel=``: those with ``label >= rel``); ``evaluate`` sums it.

    trec_eval's num_ret, ir_measures' NumRet.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.num_ret([[1, 0, 2]], [[3, 2, 1]]).tolist(), rankjit.num_ret([[1, 0, 2]], [[3, 2, 1]], rel=2).tolist()
    ([3.0], [1.0])
    """
    return _single("NumRet", labels, scores, None, {"rel": rel}, lengths=lengths, mask=mask, offsets=offsets,
                   ties=ties)


def num_rel(labels, scores, *, rel=1, n_relevant=None, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """R, the relevant documents of each query (the row's, or ``n_relevant=``); ``evaluate`` sums it.

    trec_eval's num_rel, ir_measures' NumRel.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.num_rel([[1, 0, 2]], [[3, 2, 1]]).tolist()
    [2.0]
    >>> rankjit.num_rel([[1, 0, 2]], [[3, 2, 1]], n_relevant=[5]).tolist()
    [5.0]
    """
    return _single("NumRel", labels, scores, None, {"rel": rel}, lengths=lengths, mask=mask, offsets=offsets,
                   ties=ties, n_relevant=n_relevant)


def num_rel_ret(labels, scores, *, rel=1, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """The relevant documents of each row; ``evaluate`` sums it (trec_eval's num_rel_ret, ir_measures' NumRelRet).

    Examples
    --------
    >>> import rankjit
    >>> rankjit.num_rel_ret([[1, 0, 2]], [[3, 2, 1]], rel=2).tolist()
    [1.0]
    """
    return _single("NumRelRet", labels, scores, None, {"rel": rel}, lengths=lengths, mask=mask, offsets=offsets,
                   ties=ties)


def judged_share(labels, scores, k=None, *, judged, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """The judged share of the top k: ``Judged@k = sum_{r <= min(k, n)} judged_(r) / min(k, n)``.

    ir_measures' Judged@k (it divides by the documents of the top k, not by k; 0 for an
    empty row).  ``judged`` (bool, laid out as ``labels``, True = judged) is ranked as
    labels would be: the judged flags take the labels' place, under the same tie rule
    (``"pessimistic"`` puts unjudged documents first among tied scores).  An unjudged
    document must have label 0.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.judged_share([[1, 0, 0]], [[3, 2, 1]], 2, judged=[[True, False, True]]).tolist()
    [0.5]
    """
    return _single("Judged", labels, scores, k, {}, lengths=lengths, mask=mask, offsets=offsets, ties=ties,
                   judged=judged)


def rbp_residual(labels, scores, k=None, *, judged, p=0.8, all_judged="tail", lengths=None, mask=None,
                 offsets=None, ties="pessimistic"):
    """RBP's residual (Moffat & Zobel 2008): how much :func:`rbp` could still rise.

    ``RBPResidual@k = (1 - p) sum_{r <= d, unjudged} p^(r-1) + p^d``, ``d = min(k, n)``
    (``d = n`` without ``k``): the weight of the unjudged documents read plus that of every
    rank past ``d``, equal to ``1 - (1 - p) sum_{r <= d, judged} p^(r-1)``.  With gains in
    [0, 1] (``rbp``'s default ``scale="query"``, or ``rel=``), ``RBP`` and ``RBP + residual``
    bracket the value complete judgments would give.  An empty row gets 1.  ``judged`` (bool,
    laid out as ``labels``, True = judged) is ranked as labels would be, under the same tie
    rule (``"pessimistic"`` puts unjudged documents first among tied scores); an unjudged
    document must have label 0.  trec_eval's ``rbp_resid`` differs on one point: it reports
    0 for a ranking without an unjudged document (``rankjit trec_eval`` does too);
    ``all_judged="zero"`` gives that.

    Parameters
    ----------
    labels, scores : array-like
        ``(n_queries, n_docs)``, or flat with ``offsets=``.
    k : int, optional
        Cutoff; the whole row when None.
    judged : array-like of bool
        The judged documents, laid out as ``labels``.
    p : float, default 0.8
        Persistence, in [0, 1], as in :func:`rbp` (trec_eval's default is 0.9).
    all_judged : {"tail", "zero"}, default "tail"
        The value when every document of the top ``d`` is judged: ``"tail"``, ``p^d`` (the
        definition: the ranks past ``d`` may still be relevant); ``"zero"``, 0 (trec_eval's
        ``rbp_resid``, where ``d`` is the whole ranking).  With ``ties="average"``, the
        expectation over the orders of tied documents.
    lengths, mask, offsets, ties
        As in :func:`rankjit.evaluate`.

    Examples
    --------
    >>> import rankjit
    >>> # ranks 1 and 3 judged, rank 2 not: 0.5 * 0.5 (rank 2) + 0.5^3 (past the ranking)
    >>> rankjit.rbp_residual([[1, 0, 0]], [[3, 2, 1]], judged=[[True, False, True]], p=0.5).tolist()
    [0.375]
    >>> # all judged: p^3 by the definition, 0 by trec_eval's convention
    >>> rankjit.rbp_residual([[1, 0, 0]], [[3, 2, 1]], judged=[[True, True, True]], p=0.5).tolist()
    [0.125]
    >>> rankjit.rbp_residual([[1, 0, 0]], [[3, 2, 1]], judged=[[True, True, True]], p=0.5, all_judged="zero").tolist()
    [0.0]
    """
    return _single("RBPResidual", labels, scores, k, {"p": p, "all_judged": all_judged}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties, judged=judged)


def offsets_from_qids(qids):
    """CSR offsets from a query-id column, sorted or not.

    Returns ``(offsets, order, unique_qids)``: ``order`` is None when equal ids
    already stand in contiguous runs (offsets then describe the rows as given),
    otherwise an int64 stable permutation that groups the rows (apply it to labels
    and scores: ``labels[order]``); ``unique_qids`` are the query ids in batch order.

    Examples
    --------
    >>> import rankjit
    >>> off, order, ids = rankjit.offsets_from_qids(["b", "b", "a", "a", "a"])
    >>> off.tolist(), order, ids.tolist()
    ([0, 2, 5], None, ['b', 'a'])
    """
    q = np.asarray(qids)
    if q.ndim != 1:
        raise ValueError(f"qids must be 1-D, got shape {q.shape}")
    n = q.shape[0]
    if n == 0:
        raise ValueError("empty batch: qids is empty")
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate(([0], change))
    firsts = q[starts]
    if np.unique(firsts).shape[0] == firsts.shape[0]:
        return np.append(starts, n).astype(np.int64), None, firsts
    order = np.argsort(q, kind="stable").astype(np.int64)
    sq = q[order]
    change = np.flatnonzero(sq[1:] != sq[:-1]) + 1
    starts = np.concatenate(([0], change))
    return np.append(starts, n).astype(np.int64), order, sq[starts]


def _judgments(family, labels, scores, params, *, judged, pooled, n_relevant, ideal_counts, lengths, mask, offsets,
               ties):
    from rankjit._api import evaluate

    name = f"{family}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"
    return evaluate(labels, scores, [name], judged=judged, pooled=pooled, n_relevant=n_relevant,
                    ideal_counts=ideal_counts, lengths=lengths, mask=mask, offsets=offsets, ties=ties,
                    per_query=True)[name]


def bpref(labels, scores, *, judged=None, rel=1, empty="zero", n_relevant=None, ideal_counts=None, lengths=None,
          mask=None, offsets=None, ties="pessimistic"):
    """Binary preference (Buckley & Voorhees 2004), as trec_eval's bpref and ir_measures' Bpref.

    ``Bpref = (1/R) sum_{relevant d in the row} (1 - min(n_d, R) / min(N, R))``, a term 1
    when ``n_d = 0``: ``n_d`` judged non-relevant documents (label < ``rel``) ranked above
    ``d``, ``R`` the query's relevant documents and ``N`` its judged non-relevant ones.
    Unjudged documents (``judged=False``) take no part.  ``R`` and ``N`` are the row's, or
    from outside: ``n_relevant`` (R) and ``ideal_counts`` (judged documents per grade,
    retrieved or not: ``N`` counts the grades below ``rel``).  A query with ``R = 0`` gets
    ``empty``.  ``ties="average"`` is refused.

    Examples
    --------
    >>> import rankjit
    >>> # ranked: relevant, unjudged, non-relevant, relevant: (1 + (1 - 1/1)) / 2
    >>> rankjit.bpref([[1, 0, 0, 1]], [[4, 3, 2, 1]], judged=[[True, False, True, True]]).tolist()
    [0.5]
    """
    return _judgments("Bpref", labels, scores, {"rel": rel, "empty": empty}, judged=judged, pooled=None,
                      n_relevant=n_relevant, ideal_counts=ideal_counts, lengths=lengths, mask=mask, offsets=offsets,
                      ties=ties)


def infap(labels, scores, *, judged=None, pooled=None, rel=1, empty="zero", n_relevant=None, ideal_counts=None,
          lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Inferred average precision (Yilmaz & Aslam 2006), as trec_eval's infAP and ir_measures' infAP.

    ``infAP = (1/R) sum_{relevant d} E[P@rank(d)]``: at the r-th relevant document, of
    0-based rank ``j``, with ``n`` judged non-relevant and ``u`` pooled but unjudged
    documents above it, ``1`` when ``j = 0``, else
    ``1/(j+1) + (j/(j+1)) ((r-1+n+u)/j) ((r-1+eps)/(r-1+n+2 eps))`` (eps = 1e-5).
    ``judged`` marks the judged documents (None: all), ``pooled`` the documents of the
    judging pool (judged or not; trec_eval's negative grades are pooled but unjudged).
    ``R`` is the row's or ``n_relevant`` / ``ideal_counts``; ``R = 0`` gives ``empty``.
    With every document judged it is AP.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.infap([[1, 0, 1]], [[3, 2, 1]]).tolist() == rankjit.ap([[1, 0, 1]], [[3, 2, 1]]).tolist()
    True
    """
    return _judgments("infAP", labels, scores, {"rel": rel, "empty": empty}, judged=judged, pooled=pooled,
                      n_relevant=n_relevant, ideal_counts=ideal_counts, lengths=lengths, mask=mask, offsets=offsets,
                      ties=ties)


# ---- the C/W/L measures (ir_measures' cwl_eval provider) --------------------------------------------------------


def _cwl(family, labels, scores, k, params, lengths, mask, offsets, ties):
    return _single(family, labels, scores, k, params, lengths=lengths, mask=mask, offsets=offsets, ties=ties)


def sdcg(labels, scores, k=None, *, max_rel, min_rel=0, dcg="log2", lengths=None, mask=None, offsets=None,
         ties="pessimistic"):
    """Scaled DCG: ``SDCG@k = sum_{i <= N} g_i / log2(i + 1)  /  sum_{i <= N} 1 / log2(i + 1)``, ``N = min(k, 1000)``.

    DCG@k over the DCG of N documents of the top grade, whether the query has them or
    not (no ideal ranking): ir_measures' ``SDCG(max_rel=)@k`` (cwl_eval's NDCG, ``C_i =
    log(i + 1) / log(i + 2)`` for ``i < k``).  Without ``k``, N = 1000 (ir_measures
    requires a cutoff).  ``dcg`` is ``"log2"`` only.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import math, rankjit
    >>> got = float(rankjit.sdcg([[0, 4]], [[2, 1]], 3, max_rel=4)[0])  # gains 0, 1 at ranks 1, 2 of 3
    >>> abs(got - (1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))) < 1e-15
    True
    """
    return _cwl("SDCG", labels, scores, k, {"max_rel": max_rel, "min_rel": min_rel, "dcg": dcg}, lengths, mask,
                offsets, ties)


def insq(labels, scores, *, max_rel, min_rel=0, T=1.0, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """INSQ (Moffat, Scholer & Thomas 2012): C/W/L with ``C_i = ((i + 2T - 1) / (i + 2T))^2``.

    ``T`` is the gain the user wants (> 0); ``C_i`` depends on the rank alone, so
    ``reach_i = (2T / (i + 2T - 1))^2``, over the 1000 ranks of cwl_eval.  ir_measures'
    ``INSQ(T=, max_rel=)``; no cutoff.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> w = [(2.0 / (i + 1.0)) ** 2 for i in range(1, 1001)]  # reach_i for T = 1
    >>> abs(float(rankjit.insq([[0, 4]], [[2, 1]], max_rel=4)[0]) - w[1] / sum(w)) < 1e-15
    True
    """
    return _cwl("INSQ", labels, scores, None, {"T": T, "max_rel": max_rel, "min_rel": min_rel}, lengths, mask, offsets,
                ties)


def inst(labels, scores, *, max_rel, min_rel=0, T=1.0, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """INST (Moffat, Bailey, Scholer & Thomas 2015): C/W/L with ``C_i = ((x - 1) / x)^2``, ``x = i + T + T_i``.

    ``T_i = T - CG_i`` is the gain still wanted after rank i (``CG_i = g_1 + ... + g_i``):
    the user is patient while little gain has come.  ir_measures' ``INST(T=, max_rel=)``;
    no cutoff.  ``ties="average"`` is refused.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.inst([[4, 0]], [[2, 1]], max_rel=4, T=0.5).tolist()  # x_1 = 1 + 0.5 - 0.5 = 1: C_1 = 0
    [1.0]
    """
    return _cwl("INST", labels, scores, None, {"T": T, "max_rel": max_rel, "min_rel": min_rel}, lengths, mask, offsets,
                ties)


def bpm(labels, scores, k=None, *, max_rel, min_rel=0, T=1.0, lengths=None, mask=None, offsets=None,
        ties="pessimistic"):
    """Bejeweled player model (Zhang et al. 2017), static: ``BPM@k = CG_n / n``.

    The user reads until the cumulative gain reaches ``T`` or ``N = min(k, 1000)``
    documents are read: ``n = min(first i with CG_i >= T, N)`` (C/W/L with ``C_i = 1``
    while ``CG_i < T`` and ``i < k``).  ir_measures' ``BPM(T=, max_rel=)@k``; without
    ``k``, N = 1000 (ir_measures requires a cutoff).  ``ties="average"`` is refused.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.bpm([[4, 0, 2]], [[3, 2, 1]], 20, max_rel=4, T=1.5).tolist()  # CG_3 = 1 + 0 + 0.5 reaches T
    [0.5]
    """
    return _cwl("BPM", labels, scores, k, {"T": T, "max_rel": max_rel, "min_rel": min_rel}, lengths, mask, offsets,
                ties)


def nerr8(labels, scores, k=None, *, max_rel, min_rel=0, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Not-quite ERR, Eq. 8 (Azzopardi, Mackenzie & Moffat 2021): C/W/L with ``C_i = 1 - g_i`` for ``i < k``.

    ERR's stopping (the user stops at rank i with probability g_i) as a C/W/L measure,
    truncated at k: ``reach_i = prod_{j<i} (1 - g_j)`` for ``i <= N = min(k, 1000)``.
    ir_measures' ``NERR8(max_rel=)@k``; without ``k``, N = 1000 (ir_measures requires a
    cutoff).  ``ties="average"`` is refused.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.nerr8([[2, 4]], [[2, 1]], 2, max_rel=4).tolist()  # (0.5 + 0.5 * 1) / (1 + 0.5)
    [0.6666666666666666]
    """
    return _cwl("NERR8", labels, scores, k, {"max_rel": max_rel, "min_rel": min_rel}, lengths, mask, offsets, ties)


def nerr9(labels, scores, k=None, *, max_rel, min_rel=0, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Not-quite ERR, Eq. 9: C/W/L with ``C_i = i / (i + 1) (1 - g_i)`` for ``i < k``.

    NERR8 with RR's ``1/i`` folded into the continuation: ``reach_i = (1/i) prod_{j<i} (1 -
    g_j)`` for ``i <= N = min(k, 1000)``.  ir_measures' ``NERR9(max_rel=)@k``; without ``k``,
    N = 1000.  ``ties="average"`` is refused.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.nerr9([[2, 4]], [[2, 1]], 2, max_rel=4).tolist()  # C_1 = 1/2 * 0.5: (0.5 + 0.25 * 1) / (1 + 0.25)
    [0.6]
    """
    return _cwl("NERR9", labels, scores, k, {"max_rel": max_rel, "min_rel": min_rel}, lengths, mask, offsets, ties)


def nerr10(labels, scores, *, max_rel, min_rel=0, p=0.9, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Not-quite ERR, Eq. 10: C/W/L with ``C_i = p (1 - g_i)`` (RBP's persistence times ERR's stopping).

    Over the 1000 ranks of cwl_eval; ir_measures' ``NERR10(p=, max_rel=)``, no cutoff.
    ``ties="average"`` is refused.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.nerr10([[0, 4]], [[2, 1]], max_rel=4).tolist()  # reach 1, 0.9, then 0: 0.9 / (1 + 0.9)
    [0.4736842105263158]
    """
    return _cwl("NERR10", labels, scores, None, {"p": p, "max_rel": max_rel, "min_rel": min_rel}, lengths, mask,
                offsets, ties)


def nerr11(labels, scores, *, max_rel, min_rel=0, T=1.0, lengths=None, mask=None, offsets=None, ties="pessimistic"):
    """Not-quite ERR, Eq. 11: C/W/L with ``C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i)`` (INSQ times ERR's stopping).

    Over the 1000 ranks of cwl_eval; ir_measures' ``NERR11(T=, max_rel=)``, no cutoff.
    ``ties="average"`` is refused.

    Gains by integer grade, ``g = (clip(y, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``
    (``0 <= min_rel < max_rel``; ``max_rel`` is required); ranks past the row's end, up to
    cwl_eval's 1000, count with gain 0 (docs/metrics.md, "C/W/L measures").

    Examples
    --------
    >>> import rankjit
    >>> rankjit.nerr11([[0, 4]], [[2, 1]], max_rel=4).tolist() == [(2 / 3) ** 2 / (1 + (2 / 3) ** 2)]
    True
    """
    return _cwl("NERR11", labels, scores, None, {"T": T, "max_rel": max_rel, "min_rel": min_rel}, lengths, mask,
                offsets, ties)


# ---- ir_measures' Compat and Accuracy -----------------------------------------------------------------------------


def compatibility(labels, scores, *, p=0.95, normalize=True, empty="zero", ideal_counts=None, lengths=None, mask=None,
                  offsets=None, ties="pessimistic"):
    """Compatibility (Clarke, Vtyurina & Smucker, TOIS 2021): ir_measures' ``Compat(p=, normalize=)``.

    The rank-biased overlap of the ranking with the ideal ranking of the query's relevant
    documents (label > 0, by grade descending), to depth ``D = max(n, R)``::

        RBO = sum_{i<D} p^i |A_i| / (i + 1)  /  sum_{i<D} p^i

    ``A_i``: the documents in the top ``i + 1`` of both.  ``normalize=True`` divides by
    the ideal's RBO with itself, ``sum_{i<D} p^i min(i + 1, R) / (i + 1) / sum_{i<D} p^i``;
    a query with ``R = 0`` then gets ``empty`` (ir_measures: 0).  ``R`` and the ideal are
    the row's, or ``ideal_counts``' (judged documents per grade, retrieved or not).

    Within a grade the ideal follows the run, as ir_measures builds it: the retrieved
    documents with a score >= 0 in rank order, then the unretrieved ones (ir_measures
    scores them 0.0), then those with a negative score.  ``ties`` orders equal scores
    in both rankings (ir_measures: doc id ascending in the run, qrels order in the
    ideal); ``ties="average"`` is refused.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.compatibility([[2, 1, 0]], [[3, 2, 1]]).tolist()  # the ideal order itself
    [1.0]
    >>> round(float(rankjit.compatibility([[0, 1]], [[2, 1]], p=0.5)[0]), 6)  # (0.5 / 2) / (1 + 0.5 / 2)
    0.2
    """
    return _single("Compat", labels, scores, None, {"p": p, "normalize": normalize, "empty": empty}, lengths=lengths,
                   mask=mask, offsets=offsets, ties=ties, ideal_counts=ideal_counts)


def accuracy(labels, scores, k=None, *, rel=1, empty="nan", lengths=None, mask=None, offsets=None,
             ties="pessimistic"):
    """Accuracy: ir_measures' ``Accuracy(rel=)@k``, the share of pairs ranked right in the top k.

    ``Accuracy@k = 1 - S / (N R')`` over the top ``min(k, n)`` documents: ``R'`` of them
    relevant (``label >= rel``), ``N`` not, and ``S`` the sum over the relevant ones of
    the non-relevant documents above each: the probability that a relevant document of
    the top k is ranked above a non-relevant one of the top k.  Without a pair
    (``N R' = 0``) a query gets ``empty``, NaN by default: ir_measures leaves out the
    queries without a relevant document in the top k and divides by zero (an error)
    when every document there is relevant; ``np.nanmean`` of the values is ir_measures'
    mean.  ``ties="average"`` is refused.

    Examples
    --------
    >>> import rankjit
    >>> rankjit.accuracy([[1, 0, 1, 0]], [[4, 3, 2, 1]]).tolist()  # S = 0 + 1 over N R' = 4
    [0.75]
    >>> rankjit.accuracy([[1, 1, 0]], [[3, 2, 1]], k=2).tolist()  # no non-relevant document in the top 2
    [nan]
    """
    return _single("Accuracy", labels, scores, k, {"rel": rel, "empty": empty}, lengths=lengths, mask=mask,
                   offsets=offsets, ties=ties)
