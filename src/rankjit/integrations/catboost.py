"""CatBoost adapter: a rankjit measure as a custom ``eval_metric`` object.

CatBoost calls a Python metric as ``evaluate(approxes, target, weight)``: scores and
labels of a whole dataset, but **no group ids**.  The object therefore learns the
groups of every dataset it will see when it is built: pass the Pools (or their
group-id columns) of the training set and of each eval set.  CatBoost evaluates a
custom ``eval_metric`` on the training set too, so include it.  Each call is matched
to its dataset by length, and by labels when two datasets have the same length.

Examples
--------
>>> import numpy as np, catboost as cb
>>> from rankjit.integrations.catboost import metric
>>> rng = np.random.default_rng(0)
>>> X, y, qid = rng.normal(size=(60, 3)), rng.integers(0, 3, 60), np.repeat([0, 1, 2], 20)
>>> train = cb.Pool(X, y, group_id=qid)
>>> model = cb.CatBoost({"loss_function": "YetiRank", "iterations": 3, "depth": 2, "verbose": False,
...                      "custom_metric": ["NDCG:top=5"],
...                      "eval_metric": metric("nDCG@5", groups=[train], compat="catboost")})
>>> import warnings
>>> with warnings.catch_warnings():  # CatBoost warns that it cannot numba-compile Python metrics
...     warnings.simplefilter("ignore")
...     _ = model.fit(train, eval_set=train)
>>> ev = model.get_evals_result()["validation"]
>>> bool(np.allclose(ev["NDCG:top=5;type=Base"], ev["nDCG@5[catboost]"], atol=1e-12))
True
"""
from __future__ import annotations

import numpy as np

from rankjit import presets
from rankjit.integrations import measure_label, offsets_from_sizes

__all__ = ["metric", "CatBoostMetric", "offsets_from_group_ids"]


def offsets_from_group_ids(group_id, what="group_id"):
    """CSR offsets from a per-row group-id column whose groups are contiguous (CatBoost's rule).

    Raises
    ------
    ValueError
        When a group id appears in two separate runs of rows.

    Examples
    --------
    >>> offsets_from_group_ids(["a", "a", "b", "c", "c"]).tolist()
    [0, 2, 3, 5]
    """
    g = np.asarray(group_id)
    if g.ndim != 1 or g.shape[0] == 0:
        raise ValueError(f"{what} must be a non-empty 1-D array (one id per row), got shape {g.shape}")
    starts = np.concatenate(([0], np.flatnonzero(g[1:] != g[:-1]) + 1))
    if np.unique(g[starts]).shape[0] != starts.shape[0]:
        raise ValueError(f"{what}: the rows of each group must be contiguous (as CatBoost requires)")
    return np.append(starts, g.shape[0]).astype(np.int64)


def _as_group_spec(item):
    """(offsets, labels or None) of a Pool, a group-id column or {'group_sizes': ...}."""
    if hasattr(item, "get_group_id_hash"):  # catboost.Pool
        gid = item.get_group_id_hash()
        if gid is None or len(gid) == 0:
            raise ValueError("a Pool without group_id was given; build the Pool with group_id=")
        labels = item.get_label()
        return offsets_from_group_ids(np.asarray(gid), "the Pool's group_id"), (
            None if labels is None else np.asarray(labels, dtype=np.float64))
    if isinstance(item, dict):
        if "group_sizes" in item:
            return offsets_from_sizes(item["group_sizes"]), None
        if "group_id" in item:
            return offsets_from_group_ids(item["group_id"]), None
        raise ValueError("a groups dict needs 'group_sizes' or 'group_id'")
    return offsets_from_group_ids(item), None


class CatBoostMetric:
    """A CatBoost custom evaluation metric computing one rankjit measure.

    Build it with :func:`metric`.  CatBoost calls :meth:`evaluate` with the scores and
    labels of a whole dataset; :meth:`get_final_error` returns the mean over queries.

    Attributes
    ----------
    measure : ResolvedMeasure
    name : str
    compat : str or None
    """

    def __init__(self, measure, groups, compat=None):
        self.compat = compat
        self.preset = presets.get_preset(compat)
        self.measure = presets.resolve(measure, self.preset)
        self.name = measure_label(self.measure.name, compat)
        if groups is None:
            raise ValueError("groups= is required: CatBoost does not pass group ids to Python metrics")
        if hasattr(groups, "get_group_id_hash") or isinstance(groups, dict):
            groups = [groups]
        elif isinstance(groups, np.ndarray) and groups.ndim == 1:
            groups = [groups]
        elif isinstance(groups, (list, tuple)) and groups and np.isscalar(groups[0]):
            groups = [groups]  # a single group-id column given as a list
        self._specs = [_as_group_spec(g) for g in groups]
        if not self._specs:
            raise ValueError("groups= is empty")

    def _offsets(self, target):
        n = target.shape[0]
        hits = [s for s in self._specs if s[0][-1] == n]
        if not hits:
            known = sorted({int(s[0][-1]) for s in self._specs})
            raise ValueError(
                f"CatBoost evaluated a dataset of {n} rows, but groups= describes datasets of {known} rows; "
                "pass the groups of every dataset CatBoost evaluates (the training pool and each eval_set)"
            )
        if len(hits) > 1 and all(np.array_equal(h[0], hits[0][0]) for h in hits[1:]):
            hits = hits[:1]  # the same groups given twice
        if len(hits) > 1:
            hits = [s for s in hits if s[1] is not None and np.array_equal(s[1], target)]
            if len(hits) != 1:
                raise ValueError(
                    f"two datasets in groups= have {n} rows and their labels do not tell them apart; "
                    "pass Pools with labels"
                )
        return hits[0][0]

    # --- CatBoost's custom-metric protocol --------------------------------------------
    def is_max_optimal(self):
        """Every rankjit measure is higher-better."""
        return True

    def evaluate(self, approxes, target, weight):
        """(value, 1.0) for one dataset; ``weight`` is not used (queries count equally)."""
        if len(approxes) != 1:
            raise ValueError(f"ranking needs one approx dimension, got {len(approxes)}")
        scores = np.asarray(approxes[0])
        labels = np.asarray(target)
        offsets = self._offsets(labels)
        res = presets.evaluate(labels, scores, [self.measure.name], compat=self.preset, offsets=offsets)
        return res[self.measure.name], 1.0

    def get_final_error(self, error, weight):
        """The value returned by :meth:`evaluate`."""
        return error / weight if weight else error

    def __repr__(self):
        return f"CatBoostMetric({self.measure.name!r}, compat={self.compat!r})"


def metric(measure, *, groups, compat=None):
    """A CatBoost ``eval_metric`` object computing one rankjit measure.

    Parameters
    ----------
    measure : str
        A measure name of :func:`rankjit.evaluate` (``"nDCG@10"``, ``"AP@5"``, ...).
    groups : Pool, group-id column, dict, or list of them
        The groups of every dataset CatBoost will evaluate with this metric (the
        training pool and each eval set): a ``catboost.Pool`` built with
        ``group_id=``, a per-row group-id array (rows of a group contiguous), or
        ``{"group_sizes": [...]}``.
    compat : str, optional
        Parity preset; ``"catboost"`` reproduces CatBoost's NDCG (type=Base: linear
        gain), DCG, MAP, PrecisionAt, RecallAt, MRR, ERR and PFound: pessimistic ties
        (lower label first), ``target > 0.5`` as relevant, ``P@k`` divided by
        ``min(k, n)``.

    Returns
    -------
    CatBoostMetric
        Its class name is what CatBoost logs; ``get_evals_result()`` keys it by
        ``metric.name`` (e.g. ``"nDCG@10[catboost]"``).

    Raises
    ------
    ValueError
        Unknown measure or preset, groups that are not contiguous, or (at evaluation) a
        dataset whose size matches none of ``groups``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.integrations.catboost import metric
    >>> m = metric("nDCG@3", groups={"group_sizes": [3, 2]}, compat="catboost")
    >>> value, weight = m.evaluate((np.array([0.1, 0.9, 0.5, 0.3, 0.2]),), np.array([0., 2., 1., 0., 1.]), None)
    >>> round(m.get_final_error(value, weight), 4)
    0.8155
    """
    obj = CatBoostMetric(measure, groups, compat=compat)
    # CatBoost names a Python metric after its class: give each object a class named after its measure
    cls = type(obj.name, (CatBoostMetric,), {"__module__": __name__})
    obj.__class__ = cls
    return obj
