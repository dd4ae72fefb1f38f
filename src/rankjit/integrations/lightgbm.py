"""LightGBM adapter: rankjit measures as a ``feval``.

Examples
--------
>>> import numpy as np, lightgbm as lgb
>>> from rankjit.integrations.lightgbm import feval
>>> rng = np.random.default_rng(0)
>>> X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
>>> train = lgb.Dataset(X, y, group=[20, 20, 20])
>>> evals = {}
>>> booster = lgb.train({"objective": "lambdarank", "metric": "ndcg", "eval_at": [5], "verbose": -1,
...                      "min_data_in_leaf": 2}, train, num_boost_round=3, valid_sets=[train],
...                     feval=feval("nDCG@5", "AP@5", compat="lightgbm"),
...                     callbacks=[lgb.record_evaluation(evals)])
>>> sorted(evals["training"])
['AP@5[lightgbm]', 'nDCG@5[lightgbm]', 'ndcg@5']
>>> bool(np.allclose(evals["training"]["ndcg@5"], evals["training"]["nDCG@5[lightgbm]"], atol=1e-12))
True
"""
from __future__ import annotations

import weakref

import numpy as np

from rankjit import presets
from rankjit.integrations import measure_label, narrow_labels, offsets_from_pointers, offsets_from_sizes

__all__ = ["feval", "LightGBMFeval"]

_MISSING = object()


class LightGBMFeval:
    """A LightGBM evaluation function computing several rankjit measures.

    Build it with :func:`feval`.  Called as ``f(preds, dataset)`` by ``lgb.train`` and as
    ``f(y_true, y_pred, weight, group)`` by the scikit-learn API (``LGBMRanker``).

    Attributes
    ----------
    measures : list of ResolvedMeasure
        The measures with the preset settings written out.
    names : list of str
        Result names, e.g. ``"nDCG@10[lightgbm]"``.
    compat : str or None
    """

    def __init__(self, measures, compat=None):
        if not measures:
            raise ValueError("feval() needs at least one measure, e.g. feval('nDCG@10')")
        self.compat = compat
        self.preset = presets.get_preset(compat)
        self.measures = [presets.resolve(m, self.preset) for m in measures]
        self.names = [measure_label(m.name, compat) for m in self.measures]
        # per Dataset: its CSR offsets and narrowed labels, computed once (they do not change between rounds)
        self._cache = weakref.WeakKeyDictionary()
        self._arrays = None  # the scikit-learn API's labels and group sizes (copies), and the measures prepared

    def _prepared(self, dataset, labels, n_docs):
        """(offsets, query weights, the measures prepared on the narrowed labels, labels, group) of a
        Dataset, computed once per Dataset.

        Groups and labels of a constructed Dataset rarely change between rounds; they are
        derived again when ``get_label()`` or ``get_group()`` returns another array than the
        last call (``set_label``, ``set_group`` replace them), never from stale ones.  Each
        round then checks and ranks the scores only (:func:`rankjit.presets.prepare`).
        """
        group = dataset.get_group()  # (LightGBM keeps the array: replaced by set_group)
        hit = self._cache.get(dataset)
        if hit is not None and hit[0][-1] == n_docs and hit[3] is labels and hit[4] is group:
            return hit
        if hit is not None and hit[0][-1] == n_docs and hit[4] is group:
            offsets, qweights = hit[0], hit[1]
        else:
            bounds = dataset.get_field("group")  # query boundaries of a constructed Dataset
            if bounds is None:
                raise ValueError("the LightGBM Dataset has no query groups; construct it with group=[sizes...]")
            offsets = offsets_from_pointers(bounds, n_docs, what="the Dataset's query boundaries")
            qweights = None
        # (prepare reads arrays of its own: labels changed in place later reach neither it nor LightGBM's metric)
        prepared = presets.prepare(narrow_labels(labels), [m.name for m in self.measures], compat=self.preset,
                                   offsets=offsets)
        hit = (offsets, qweights, prepared, labels, group)
        try:
            self._cache[dataset] = hit
        except TypeError:  # not weak-referenceable
            pass
        return hit

    def _prepared_arrays(self, labels, group, n_docs):
        """The measures prepared on labels and group sizes given as arrays (the scikit-learn API's call), kept
        while the next call gives equal ones.

        LightGBM passes its Dataset's own arrays every round; they are compared by value
        (dtype, shape and values), so arrays changed in place, or other arrays, are prepared
        again, never evaluated on stale labels.
        """
        hit = self._arrays
        if hit is not None and all(a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
                                   for a, b in ((hit[0], labels), (hit[1], group))):
            return hit[2]
        offsets = offsets_from_sizes(group, n_docs)
        prepared = presets.prepare(narrow_labels(labels), [m.name for m in self.measures], compat=self.preset,
                                   offsets=offsets)  # (prepare reads arrays of its own)
        self._arrays = (labels.copy(), group.copy(), prepared)  # (what the next call is compared with)
        return prepared

    def evaluate(self, labels, preds, offsets, query_weights=None):
        """The ``[(name, value, True), ...]`` list for flat ``labels`` / ``preds`` and CSR ``offsets``."""
        texts = [m.name for m in self.measures]
        res = presets.evaluate(labels, preds, texts, compat=self.preset, offsets=offsets, weights=query_weights)
        return self._listed(res)

    def _listed(self, res):
        """LightGBM's ``[(name, value, is_higher_better), ...]`` of the results ``res`` (measure name -> value)."""
        return [(name, res[m.name], True) for name, m in zip(self.names, self.measures)]

    def __call__(self, preds, eval_data, weight=_MISSING, group=_MISSING):
        if group is not _MISSING:  # scikit-learn API: (y_true, y_pred, weight, group)
            labels, scores = np.asarray(preds), np.asarray(eval_data)
            if group is None:
                raise ValueError("no query groups: fit LGBMRanker with group= and eval_group=")
            if labels.ndim != 1:
                raise ValueError(f"labels must be 1-D (one per row), got shape {labels.shape}")
            if labels.shape[0] != _scores_1d(scores).shape[0]:
                raise ValueError(f"{scores.shape[0]} predictions for {labels.shape[0]} labels")
            prepared = self._prepared_arrays(labels, np.asarray(group), scores.shape[0])
            return self._listed(prepared.evaluate(scores))
        scores = _scores_1d(np.asarray(preds))
        labels = eval_data.get_label()
        if labels is None:
            raise ValueError("the LightGBM Dataset has no labels")
        if np.shape(labels)[0] != scores.shape[0]:
            raise ValueError(f"{scores.shape[0]} predictions for a Dataset of {np.shape(labels)[0]} rows")
        _, qweights, prepared, _, _ = self._prepared(eval_data, labels, scores.shape[0])
        return self._listed(prepared.evaluate(scores, weights=qweights))

    def __repr__(self):
        return f"LightGBMFeval({', '.join(repr(m.name) for m in self.measures)}, compat={self.compat!r})"


def _scores_1d(scores):
    if scores.ndim != 1:
        raise ValueError(f"ranking predictions must be 1-D (one score per row), got shape {scores.shape}")
    return scores


def feval(*measures, compat=None):
    """A ``feval`` for ``lgb.train`` / ``eval_metric`` for ``LGBMRanker`` with rankjit measures.

    Query groups are read from the evaluated Dataset (its ``group=``); labels from its
    ``label``.  All measures come from one ranking pass per query.

    Parameters
    ----------
    *measures : str
        Measure names of :func:`rankjit.evaluate` (``"nDCG@10"``, ``"AP@5"``, ``"ERR@20"``, ...).
    compat : str, optional
        Parity preset (``"lightgbm"`` reproduces LightGBM's ``ndcg@k`` and ``map@k``: stable
        tie order, ``2^y - 1`` gain, 1 for queries without relevant documents).  None
        keeps rankjit's defaults.

    Returns
    -------
    LightGBMFeval
        Callable returning ``[(name, value, True), ...]``; names are the measure names,
        with ``[compat]`` appended under a preset (e.g. ``"nDCG@10[lightgbm]"``).
        Every query counts equally: Dataset weights are not used (LightGBM's own
        weighting of queries in its ranking metrics is not reproduced).

    Raises
    ------
    ValueError
        For an unknown measure or preset (at construction), or a Dataset without groups
        or whose groups do not cover its rows (when called).

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from rankjit.integrations.lightgbm import feval
    >>> f = feval("nDCG@3", "P@2", compat="lightgbm")
    >>> ds = lgb.Dataset(np.zeros((5, 1)), np.array([0, 2, 1, 0, 1]), group=[3, 2]).construct()
    >>> [(n, round(v, 4), hib) for n, v, hib in f(np.array([0.1, 0.9, 0.5, 0.3, 0.2]), ds)]
    [('nDCG@3[lightgbm]', 0.8155, True), ('P@2[lightgbm]', 0.75, True)]
    """
    return LightGBMFeval(measures, compat=compat)
