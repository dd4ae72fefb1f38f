"""Generalizability theory for system x topic score matrices (Kanoulas & Aslam 2009)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._common import as_matrix


@dataclasses.dataclass(frozen=True)
class GTheory:
    r"""Variance components of a systems x topics design (one score per cell).

    Attributes
    ----------
    var_system, var_topic, var_interaction : float
        :math:`\sigma^2_s`, :math:`\sigma^2_t`, :math:`\sigma^2_{st,e}` (negatives set to 0).
    ms_system, ms_topic, ms_residual : float
        The two-way ANOVA mean squares they come from.
    n_systems, n_topics : int
        Shape of the matrix.
    """

    var_system: float
    var_topic: float
    var_interaction: float
    ms_system: float
    ms_topic: float
    ms_residual: float
    n_systems: int
    n_topics: int

    def phi(self, n=None):
        r"""Dependability coefficient for n topics.

        .. math:: \Phi(n) = \frac{\sigma^2_s}{\sigma^2_s + (\sigma^2_t + \sigma^2_{st,e})/n}

        ``n`` defaults to the number of topics of the matrix; arrays are accepted.
        Without system variance (:math:`\sigma^2_s = 0`) it is 0; without any variance
        (every component 0: the runs score every topic alike, and the topics too) it is
        0/0, undefined: NaN (``rankjit analyze`` prints ``undefined``).

        Examples
        --------
        >>> from rankjit.stats import gtheory
        >>> g = gtheory([[0.2, 0.4, 0.6], [0.3, 0.5, 0.9]])
        >>> round(float(g.phi(50)), 4)
        0.8974
        """
        n = np.float64(self.n_topics) if n is None else np.asarray(n, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.float64(self.var_system) / (self.var_system + (self.var_topic + self.var_interaction) / n)
        return float(out) if np.ndim(out) == 0 else out

    def erho2(self, n=None):
        r"""Generalizability coefficient for n topics.

        .. math:: E\rho^2(n) = \frac{\sigma^2_s}{\sigma^2_s + \sigma^2_{st,e}/n}

        0 when :math:`\sigma^2_s = 0 < \sigma^2_{st,e}`; 0/0, undefined (NaN), when both are 0
        (e.g. two runs that score every topic alike).

        Examples
        --------
        >>> from rankjit.stats import gtheory
        >>> g = gtheory([[0.2, 0.4, 0.6], [0.3, 0.5, 0.9]])
        >>> float(g.erho2(50)) >= float(g.phi(50))
        True
        """
        n = np.float64(self.n_topics) if n is None else np.asarray(n, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.float64(self.var_system) / (self.var_system + self.var_interaction / n)
        return float(out) if np.ndim(out) == 0 else out

    def topics_needed(self, target_phi: float = 0.95):
        r"""Smallest number of topics n with :math:`\Phi(n) \ge` ``target_phi``.

        .. math:: n = \left\lceil \frac{\Phi^*}{1-\Phi^*}\,
                  \frac{\sigma^2_t + \sigma^2_{st,e}}{\sigma^2_s} \right\rceil \quad (\text{at least } 1)

        Returns ``math.inf`` when :math:`\sigma^2_s = 0` (no number of topics suffices;
        ``rankjit analyze`` prints ``unbounded``), 1 when the other components are 0.

        Examples
        --------
        >>> from rankjit.stats import gtheory
        >>> g = gtheory([[0.2, 0.4, 0.6], [0.3, 0.5, 0.9]])
        >>> n = g.topics_needed(0.95)
        >>> g.phi(n) >= 0.95 > g.phi(n - 1)
        True
        """
        target = float(target_phi)
        if not 0.0 < target < 1.0:
            raise ValueError(f"target_phi must be in (0, 1); got {target_phi!r}")
        noise = self.var_topic + self.var_interaction
        if self.var_system <= 0.0:
            return math.inf
        n = max(1, math.ceil(target / (1.0 - target) * noise / self.var_system))
        # guard against rounding at the boundary
        while n > 1 and self.phi(n - 1) >= target:
            n -= 1
        while self.phi(n) < target:
            n += 1
        return n


def variance_components(M: np.ndarray):
    """(ms_system, ms_topic, ms_residual, var_s, var_t, var_st) of a validated matrix."""
    n_s, n_t = M.shape
    grand = M.mean()
    sys_mean = M.mean(axis=1)
    top_mean = M.mean(axis=0)
    ss_s = n_t * np.sum((sys_mean - grand) ** 2)  # SS_s = n_t sum_i (xbar_i. - xbar)^2
    ss_t = n_s * np.sum((top_mean - grand) ** 2)  # SS_t = n_s sum_j (xbar_.j - xbar)^2
    resid = M - sys_mean[:, None] - top_mean[None, :] + grand
    ss_e = np.sum(resid**2)  # SS_st,e
    # Rounding: a sum of squared deviations no larger than deviations of (n_s + n_t) ulps of the
    # largest score would give is 0 (identical runs give 1e-32, not 0, through the grand mean)
    eps = float(np.finfo(np.float64).eps)
    noise = M.size * ((n_s + n_t) * eps * float(np.max(np.abs(M)))) ** 2
    ss_s, ss_t, ss_e = (float(ss) if ss > noise else 0.0 for ss in (ss_s, ss_t, ss_e))
    ms_s = ss_s / (n_s - 1)
    ms_t = ss_t / (n_t - 1)
    ms_e = ss_e / ((n_s - 1) * (n_t - 1))
    var_st = ms_e  # sigma^2_st,e = MS_e
    var_s = _difference(ms_s, ms_e, n_s + n_t) / n_t  # sigma^2_s = (MS_s - MS_e) / n_t
    var_t = _difference(ms_t, ms_e, n_s + n_t) / n_s  # sigma^2_t = (MS_t - MS_e) / n_s
    return ms_s, ms_t, ms_e, var_s, var_t, var_st


def _difference(a, b, n):
    """``a - b`` of two mean squares of ``n`` rows and columns, 0 when it is negative or rounding noise.

    The estimator sets a negative variance component to 0; a difference within ``8 n`` ulps
    of the larger mean square (mean squares equal in exact arithmetic: 9e-18 instead of 0) is
    rounding, and is 0 too, rather than a tiny positive variance (``topics_needed`` 5e16).
    """
    d = a - b
    return d if d > 8.0 * n * float(np.finfo(np.float64).eps) * max(a, b) else 0.0


def gtheory(matrix) -> GTheory:
    r"""Variance components of a systems x topics score matrix (G-study).

    Two-way ANOVA without replication, :math:`x_{ij} = \mu + s_i + t_j + e_{ij}`,
    with :math:`n_s` systems and :math:`n_t` topics:

    .. math::
        MS_s = \frac{n_t \sum_i (\bar x_{i\cdot} - \bar x)^2}{n_s - 1},\quad
        MS_t = \frac{n_s \sum_j (\bar x_{\cdot j} - \bar x)^2}{n_t - 1},\quad
        MS_e = \frac{\sum_{ij} (x_{ij} - \bar x_{i\cdot} - \bar x_{\cdot j} + \bar x)^2}{(n_s-1)(n_t-1)}

        \sigma^2_{st,e} = MS_e,\quad \sigma^2_s = \frac{MS_s - MS_e}{n_t},\quad
        \sigma^2_t = \frac{MS_t - MS_e}{n_s}

    with negative estimates set to 0, and rounding noise too: a sum of squares within
    rounding of 0, or a difference of mean squares within ``8 (n_s + n_t)`` ulps of the
    larger one, is 0 (runs that score every topic alike have :math:`\sigma^2_s = 0`
    exactly, not 1e-32).  The D-study quantities are the methods
    :meth:`GTheory.phi`, :meth:`GTheory.erho2` and :meth:`GTheory.topics_needed`.

    Parameters
    ----------
    matrix : array_like, shape (n_systems, n_topics)
        Per-topic scores (n_systems >= 2, n_topics >= 2, finite).

    Returns
    -------
    GTheory

    Examples
    --------
    >>> from rankjit.stats import gtheory
    >>> g = gtheory([[0.2, 0.4, 0.6], [0.3, 0.5, 0.9]])
    >>> round(g.var_system, 5), round(g.var_topic, 5), round(g.var_interaction, 5)
    (0.01167, 0.06, 0.00667)
    >>> g.topics_needed(0.95)
    109
    """
    M = as_matrix(matrix)
    ms_s, ms_t, ms_e, var_s, var_t, var_st = variance_components(M)
    return GTheory(float(var_s), float(var_t), float(var_st), float(ms_s), float(ms_t), float(ms_e),
                   M.shape[0], M.shape[1])
