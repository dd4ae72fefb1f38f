"""CatBoost adapter: a rankjit measure as a custom ``eval_metric`` object.

CatBoost calls a Python metric as ``evaluate(approxes, target, weight)``: scores and
labels of a whole dataset, but **no group ids**.  The object therefore learns the
groups of every dataset it will see when it is built: pass the Pools (or their
group-id columns) of the training set and of each eval set.  CatBoost evaluates a
custom ``eval_metric`` on the training set too, so include it.  Each call is matched
to its dataset by length, and by labels when two datasets have the same length.
With ``compat="catboost"`` a Pool's ``group_weight`` weights the mean over queries
where CatBoost's metric does (see :func:`metric`).

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

from typing import NamedTuple

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


#: CatBoost's MAP, PrecisionAt and RecallAt average queries equally, group_weight or not
#: (its NDCG, DCG, MRR, ERR and PFound weight each query by its group_weight)
_UNWEIGHTED_IN_CATBOOST = ("AP", "P", "R")


class _GroupSpec(NamedTuple):
    """The groups of one dataset of ``groups=``."""

    offsets: np.ndarray
    labels: np.ndarray | None  # a Pool's labels (they tell same-size datasets apart); None for ids or sizes
    what: str  # how the dataset was given, for the messages
    object_weights: bool | None  # a Pool: whether it holds object weights (not group_weight); None: not known


def _as_group_spec(item, i):
    """The :class:`_GroupSpec` of a Pool, a group-id column or {'group_sizes': ...} (``groups[i]``)."""
    if hasattr(item, "get_group_id_hash"):  # catboost.Pool
        gid = item.get_group_id_hash()
        if gid is None or len(gid) == 0:
            raise ValueError("a Pool without group_id was given; build the Pool with group_id=")
        labels = item.get_label()
        weights = item.get_weight()  # object weights: all 1 without them, and with group_weight
        return _GroupSpec(offsets_from_group_ids(np.asarray(gid), "the Pool's group_id"),
                          None if labels is None else np.asarray(labels, dtype=np.float64), f"groups[{i}] (a Pool)",
                          weights is not None and bool(np.any(np.asarray(weights, dtype=np.float64) != 1.0)))
    if isinstance(item, dict):
        if "group_sizes" in item:
            return _GroupSpec(offsets_from_sizes(item["group_sizes"]), None, f"groups[{i}] (group sizes)", None)
        if "group_id" in item:
            return _GroupSpec(offsets_from_group_ids(item["group_id"]), None, f"groups[{i}] (group ids)", None)
        raise ValueError("a groups dict needs 'group_sizes' or 'group_id'")
    return _GroupSpec(offsets_from_group_ids(item), None, f"groups[{i}] (group ids)", None)


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
        elif isinstance(groups, (list, tuple)):
            if groups and np.isscalar(groups[0]):
                groups = [groups]  # a single group-id column given as a list
        else:  # one group-id column: a NumPy array, a pandas or polars Series, ...
            column = np.asarray(groups)
            if column.ndim != 1:
                raise ValueError(
                    f"groups= got a {type(groups).__name__} of shape {column.shape}; pass a catboost.Pool, a 1-D "
                    "group-id column (one id per row), {'group_sizes': [...]}, or a list of them (one per dataset)"
                )
            groups = [column]
        self._specs = [_as_group_spec(g, i) for i, g in enumerate(groups)]
        if not self._specs:
            raise ValueError("groups= is empty")

    def _spec(self, target):
        """The :class:`_GroupSpec` of the dataset CatBoost evaluates (matched by size, then by labels)."""
        n = target.shape[0]
        hits = [s for s in self._specs if s.offsets[-1] == n]
        if not hits:
            known = sorted({int(s.offsets[-1]) for s in self._specs})
            raise ValueError(
                f"CatBoost evaluated a dataset of {n} rows, but groups= describes datasets of {known} rows; "
                "pass the groups of every dataset CatBoost evaluates (the training pool and each eval_set)"
            )
        # a Pool whose labels are not these is another dataset; group ids and sizes carry no labels: kept
        fits = [s for s in hits if s.labels is None or np.array_equal(s.labels, target)]
        if not fits:
            raise ValueError(
                f"CatBoost evaluated a dataset of {n} rows whose labels are those of none of the Pools of {n} rows "
                f"in groups= ({', '.join(s.what for s in hits)}); pass the groups of every dataset CatBoost "
                "evaluates (the training pool and each eval_set)"
            )
        if any(not np.array_equal(s.offsets, fits[0].offsets) for s in fits[1:]):
            raise ValueError(
                f"CatBoost evaluated a dataset of {n} rows, and {len(fits)} datasets in groups= have {n} rows but "
                f"different groups ({', '.join(s.what for s in fits)}): their labels do not tell them apart (a "
                "group-id column or group sizes carry no labels; Pools may have the same ones); pass each dataset "
                "as its catboost.Pool, with labels that differ"
            )
        labelled = [s for s in fits if s.labels is not None]  # the same groups given twice: one, a Pool if any
        return labelled[0] if labelled else fits[0]

    def _query_weights(self, spec, weight, n):
        """Per-query weights of CatBoost's mean under ``compat="catboost"`` (its group_weight), or None."""
        if weight is None or self.preset is None or self.preset.name != "catboost":
            return None
        if self.measure.family in _UNWEIGHTED_IN_CATBOOST or spec.object_weights:
            return None  # a Pool's object weights: CatBoost's ranking metrics do not read them
        w = np.asarray(weight, dtype=np.float64)
        qw = w[np.minimum(spec.offsets[:-1], n - 1)]  # CatBoost passes a group's weight on each of its rows
        if spec.object_weights is None:  # a group-id column or sizes: object weights or group_weight?
            if not np.array_equal(w, np.repeat(qw, np.diff(spec.offsets))) or (qw == 1.0).all():
                return None  # weights that differ within a group are object weights (all 1: no weights)
            raise ValueError(
                f"{self.name}: CatBoost passed row weights, equal within each group, for the dataset of {n} rows "
                f"given as {spec.what}; they are either its group_weight (CatBoost's metric then weights each "
                "query by it) or object weights (which it ignores), and group ids do not say which; pass the "
                "catboost.Pool itself in groups="
            )
        return qw

    # --- CatBoost's custom-metric protocol --------------------------------------------
    def is_max_optimal(self):
        """Every rankjit measure is higher-better."""
        return True

    def evaluate(self, approxes, target, weight):
        """(value, 1.0) for one dataset.

        With ``compat="catboost"`` a Pool's ``group_weight`` (CatBoost passes it as
        ``weight``, a group's weight on each of its rows) weights the mean over queries as
        CatBoost's NDCG, DCG, MRR, ERR and PFound do; MAP, PrecisionAt, RecallAt and
        object weights leave queries equal, as in CatBoost.  Without a preset queries
        count equally.
        """
        if len(approxes) != 1:
            raise ValueError(f"ranking needs one approx dimension, got {len(approxes)}")
        scores = np.asarray(approxes[0])
        labels = np.asarray(target)
        spec = self._spec(labels)
        res = presets.evaluate(labels, scores, [self.measure.name], compat=self.preset, offsets=spec.offsets,
                               weights=self._query_weights(spec, weight, labels.shape[0]))
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
        ``group_id=``, a per-row group-id array (a NumPy array, a list or a pandas
        Series; rows of a group contiguous), or ``{"group_sizes": [...]}``.  Datasets
        of the same size are told apart by the labels of their Pools: a group-id
        array or sizes next to a Pool of the same size with the same labels is an
        error (pass Pools).
    compat : str, optional
        Parity preset; ``"catboost"`` reproduces CatBoost's NDCG (type=Base: linear
        gain), DCG, MAP, PrecisionAt, RecallAt, MRR, ERR and PFound: pessimistic ties
        (lower label first), ``target > 0.5`` as relevant, ``P@k`` divided by
        ``min(k, n)``, and CatBoost's mean over queries: weighted by the Pool's
        ``group_weight`` for NDCG, DCG, MRR, ERR and PFound (and the measures CatBoost
        does not have), unweighted for MAP, PrecisionAt and RecallAt; object weights
        (``weight=``) are not read, as CatBoost does not.  Weights that a group-id array
        cannot attribute (equal within each group: group_weight or object weights?)
        raise a ValueError asking for the Pool.  Without a preset every query counts
        equally.

    Returns
    -------
    CatBoostMetric
        Its class name is what CatBoost logs; ``get_evals_result()`` keys it by
        ``metric.name`` (e.g. ``"nDCG@10[catboost]"``).

    Raises
    ------
    ValueError
        Unknown measure or preset, groups that are not contiguous, or (at evaluation) a
        dataset whose size matches none of ``groups``, same-size datasets that labels do
        not tell apart, or (``compat="catboost"``) weights a group-id array cannot
        attribute.

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
