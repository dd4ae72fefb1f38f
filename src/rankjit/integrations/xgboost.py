"""XGBoost adapter: rankjit measures as a ``custom_metric`` for ``xgb.train``.

Query groups come from the DMatrix's group pointers (``group=`` or ``qid=`` when it
was built); the whole evaluation set is scored in one call of the compiled engine,
with no per-query Python loop.

Examples
--------
>>> import numpy as np, xgboost as xgb
>>> from rankjit.integrations.xgboost import custom_metric
>>> rng = np.random.default_rng(0)
>>> X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
>>> dtrain = xgb.DMatrix(X, y, group=[20, 20, 20])
>>> evals = {}
>>> booster = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@5"}, dtrain, num_boost_round=3,
...                     evals=[(dtrain, "train")], evals_result=evals,
...                     custom_metric=custom_metric("nDCG@5", compat="xgboost"), verbose_eval=False)
>>> sorted(evals["train"])
['nDCG@5[xgboost]', 'ndcg@5']
>>> bool(np.allclose(evals["train"]["ndcg@5"], evals["train"]["nDCG@5[xgboost]"], atol=1e-12))
True
"""
from __future__ import annotations

import weakref

import numpy as np

from rankjit import presets
from rankjit.integrations import measure_label, narrow_labels, offsets_from_pointers

__all__ = ["custom_metric", "XGBoostMetric"]


class XGBoostMetric:
    """An XGBoost ``custom_metric`` computing several rankjit measures.

    Build it with :func:`custom_metric`.  Called as ``f(predt, dmatrix)``; returns
    ``[(name, value), ...]``.

    Attributes
    ----------
    measures : list of ResolvedMeasure
    names : list of str
    compat : str or None
    """

    def __init__(self, measures, compat=None, weighted=True):
        if not measures:
            raise ValueError("custom_metric() needs at least one measure, e.g. custom_metric('nDCG@10')")
        self.compat = compat
        self.preset = presets.get_preset(compat)
        self.measures = [presets.resolve(m, self.preset) for m in measures]
        self.names = [measure_label(m.name, compat) for m in self.measures]
        self.weighted = weighted
        self._cache = weakref.WeakKeyDictionary()

    def _meta(self, dmat, n_docs):
        """(the measures prepared on the narrowed labels, offsets, query weights, queries without a relevant
        document) of a DMatrix (:func:`rankjit.presets.prepare`: each round then checks and ranks the scores only).

        The labels, group pointers and weights are read at every call (copies of the
        DMatrix's own, as XGBoost's metrics read its current ones) and prepared again only
        when they differ from the last call's (``set_label``, ``set_group``, ``set_weight``).
        """
        labels = np.asarray(dmat.get_label())
        ptr = np.asarray(dmat.get_uint_info("group_ptr"))
        w = np.asarray(dmat.get_weight()) if self.weighted else None
        hit = self._cache.get(dmat)
        if (hit is not None and hit[4].shape == labels.shape and np.array_equal(hit[4], labels)
                and np.array_equal(hit[5], ptr) and (w is None or np.array_equal(hit[6], w))):
            return hit[:4]
        if labels.shape[0] != n_docs:
            raise ValueError(f"{n_docs} predictions for a DMatrix of {labels.shape[0]} rows")
        if ptr.shape[0] < 2:
            raise ValueError("the DMatrix has no query groups; build it with group=[sizes...] or qid=")
        offsets = offsets_from_pointers(ptr, n_docs, what="the DMatrix's group pointers")
        qweights = None
        if self.weighted:
            if w.size:
                if w.shape[0] != offsets.shape[0] - 1:
                    raise ValueError(
                        f"ranking weights are per query in XGBoost: got {w.shape[0]} weights for "
                        f"{offsets.shape[0] - 1} queries"
                    )
                qweights = w.astype(np.float64)
        empty = None if qweights is None else _no_positive_label(labels, offsets)
        prepared = presets.prepare(narrow_labels(labels), [m.name for m in self.measures], compat=self.preset,
                                   offsets=offsets)
        hit = (prepared, offsets, qweights, empty, labels, ptr, w)
        try:
            self._cache[dmat] = hit
        except TypeError:
            pass
        return hit[:4]

    def __call__(self, predt, dmat):
        scores = np.asarray(predt)
        if scores.ndim != 1:
            raise ValueError(f"ranking predictions must be 1-D (one score per row), got shape {scores.shape}")
        prepared, _, qweights, empty = self._meta(dmat, scores.shape[0])
        if qweights is None:
            res = prepared.evaluate(scores)
            return [(name, res[m.name]) for name, m in zip(self.names, self.measures)]
        res = prepared.evaluate(scores, per_query=True)
        out = []
        for name, m in zip(self.names, self.measures):
            v = res[m.name]
            num = v * qweights
            if m.family == "nDCG" and self.preset is not None and self.preset.name == "xgboost":
                # XGBoost adds the value of a query without relevant documents (1, or 0 for
                # 'ndcg-') unweighted, while its weight still counts in the denominator
                num = np.where(empty, v, num)
            out.append((name, float(num.sum() / qweights.sum())))
        return out

    def __repr__(self):
        return f"XGBoostMetric({', '.join(repr(m.name) for m in self.measures)}, compat={self.compat!r})"


def _no_positive_label(labels, offsets):
    """Per query: True when no label is above 0 (ideal DCG 0)."""
    sizes = np.diff(offsets)
    top = np.zeros(sizes.shape[0])
    nz = sizes > 0
    top[nz] = np.maximum.reduceat(labels, offsets[:-1][nz])
    return top <= 0


def custom_metric(*measures, compat=None, weighted=True):
    """A ``custom_metric`` for ``xgb.train`` computing rankjit measures.

    Parameters
    ----------
    *measures : str
        Measure names of :func:`rankjit.evaluate`.
    compat : str, optional
        Parity preset; ``"xgboost"`` reproduces XGBoost's ``ndcg@k`` / ``map@k`` /
        ``pre@k`` (stable tie order, ``2^y - 1`` gain, 1 for queries without relevant
        documents; XGBoost's ``ndcg@k-`` is ``"nDCG(empty='zero')@k"``).  None keeps
        rankjit's defaults.
    weighted : bool, default True
        With query weights on the DMatrix, return the weighted mean as XGBoost does.

    Returns
    -------
    XGBoostMetric
        Callable ``(predt, dmatrix) -> [(name, value), ...]``.  XGBoost treats custom
        metrics as "lower is better" for early stopping unless told otherwise: pass
        ``maximize=True`` to ``xgb.train`` (every rankjit measure is higher-better).

    Examples
    --------
    >>> import numpy as np, xgboost as xgb
    >>> from rankjit.integrations.xgboost import custom_metric
    >>> m = custom_metric("nDCG@3", "AP@2", compat="xgboost")
    >>> d = xgb.DMatrix(np.zeros((5, 1)), np.array([0, 1, 1, 0, 1]), group=[3, 2])
    >>> [(n, round(v, 4)) for n, v in m(np.array([0.1, 0.9, 0.5, 0.3, 0.2], np.float32), d)]
    [('nDCG@3[xgboost]', 0.8155), ('AP@2[xgboost]', 0.75)]
    """
    return XGBoostMetric(measures, compat=compat, weighted=weighted)
