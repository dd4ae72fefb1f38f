"""Discriminative power of a measure (Sakai 2006)."""
from __future__ import annotations

import dataclasses

import numpy as np

from . import _kernels
from ._common import as_matrix, axes_or_new, check_alpha, check_B, pair_indices, seed_key, t_statistic, threshold


@dataclasses.dataclass
class DiscriminativePower:
    """Result of :func:`discriminative_power`.

    Attributes
    ----------
    power : float
        Share of system pairs with ASL < alpha.
    asl : numpy.ndarray, shape (n_pairs,)
        Achieved significance level of each pair, pairs ``(pairs_i[k], pairs_j[k])``
        in lexicographic order (i < j).
    pairs_i, pairs_j : numpy.ndarray of int
        Row indices of the two systems of each pair.
    t_observed : numpy.ndarray, shape (n_pairs,)
        Paired t statistic of row i minus row j.
    alpha : float
    B : int
    """

    power: float
    asl: np.ndarray
    pairs_i: np.ndarray
    pairs_j: np.ndarray
    t_observed: np.ndarray
    alpha: float
    B: int

    @property
    def n_pairs(self) -> int:
        return int(self.asl.size)

    def asl_curve(self):
        """The ASL curve: (pair rank 1..n_pairs, ASLs sorted ascending)."""
        return np.arange(1, self.asl.size + 1), np.sort(self.asl)

    def asl_matrix(self, n_systems: int | None = None) -> np.ndarray:
        """ASLs as a symmetric (n_systems, n_systems) matrix, NaN on the diagonal."""
        n = int(max(self.pairs_j.max(initial=0) + 1, 0)) if n_systems is None else n_systems
        out = np.full((n, n), np.nan)
        out[self.pairs_i, self.pairs_j] = out[self.pairs_j, self.pairs_i] = self.asl
        return out

    def plot(self, ax=None, label: str | None = None, path=None):
        """Plot the sorted ASL curve (Sakai 2006) with matplotlib (Agg canvas).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw into these axes (e.g. to overlay several measures); otherwise a new
            figure is created without touching pyplot.
        label : str, optional
            Legend label of the curve.
        path : str or path-like, optional
            Save the figure there (PNG, PDF, ... by extension).

        Returns
        -------
        matplotlib.figure.Figure
        """
        fig, ax = axes_or_new(ax)
        x, y = self.asl_curve()
        ax.plot(x, y, drawstyle="steps-post",
                label=label if label is not None else f"power = {self.power:.3f}")
        ax.axhline(self.alpha, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlabel("system pairs sorted by ASL")
        ax.set_ylabel(f"achieved significance level (B = {self.B})")
        ax.set_xlim(0, x[-1] if x.size else 1)
        ax.set_ylim(0, max(0.2, min(1.0, 2 * self.alpha)))
        ax.legend(loc="upper left")
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        return fig


def discriminative_power(matrix, B: int = 1000, alpha: float = 0.05, seed=None) -> DiscriminativePower:
    r"""Discriminative power of a measure by the paired bootstrap test (Sakai 2006).

    For every pair (i, j), i < j, of rows of ``matrix`` the achieved significance
    level of the paired t statistic is estimated with ``B`` bootstrap resamples of
    the null-shifted per-topic differences (see :func:`bootstrap_asl`):

    .. math:: \mathrm{ASL}_{ij} = \frac1B \#\{b : |t(w^{*b}_{ij})| \ge |t(z_{ij})|\},
              \qquad \mathrm{power} = \frac{\#\{(i,j) : \mathrm{ASL}_{ij} < \alpha\}}{\binom{n_s}{2}}

    Resample ``b`` uses the same topic indices for every pair (a counter-based
    stream keyed by ``(seed, b)``), so each pair's ASL equals
    ``bootstrap_asl(matrix[i] - matrix[j], B, seed)[1]``, and the result is the
    same for any number of Numba threads.

    Parameters
    ----------
    matrix : array_like, shape (n_systems, n_topics)
        Per-topic scores of one measure (n_systems >= 2, n_topics >= 2).
    B : int, default 1000
        Bootstrap resamples per pair.
    alpha : float, default 0.05
        Significance level.
    seed : int or None, default None
        Non-negative seed; None draws fresh entropy.

    Returns
    -------
    DiscriminativePower
        ``power``, per-pair ``asl``, the sorted ASL curve (``asl_curve()``) and ``plot()``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.stats import discriminative_power
    >>> rng = np.random.default_rng(0)
    >>> m = rng.random((5, 20)) + np.linspace(0, 0.5, 5)[:, None]
    >>> dp = discriminative_power(m, B=500, seed=1)
    >>> dp.asl.shape, 0.0 <= dp.power <= 1.0
    ((10,), True)
    """
    M = as_matrix(matrix)
    B = check_B(B)
    alpha = check_alpha(alpha)
    I, J = pair_indices(M.shape[0])
    D = M[I] - M[J]
    t = t_statistic(D)
    W = D - D.mean(axis=1, keepdims=True)  # null-shifted differences
    counts = _kernels.bootstrap_counts(W, threshold(np.abs(t)), seed_key(seed), B)
    asl = counts / B
    return DiscriminativePower(float(np.mean(asl < alpha)), asl, I, J, t, alpha, B)
