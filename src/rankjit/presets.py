"""Parity presets: the conventions of other tools' ranking metrics, as rankjit settings.

rankjit's own defaults (``ties="pessimistic"``, ``gain="linear"``, AP divided by ``R``,
``empty="zero"``, ``P@k`` divided by ``k``, ...: ir_measures' and trec_eval's
conventions) never change with a preset.  A *preset* names a tool whose metric you
want to reproduce; it fills in every setting the measure name leaves open:

* the tie rule (how documents with equal scores are ordered),
* the gain of nDCG / DCG (``2^y - 1`` or ``y``),
* the value of a query without relevant documents (``empty``),
* the relevance threshold of the binary measures and the AP denominator,
* cutoff conventions (CatBoost divides P@k by ``min(k, n)``).

Parameters written in the measure name always win over the preset, so
``resolve("nDCG(gain='linear')@10", "lightgbm")`` keeps the linear gain.

``docs/ltr.md`` has the full table; :data:`PRESETS` holds it in code.

Examples
--------
>>> from rankjit import presets
>>> presets.resolve("nDCG@10", "lightgbm").text
"nDCG(gain='exp2', empty='one')@10"
>>> presets.get_preset("catboost").ties
'pessimistic'
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rankjit import _measures

#: ``label > 0.5`` written as rankjit's ``label >= rel``: the next float64 above 0.5.
#: CatBoost's binary measures use ``target > border`` with ``border=0.5``.
ABOVE_HALF = float(np.nextafter(0.5, math.inf))


@dataclass(frozen=True)
class Preset:
    """The conventions of one tool.

    Attributes
    ----------
    name : str
        Preset name (the ``compat=`` value).
    ties : str
        Tie rule passed to :func:`rankjit.evaluate`.
    params : dict
        Measure family -> parameters filled in when the measure name does not set them.
    precision_min_k_n : bool
        Divide P@k by ``min(k, n)`` (``n`` = documents of the query) instead of ``k``.
    description : str
        One line on where the conventions come from.
    """

    name: str
    ties: str
    params: dict = field(default_factory=dict)
    precision_min_k_n: bool = False
    description: str = ""


PRESETS: dict[str, Preset] = {
    "lightgbm": Preset(
        "lightgbm",
        ties="stable",
        params={
            # label_gain defaults to 2^i - 1; a query whose ideal DCG is 0 scores 1
            "nDCG": {"gain": "exp2", "empty": "one"},
            "DCG": {"gain": "exp2"},
            # map@k: label > 0.5 is relevant, divided by min(k, R); no relevant -> 1
            "AP": {"rel": 1, "denominator": "min_k_r", "empty": "one"},
        },
        description="LightGBM 4.x ndcg@k / map@k: std::stable_sort by score (input order among ties)",
    ),
    "xgboost": Preset(
        "xgboost",
        ties="stable",
        params={
            # ndcg_exp_gain=true (default); 'ndcg@k-' is empty='zero'
            "nDCG": {"gain": "exp2", "empty": "one"},
            "DCG": {"gain": "exp2"},
            # map@k: binary labels, divided by min(k, R); 'map@k-' is empty='zero'
            "AP": {"rel": 1, "denominator": "min_k_r", "empty": "one"},
            # pre@k: label != 0, divided by k
            "P": {"rel": 1},
        },
        description="XGBoost 2.x/3.x ndcg@k / map@k / pre@k: stable arg-sort by score (input order among ties)",
    ),
    "catboost": Preset(
        "catboost",
        ties="pessimistic",
        params={
            # NDCG type=Base (linear gain), denominator=LogPosition; no relevant -> 1
            "nDCG": {"gain": "linear", "discount": "log2", "empty": "one"},
            "DCG": {"gain": "linear", "discount": "log2"},
            # MAP:top=k, PrecisionAt, RecallAt, MRR: target > border (0.5)
            "AP": {"rel": ABOVE_HALF, "denominator": "min_k_r", "empty": "zero"},
            "P": {"rel": ABOVE_HALF},
            "R": {"rel": ABOVE_HALF, "empty": "one"},
            "RR": {"rel": ABOVE_HALF},
            # ERR and PFound read targets in [0, 1] as probabilities; PFound decay 0.85
            "ERR": {"probabilities": True, "utility": "reciprocal"},
            "pFound": {"probabilities": True, "p_break": 0.15},
        },
        precision_min_k_n=True,
        description="CatBoost 1.2 NDCG / DCG / MAP / PrecisionAt / RecallAt / MRR / ERR / PFound",
    ),
    "sklearn": Preset(
        "sklearn",
        ties="average",
        params={
            # ndcg_score / dcg_score: linear gain, log2 discount, all-zero rows -> 0
            "nDCG": {"gain": "linear", "discount": "log2", "empty": "zero"},
            "DCG": {"gain": "linear", "discount": "log2"},
        },
        description="scikit-learn ndcg_score / dcg_score (ignore_ties=False: average over tied orders)",
    ),
    "trec_eval": Preset(
        "trec_eval",
        ties="stable",
        params={
            # ndcg / ndcg_cut: gain = relevance level; no relevant -> 0
            "nDCG": {"gain": "linear", "discount": "log2", "empty": "zero"},
            "DCG": {"gain": "linear", "discount": "log2"},
            # map_cut: divided by R; P_k divided by k; relevance_level 1
            "AP": {"rel": 1, "denominator": "r", "empty": "zero"},
            "P": {"rel": 1},
            "R": {"rel": 1, "empty": "zero"},
            "RR": {"rel": 1},
            "Rprec": {"rel": 1, "empty": "zero"},
            "Success": {"rel": 1},
        },
        description=(
            "trec_eval 9/10: ties broken by docno descending, so put tied documents in descending docno "
            "order (ties='stable'); pass n_relevant= / ideal_counts= for judged documents not retrieved"
        ),
    ),
}


def get_preset(compat) -> Preset | None:
    """The :class:`Preset` called ``compat``; None for ``compat=None`` (rankjit's own defaults).

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid ones.

    Examples
    --------
    >>> from rankjit.presets import get_preset
    >>> get_preset("xgboost").ties
    'stable'
    >>> get_preset(None) is None
    True
    """
    if compat is None:
        return None
    if isinstance(compat, Preset):
        return compat
    if isinstance(compat, str) and compat.lower() in PRESETS:
        return PRESETS[compat.lower()]
    raise ValueError(f"unknown compat preset {compat!r}; valid presets: {', '.join(sorted(PRESETS))} (or None)")


@dataclass(frozen=True)
class ResolvedMeasure:
    """A measure with every preset setting written out.

    Attributes
    ----------
    name : str
        The measure as the caller wrote it.
    text : str
        Canonical rankjit name with the preset's parameters, e.g. ``"nDCG(gain='exp2', empty='one')@10"``.
    family : str
    k : int or None
    precision_min_k_n : bool
        Whether the value is rescaled from ``hits/k`` to ``hits/min(k, n)``.
    """

    name: str
    text: str
    family: str
    k: int | None
    precision_min_k_n: bool = False


def _format(family, params, k):
    args = ", ".join(f"{key}={value!r}" for key, value in params.items())
    text = family + (f"({args})" if args else "")
    return text if k is None else f"{text}@{k}"


def resolve(measure, compat=None) -> ResolvedMeasure:
    """Fill in the settings of ``compat`` that the measure name leaves open.

    Parameters
    ----------
    measure : str
        A measure name of :func:`rankjit.evaluate` (``"nDCG@10"``, ``"AP(rel=2)@5"``, ...).
    compat : str or None
        A preset name (see :data:`PRESETS`); None keeps rankjit's defaults.

    Returns
    -------
    ResolvedMeasure

    Examples
    --------
    >>> from rankjit.presets import resolve
    >>> resolve("AP@10", "trec_eval").text
    "AP(rel=1, denominator='r', empty='zero')@10"
    >>> resolve("nDCG(empty='zero')@5", "xgboost").text  # XGBoost's 'ndcg@5-'
    "nDCG(empty='zero', gain='exp2')@5"
    """
    preset = get_preset(compat)
    m = _measures.parse(measure)
    if isinstance(measure, _measures.Measure):
        measure = m.text
    params = dict(m.params)
    if preset is not None:
        for key, value in preset.params.get(m.family, {}).items():
            params.setdefault(key, value)
    text = _format(m.family, params, m.k)
    _measures.parse(text)  # the canonical form must parse back
    min_k_n = bool(preset is not None and preset.precision_min_k_n and m.family == "P" and m.k is not None)
    return ResolvedMeasure(str(measure), text, m.family, m.k, min_k_n)


def _row_lengths(labels, lengths, mask, offsets):
    if offsets is not None:
        return np.diff(np.asarray(offsets, dtype=np.int64))
    if lengths is not None:
        return np.asarray(lengths, dtype=np.int64)
    if mask is not None:
        return np.asarray(mask, dtype=bool).sum(axis=1)
    shape = np.shape(labels)
    return np.full(shape[0], shape[1], dtype=np.int64)


def weighted_mean(values, weights=None, where=None):
    """Mean of per-query ``values``, weighted by per-query ``weights`` when given.

    ``where``: the queries that count (a boolean mask; None: all); NaN when none does.
    """
    if weights is None:
        if where is not None:
            values = values[where]
            if not values.shape[0]:
                return math.nan
        if values.dtype == np.float64 and values.ndim == 1 and values.shape[0]:
            # np.mean's own sum and division (the same bits), without its Python wrapper: a training round's call
            return float(np.add.reduce(values) / values.shape[0])
        return float(np.mean(values))
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != values.shape:
        raise ValueError(f"weights must hold one weight per query ({values.shape[0]}), got shape {w.shape}")
    if where is not None:
        if not where.any():
            return math.nan
        values, w = values[where], w[where]
    total = float(w.sum())
    if total <= 0.0:
        raise ValueError("the query weights sum to 0")
    return float(np.dot(values, w) / total)


def evaluate(labels, scores, measures, *, compat=None, lengths=None, mask=None, offsets=None, weights=None,
             per_query=False, **kwargs):
    """:func:`rankjit.evaluate` under a parity preset.

    Parameters
    ----------
    labels, scores, lengths, mask, offsets
        As in :func:`rankjit.evaluate`.
    measures : str or sequence of str
        Measure names; the preset fills in what they leave open.
    compat : str or None
        Preset name: "lightgbm", "xgboost", "catboost", "sklearn" or "trec_eval".
        None is plain :func:`rankjit.evaluate`.
    weights : array, optional
        One weight per query: the means become ``sum(w * v) / sum(w)`` (LightGBM and
        XGBoost weight queries this way).
    per_query : bool, default False
        Return per-query arrays instead of means.
    **kwargs
        Passed on to :func:`rankjit.evaluate` (``n_relevant=``, ``ideal_counts=``, ...).
        ``ties=`` overrides the preset's tie rule.

    Returns
    -------
    dict
        Measure name as given -> mean (float) or per-query float64 array.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit import presets
    >>> labels = np.array([0, 2, 1, 0, 0, 0])
    >>> scores = np.array([1.0, 1.0, 0.5, 3.0, 2.0, 1.0])
    >>> offsets = np.array([0, 3, 6])
    >>> res = presets.evaluate(labels, scores, ["nDCG@2"], compat="lightgbm", offsets=offsets, per_query=True)
    >>> res["nDCG@2"].round(4).tolist()  # tie kept in input order; query 2 has no relevant doc
    [0.5213, 1.0]
    """
    from rankjit._api import evaluate as _evaluate

    resolved, ties = _resolved(measures, compat, kwargs.pop("ties", None))
    texts = list(dict.fromkeys(r.text for r in resolved))
    out = _evaluate(labels, scores, texts, lengths=lengths, mask=mask, offsets=offsets, ties=ties, per_query=True,
                    **kwargs)
    return _finish(resolved, out, lambda: _row_lengths(labels, lengths, mask, offsets), weights, per_query,
                   _reductions(resolved))


def _resolved(measures, compat, ties):
    """The measures resolved under the preset ``compat``, and the tie rule (``ties``, else the preset's)."""
    if isinstance(measures, str):
        measures = [measures]
    preset = get_preset(compat)
    resolved = [resolve(m, preset) for m in measures]
    if not resolved:
        raise ValueError("no measures requested")
    if ties is None:
        ties = preset.ties if preset is not None else "pessimistic"
    return resolved, ties


def _reductions(resolved):
    """How each measure's per-query values are reduced: ``"sum"`` (the counts), ``"defined"`` (Accuracy: the
    mean of the queries with a value) or ``"mean"``, as :func:`rankjit.evaluate` reduces them."""
    return [_measures.aggregate(r.text) for r in resolved]


def _finish(resolved, by_text, row_lengths, weights, per_query, reductions):
    """The preset's results from rankjit's per-query values ``by_text`` (canonical name -> array): P@k rescaled
    where the preset divides by ``min(k, n)`` (``row_lengths()`` gives n), then per query or aggregated as
    ``reductions`` (:func:`_reductions`) says."""
    n_docs = None
    results = {}
    for r in resolved:
        values = by_text[r.text]
        if r.precision_min_k_n:
            if n_docs is None:
                n_docs = row_lengths()
            denom = np.minimum(n_docs, r.k)
            # P@k = hits / k  ->  hits / min(k, n); an empty row stays 0
            values = np.where(denom > 0, values * r.k / np.maximum(denom, 1), 0.0)
        results[r.name] = values
    if per_query:
        return results
    out = {}
    for r, how in zip(resolved, reductions):
        if how == "sum":  # the counts: summed over the queries, as rankjit.evaluate does
            if weights is not None:
                raise ValueError(f"{r.name} is a count, summed over the queries: query weights apply to the "
                                 "averaged measures only")
            out[r.name] = float(np.sum(results[r.name]))
        elif how == "defined":  # Accuracy: its defined queries (NaN left out)
            out[r.name] = weighted_mean(results[r.name], weights, where=~np.isnan(results[r.name]))
        else:
            out[r.name] = weighted_mean(results[r.name], weights)
    return out


class Prepared:
    """:func:`evaluate` under a preset for fixed labels: see :func:`prepare`."""

    def __init__(self, labels, measures, compat=None, *, lengths=None, mask=None, offsets=None, ties=None):
        from rankjit._api import PreparedEvaluation

        self.resolved, ties = _resolved(measures, compat, ties)
        self.texts = list(dict.fromkeys(r.text for r in self.resolved))
        self.reductions = _reductions(self.resolved)
        self.evaluation = PreparedEvaluation(labels, self.texts, lengths=lengths, mask=mask, offsets=offsets,
                                             ties=ties)
        self.labels = labels  # (as given; the engine reads its own arrays)
        # the row lengths of P@k divided by min(k, n), taken now: arrays changed in place later change nothing
        self._row_lengths = (np.array(_row_lengths(labels, lengths, mask, offsets), dtype=np.int64)
                             if any(r.precision_min_k_n for r in self.resolved) else None)

    def row_lengths(self):
        return self._row_lengths

    def evaluate(self, scores, *, weights=None, per_query=False):
        """The results of :func:`evaluate` for ``scores`` (same labels, measures and preset)."""
        values = self.evaluation.per_query(scores)
        by_text = dict(zip(self.texts, values))
        return _finish(self.resolved, by_text, self.row_lengths, weights, per_query, self.reductions)


def prepare(labels, measures, *, compat=None, lengths=None, mask=None, offsets=None, ties=None) -> Prepared:
    """:func:`evaluate` for many score arrays over the same labels: the labels checked and the measures planned once.

    The adapters of the training frameworks call it once per dataset and then
    ``prepared.evaluate(scores, weights=...)`` every round; the results are those of
    ``evaluate(labels, scores, measures, compat=compat, ...)``, bit for bit, for the labels
    as they are now: arrays changed in place afterwards change nothing (what the engine
    reads is its own, copied where it would be the caller's array).  List measures of the
    labels only (:class:`rankjit._api.PreparedEvaluation`).

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit import presets
    >>> labels, offsets = np.array([0, 2, 1, 0, 0, 0]), np.array([0, 3, 6])
    >>> prepared = presets.prepare(labels, ["nDCG@2"], compat="lightgbm", offsets=offsets)
    >>> round(prepared.evaluate(np.array([1.0, 1.0, 0.5, 3.0, 2.0, 1.0]))["nDCG@2"], 4)
    0.7606
    """
    return Prepared(labels, measures, compat, lengths=lengths, mask=mask, offsets=offsets, ties=ties)
