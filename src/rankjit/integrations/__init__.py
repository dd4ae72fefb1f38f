"""Learning-to-rank adapters: rankjit measures inside training loops.

One submodule per framework; each imports its framework only when called, so
``import rankjit.integrations`` (and importing a submodule) never imports
LightGBM, XGBoost, CatBoost or PyTorch.

* :mod:`rankjit.integrations.lightgbm` -- ``feval(*measures, compat=None)`` for
  ``lgb.train(feval=...)`` and ``LGBMRanker(...).fit(eval_metric=...)``.
* :mod:`rankjit.integrations.xgboost` -- ``custom_metric(*measures, compat=None)`` for
  ``xgb.train(custom_metric=...)`` and ``XGBRanker(eval_metric=...)``.
* :mod:`rankjit.integrations.catboost` -- ``metric(measure, groups=..., compat=None)``,
  a custom ``eval_metric`` object (CatBoost does not pass group ids to it, so the
  groups of the evaluated pools are given when the object is built).
* :mod:`rankjit.integrations.torch` -- ``evaluate(scores, labels, measures, mask=None)``
  on padded ``[batch, slate]`` tensors (label -1 = padding, the allRank convention).
* :mod:`rankjit.integrations.ir_measures` -- ``register()`` puts a rankjit provider first in
  ir_measures' default pipeline (``calc_aggregate``, ``iter_calc``, PyTerrier's ``pt.Experiment``).

Every adapter runs :func:`rankjit.evaluate` (one ranking pass per query for all
measures) through :func:`rankjit.presets.evaluate`, so ``compat=`` reproduces a
framework's own metric; see ``docs/ltr.md``.

Examples
--------
>>> import numpy as np
>>> from rankjit.integrations import offsets_from_sizes
>>> offsets_from_sizes([2, 3], n_docs=5).tolist()
[0, 2, 5]
"""
from __future__ import annotations

import numpy as np

__all__ = ["offsets_from_sizes", "offsets_from_pointers", "measure_label", "narrow_labels"]


def narrow_labels(labels):
    """An int8 copy of float labels that are whole numbers in ``0 .. 127``; other labels as given.

    Training frameworks hand over relevance grades as float32/float64.  The engine scans
    int8 grades several times faster than floats (no fraction or finiteness test, 8x less
    memory), so the adapters convert a dataset's labels once and reuse the copy on every
    round: the frameworks themselves treat a dataset's labels as fixed once it is built.
    Labels with a fraction, a NaN, a negative or a large value are returned unchanged, so
    that validation reports them as usual.

    Examples
    --------
    >>> narrow_labels(np.array([0.0, 3.0, 1.0])).dtype
    dtype('int8')
    >>> narrow_labels(np.array([0.0, 0.5])).dtype
    dtype('float64')
    """
    a = np.asarray(labels)
    if a.dtype.kind != "f" or a.size == 0:
        return a
    lo, hi = a.min(), a.max()  # NaN makes both comparisons below False
    if not (lo >= 0 and hi <= 127) or not np.array_equal(a, np.floor(a)):
        return a
    return a.astype(np.int8)


def offsets_from_sizes(sizes, n_docs=None, *, what="group sizes"):
    """CSR offsets (int64, ``n_queries + 1``) from per-query group sizes.

    Parameters
    ----------
    sizes : array-like of int
        Documents per query, in data order.
    n_docs : int, optional
        Number of documents; the sizes must sum to it.
    what : str
        Name used in error messages.

    Raises
    ------
    ValueError
        When the sizes are not a 1-D array of non-negative integers, or do not sum to
        ``n_docs``.

    Examples
    --------
    >>> offsets_from_sizes([3, 1]).tolist()
    [0, 3, 4]
    """
    g = np.asarray(sizes)
    if g.ndim != 1 or g.shape[0] == 0:
        raise ValueError(f"{what} must be a non-empty 1-D array (one size per query), got shape {g.shape}")
    if g.dtype.kind not in "iu":
        if g.dtype.kind == "f" and np.all(np.isfinite(g)) and np.all(g == np.floor(g)):
            g = g.astype(np.int64)
        else:
            raise ValueError(f"{what} must be integers, got dtype {g.dtype}")
    if (g < 0).any():
        raise ValueError(f"{what} must be >= 0")
    offsets = np.empty(g.shape[0] + 1, dtype=np.int64)
    offsets[0] = 0
    np.cumsum(g, out=offsets[1:])
    if n_docs is not None and offsets[-1] != n_docs:
        raise ValueError(
            f"{what} sum to {int(offsets[-1])} but the data has {int(n_docs)} documents; "
            "give one size per query, in data order"
        )
    return offsets


def offsets_from_pointers(ptr, n_docs=None, *, what="group pointers"):
    """CSR offsets from group pointers (``[0, end_1, ..., n_docs]``), validated."""
    p = np.asarray(ptr)
    if p.ndim != 1 or p.shape[0] < 2 or p.dtype.kind not in "iu":
        raise ValueError(f"{what} must be a 1-D integer array of at least 2 entries, got shape {p.shape}")
    p = p.astype(np.int64, copy=False)
    if p[0] != 0 or (np.diff(p) < 0).any():
        raise ValueError(f"{what} must start at 0 and be non-decreasing")
    if n_docs is not None and p[-1] != n_docs:
        raise ValueError(f"{what} end at {int(p[-1])} but the data has {int(n_docs)} documents")
    return p


def measure_label(name, compat):
    """Result name of a measure in a framework's log: the measure, plus ``[preset]`` under a preset."""
    return name if compat is None else f"{name}[{compat}]"
