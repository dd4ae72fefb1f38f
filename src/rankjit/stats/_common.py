"""Input validation, seeds and plotting helpers shared by :mod:`rankjit.stats`."""
from __future__ import annotations

import numbers

import numpy as np

_MASK64 = (1 << 64) - 1


def as_matrix(matrix, name: str = "matrix", min_systems: int = 2, min_topics: int = 2) -> np.ndarray:
    """Validate a (n_systems, n_topics) score matrix and return it as float64.

    Raises
    ------
    TypeError
        If the input is not numeric.
    ValueError
        If it is not 2-D, has too few systems or topics, or holds NaN/inf.
    """
    try:
        arr = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array of shape (n_systems, n_topics): {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_systems, n_topics); got shape {arr.shape}")
    n_sys, n_top = arr.shape
    if n_sys < min_systems:
        raise ValueError(f"{name} needs at least {min_systems} systems (rows); got {n_sys}")
    if n_top < min_topics:
        raise ValueError(f"{name} needs at least {min_topics} topics (columns); got {n_top}")
    bad = ~np.isfinite(arr)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        raise ValueError(f"{name} contains NaN or infinite values in rows {rows.tolist()[:10]}")
    _check_magnitude(arr, name)
    return arr


def _check_magnitude(arr: np.ndarray, name: str):
    """Refuse values so large that the tests' sums of squared differences could overflow float64.

    A difference of two values is at most ``2 m`` (``m`` the largest magnitude), and the
    statistics sum ``n`` squared differences: ``n (2 m)^2`` must stay finite, else they
    would come out NaN or infinite.  (Scores of IR measures are far below: ``m <= 1e150``
    passes for up to 10^7 topics.)
    """
    m = float(np.max(np.abs(arr))) if arr.size else 0.0
    n = arr.shape[-1]
    if 4.0 * m * m * n >= np.finfo(np.float64).max:  # (products of floats: inf beyond, never OverflowError)
        raise ValueError(f"{name} holds values up to {m:.4g} in magnitude: the sum of {n} squared differences "
                         "could overflow float64 (the statistics would be NaN or infinite); rescale the scores")


def as_vector(x, name: str, min_len: int = 2) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 1-D array: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per topic); got shape {arr.shape}")
    if arr.size < min_len:
        raise ValueError(f"{name} needs at least {min_len} topics; got {arr.size}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    _check_magnitude(arr, name)
    return arr


def paired_vectors(a, b):
    """Validate two per-topic score vectors of the same length."""
    a = as_vector(a, "a")
    b = as_vector(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same number of topics; got {a.size} and {b.size}")
    return a, b


def check_B(B, name: str = "B") -> int:
    if isinstance(B, bool) or not isinstance(B, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer; got {B!r}")
    if B < 1:
        raise ValueError(f"{name} must be >= 1; got {B}")
    if B > MAX_B:
        raise ValueError(f"{name} must be at most {MAX_B} (one resample per draw: more would run for days); got {B}")
    return int(B)


#: the most resamples a test draws (1e9 already takes hours on a few cores)
MAX_B = 10**9


def check_alpha(alpha) -> float:
    if not isinstance(alpha, numbers.Real) or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def seed_key(seed) -> int:
    """A 64-bit key from ``seed`` (a non-negative int, or None for fresh entropy)."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be a non-negative integer or None; got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative; got {seed}")
    # hash the seed so that nearby seeds give unrelated streams
    return int(np.random.SeedSequence(int(seed)).generate_state(1, dtype=np.uint64)[0]) & _MASK64


def pair_indices(n_systems: int):
    """Row indices (i, j), i < j, of all system pairs in lexicographic order."""
    return np.triu_indices(n_systems, 1)


def t_statistic(d: np.ndarray) -> np.ndarray:
    """Paired t statistic along the last axis: mean(d) / (sd(d) / sqrt(n)), ddof=1.

    Rows with sd = 0 give 0 when the mean is 0 and +/-inf otherwise.
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    sd = d.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
        t = np.where(sd > 0, t, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    return t


#: relative slack when comparing resampled statistics with the observed one, so
#: that values equal to it up to rounding count as "at least as extreme"
REL_TOL = 1e-9


def threshold(stat_abs: np.ndarray) -> np.ndarray:
    """|stat_observed| * (1 - REL_TOL)."""
    return np.asarray(stat_abs, dtype=np.float64) * (1.0 - REL_TOL)


def new_figure(figsize=(6.0, 4.0)):
    """A matplotlib Figure on an Agg canvas, without touching pyplot or the global backend."""
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def axes_or_new(ax, figsize=(6.0, 4.0)):
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(figsize)
    return fig, fig.add_subplot(1, 1, 1)
