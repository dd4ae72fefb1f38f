"""Paired significance tests, multiple-comparison corrections and ``compare``."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from . import _kernels
from ._common import (
    as_matrix,
    as_vector,
    check_alpha,
    check_B,
    pair_indices,
    paired_vectors,
    seed_key,
    t_statistic,
    threshold,
)

TESTS = ("t", "fisher", "bootstrap")
_TEST_ALIASES = {
    "t": "t", "ttest": "t", "t-test": "t", "student": "t",
    "fisher": "fisher", "randomization": "fisher", "randomisation": "fisher", "permutation": "fisher",
    "bootstrap": "bootstrap", "sakai": "bootstrap",
}
CORRECTIONS = ("none", "bonferroni", "holm", "bh")
_CORRECTION_ALIASES = {
    None: "none", "none": "none", "bonferroni": "bonferroni", "holm": "holm",
    "bh": "bh", "fdr": "bh", "benjamini-hochberg": "bh", "fdr_bh": "bh",
}


@dataclasses.dataclass(frozen=True)
class TestResult:
    """Result of a paired test of system A against system B over the same topics.

    Attributes
    ----------
    statistic : float
        The test statistic (t for ``t`` and ``bootstrap``; mean difference for ``fisher``).
    pvalue : float
        Two-sided p-value (the achieved significance level for the resampling tests).
    mean_difference : float
        mean(a - b).
    n : int
        Number of topics.
    B : int or None
        Number of resamples (None for the t-test).
    """

    statistic: float
    pvalue: float
    mean_difference: float
    n: int
    B: int | None = None

    __test__ = False  # not a pytest class


# ---------------------------------------------------------------------------
# per-pair p-values on a matrix of differences (rows = pairs)
# ---------------------------------------------------------------------------
def _t_pvalues(D: np.ndarray):
    from scipy import stats as sps

    n = D.shape[1]
    t = t_statistic(D)
    p = 2.0 * sps.t.sf(np.abs(t), df=n - 1)
    return t, p


def _fisher_pvalues(D: np.ndarray, B: int, key: int):
    # observed sum in the kernel's order (left to right), so that the identity
    # permutation reproduces it exactly
    observed = np.cumsum(D, axis=1)[:, -1]
    counts = _kernels.fisher_counts(D, threshold(np.abs(observed)), key, B)
    return observed / D.shape[1], counts / B


def _bootstrap_pvalues(D: np.ndarray, B: int, key: int):
    t = t_statistic(D)
    W = D - D.mean(axis=1, keepdims=True)  # null-shifted differences w = z - mean(z)
    counts = _kernels.bootstrap_counts(W, threshold(np.abs(t)), key, B)
    return t, counts / B


def _pvalues(D: np.ndarray, test: str, B: int, key: int):
    if test == "t":
        return _t_pvalues(D)
    if test == "fisher":
        return _fisher_pvalues(D, B, key)
    return _bootstrap_pvalues(D, B, key)


def _check_test(test) -> str:
    name = _TEST_ALIASES.get(str(test).lower()) if isinstance(test, str) else None
    if name is None:
        raise ValueError(f"unknown test {test!r}; expected one of {TESTS}")
    return name


def _check_correction(correction) -> str:
    key = correction.lower() if isinstance(correction, str) else correction
    try:
        return _CORRECTION_ALIASES[key]
    except (KeyError, TypeError):
        raise ValueError(f"unknown correction {correction!r}; expected one of {CORRECTIONS}") from None


# ---------------------------------------------------------------------------
# public tests
# ---------------------------------------------------------------------------
def paired_ttest(a, b) -> TestResult:
    r"""Two-sided paired t-test of per-topic scores ``a`` against ``b``.

    .. math:: t = \bar z / (s_z / \sqrt n), \quad z_i = a_i - b_i,\quad
              p = 2\,P(T_{n-1} \ge |t|)

    with :math:`s_z` the sample standard deviation (ddof = 1); the Student-t
    distribution comes from :mod:`scipy.stats`.  If all differences are equal, t is
    0 (p = 1) when they are 0 and infinite (p = 0) otherwise.

    Parameters
    ----------
    a, b : array_like, shape (n_topics,)
        Per-topic scores of two systems on the same topics (n_topics >= 2).

    Returns
    -------
    TestResult

    Examples
    --------
    >>> from rankjit.stats import paired_ttest
    >>> r = paired_ttest([0.5, 0.6, 0.7, 0.4], [0.4, 0.5, 0.5, 0.4])
    >>> round(r.statistic, 4), round(r.pvalue, 4)
    (2.4495, 0.0917)
    """
    a, b = paired_vectors(a, b)
    D = (a - b)[None, :]
    t, p = _t_pvalues(D)
    return TestResult(float(t[0]), float(p[0]), float(D.mean()), a.size, None)


def randomization_test(a, b, B: int = 10000, seed=None) -> TestResult:
    r"""Fisher's paired randomisation (permutation) test, two-sided.

    Under the null hypothesis the labels "A" and "B" of each topic are
    exchangeable, so each difference :math:`z_i = a_i - b_i` keeps or flips its
    sign with probability 1/2.  For ``B`` random sign vectors :math:`s^{(b)}`:

    .. math:: p = \frac{1}{B}\,\#\{b : |\textstyle\sum_i s^{(b)}_i z_i| \ge |\sum_i z_i|\}

    (the Monte-Carlo estimate of the exact permutation p-value; the statistic is
    the mean difference).  The sign of topic ``i`` in permutation ``b`` is a bit of
    a counter-based random stream keyed by ``(seed, b)``: with a fixed seed the
    p-value is the same on every call and for any number of Numba threads.

    Parameters
    ----------
    a, b : array_like, shape (n_topics,)
        Per-topic scores of two systems.
    B : int, default 10000
        Number of random permutations.
    seed : int or None, default None
        Non-negative seed; None draws fresh entropy.

    Returns
    -------
    TestResult
        ``statistic`` is mean(a - b).

    Examples
    --------
    >>> from rankjit.stats import randomization_test
    >>> r = randomization_test([0.5, 0.6, 0.7, 0.4, 0.9], [0.4, 0.5, 0.5, 0.4, 0.2], B=2000, seed=1)
    >>> r.pvalue == randomization_test([0.5, 0.6, 0.7, 0.4, 0.9], [0.4, 0.5, 0.5, 0.4, 0.2], B=2000, seed=1).pvalue
    True
    """
    a, b = paired_vectors(a, b)
    B = check_B(B)
    stat, p = _fisher_pvalues((a - b)[None, :], B, seed_key(seed))
    return TestResult(float(stat[0]), float(p[0]), float(np.mean(a - b)), a.size, B)


def bootstrap_asl(differences, B: int = 1000, seed=None):
    r"""Achieved significance level of the paired bootstrap test (Sakai 2006).

    With :math:`z` the per-topic differences, :math:`t(z) = \bar z / (s_z/\sqrt n)`
    and the null-shifted differences :math:`w_i = z_i - \bar z`, draw ``B``
    resamples :math:`w^{*b}` of size n with replacement and

    .. math:: \mathrm{ASL} = \frac{1}{B}\,\#\{b : |t(w^{*b})| \ge |t(z)|\}.

    A resample whose values are all equal has t = 0 if its mean is 0 and infinite
    otherwise.  Resample ``b`` draws its indices from a counter-based stream keyed
    by ``(seed, b)``, so a fixed seed gives the same ASL on every call and for any
    thread count, and :func:`discriminative_power` with the same seed reuses the
    same resamples for every pair.

    Parameters
    ----------
    differences : array_like, shape (n_topics,)
        Per-topic score differences a - b (n_topics >= 2).
    B : int, default 1000
        Number of bootstrap resamples.
    seed : int or None, default None
        Non-negative seed; None draws fresh entropy.

    Returns
    -------
    t_observed : float
        The paired t statistic of ``differences``.
    asl : float
        The achieved significance level, in [0, 1].

    Examples
    --------
    >>> from rankjit.stats import bootstrap_asl
    >>> t, asl = bootstrap_asl([0.1, 0.2, 0.0, 0.3, 0.1, 0.2], B=1000, seed=7)
    >>> round(t, 3), asl < 0.05
    (3.503, True)
    """
    z = as_vector(differences, "differences")
    B = check_B(B)
    t, p = _bootstrap_pvalues(z[None, :], B, seed_key(seed))
    return float(t[0]), float(p[0])


def bootstrap_test(a, b, B: int = 1000, seed=None) -> TestResult:
    """Paired bootstrap test of ``a`` against ``b`` (Sakai 2006); see :func:`bootstrap_asl`.

    Examples
    --------
    >>> from rankjit.stats import bootstrap_test
    >>> r = bootstrap_test([0.5, 0.6, 0.7, 0.4, 0.9, 0.3], [0.4, 0.4, 0.7, 0.1, 0.8, 0.1], seed=3)
    >>> 0.0 <= r.pvalue <= 1.0
    True
    """
    a, b = paired_vectors(a, b)
    t, asl = bootstrap_asl(a - b, B=B, seed=seed)
    return TestResult(t, asl, float(np.mean(a - b)), a.size, check_B(B))


def paired_test(a, b, test: str = "t", B: int | None = None, seed=None) -> TestResult:
    """Dispatch to :func:`paired_ttest`, :func:`randomization_test` or :func:`bootstrap_test`.

    ``B`` defaults to 10000 for ``fisher`` and 1000 for ``bootstrap``.

    Examples
    --------
    >>> from rankjit.stats import paired_test
    >>> paired_test([0.2, 0.4, 0.3], [0.1, 0.2, 0.3], test="t").n
    3
    """
    test = _check_test(test)
    if test == "t":
        return paired_ttest(a, b)
    if test == "fisher":
        return randomization_test(a, b, B=10000 if B is None else B, seed=seed)
    return bootstrap_test(a, b, B=1000 if B is None else B, seed=seed)


def correct_pvalues(pvalues, method: str | None = "holm") -> np.ndarray:
    r"""Adjust p-values for multiple comparisons.

    With m p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(m)}`:

    * ``bonferroni``: :math:`\min(1, m p_i)`;
    * ``holm`` (step-down): :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1) p_{(j)})`;
    * ``bh`` (Benjamini-Hochberg, false discovery rate):
      :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m p_{(j)} / j)`;
    * ``none``/None: unchanged.

    A hypothesis is rejected at level alpha when its adjusted p-value is < alpha
    (for ``bh`` this controls the false discovery rate rather than the
    family-wise error rate).

    Parameters
    ----------
    pvalues : array_like
        p-values in [0, 1] (any shape; adjusted jointly).
    method : {'bonferroni', 'holm', 'bh', 'none', None}, default 'holm'

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, same shape as ``pvalues``.

    Examples
    --------
    >>> from rankjit.stats import correct_pvalues
    >>> correct_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    method = _check_correction(method)
    p = np.asarray(pvalues, dtype=np.float64)
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError("p-values must lie in [0, 1] and not be NaN")
    flat = p.ravel()
    m = flat.size
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    else:  # bh
        adj = np.minimum.accumulate((np.minimum(1.0, m * ranked / rank))[::-1])[::-1]
    out = np.empty(m)
    out[order] = adj
    return out.reshape(p.shape)


# ---------------------------------------------------------------------------
# compare: a table of means with significance markers
# ---------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _label(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = _LETTERS[r] + s
    return s


@dataclasses.dataclass
class Comparison:
    """Result of :func:`compare`.

    Attributes
    ----------
    systems : list of str
    measures : list of str
    means : numpy.ndarray, shape (n_systems, n_measures)
    pvalues, adjusted : dict measure -> ndarray (n_systems, n_systems)
        Raw and corrected two-sided p-values of row system vs column system (NaN on
        the diagonal and for pairs not tested).
    better : dict measure -> bool ndarray (n_systems, n_systems)
        ``better[m][i, j]``: system i is significantly better than j
        (adjusted p < alpha and mean_i > mean_j).
    test, correction, alpha, B, baseline
        The settings used.
    """

    systems: list
    measures: list
    means: np.ndarray
    pvalues: dict
    adjusted: dict
    better: dict
    test: str
    correction: str
    alpha: float
    B: int | None
    baseline: int | None

    def labels(self) -> list:
        """Letter label of each system (a, b, ..., z, aa, ...)."""
        return [_label(i) for i in range(len(self.systems))]

    def markers(self, measure) -> list:
        """Per system, the significance marker string for ``measure``.

        All-pairs mode: letters of the systems it is significantly better than.
        Baseline mode: ``+`` (significantly better than the baseline) or ``-`` (worse).
        """
        m = self.measures.index(measure) if not isinstance(measure, int) else measure
        name = self.measures[m]
        better = self.better[name]
        out = []
        for i in range(len(self.systems)):
            if self.baseline is None:
                out.append("".join(_label(j) for j in np.flatnonzero(better[i])))
            else:
                bl = self.baseline
                out.append("+" if better[i, bl] else "-" if better[bl, i] else "")
        return out

    def _legend(self) -> str:
        corr = {"none": "no correction", "bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg"}
        test = {"t": "paired t-test", "fisher": f"Fisher randomisation test (B={self.B})",
                "bootstrap": f"paired bootstrap test (B={self.B})"}[self.test]
        if self.baseline is None:
            what = "letters mark the systems a system is significantly better than"
        else:
            what = f"+/- mark significantly better/worse than the baseline {self.systems[self.baseline]}"
        return f"{what}; {test}, {corr[self.correction]}, alpha = {self.alpha:g}"

    def to_markdown(self, digits: int = 4) -> str:
        """The table as GitHub Markdown (markers as ``<sup>``)."""
        labels = self.labels()
        head = "| System | " + " | ".join(self.measures) + " |"
        rule = "|---|" + "---:|" * len(self.measures)
        rows = [head, rule]
        marks = [self.markers(k) for k in range(len(self.measures))]
        for i, name in enumerate(self.systems):
            cells = []
            for k in range(len(self.measures)):
                mk = marks[k][i]
                cells.append(f"{self.means[i, k]:.{digits}f}" + (f"<sup>{mk}</sup>" if mk else ""))
            rows.append(f"| ({labels[i]}) {name} | " + " | ".join(cells) + " |")
        legend = self._legend()
        return "\n".join(rows) + "\n\n" + legend[0].upper() + legend[1:] + ".\n"

    def to_latex(self, digits: int = 4) -> str:
        """The table as a LaTeX ``tabular`` (markers as superscripts)."""
        def esc(s):
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"),
                         ("#", r"\#"), ("$", r"\$"), ("{", r"\{"), ("}", r"\}")):
                s = s.replace(a, b)
            return s

        labels = self.labels()
        marks = [self.markers(k) for k in range(len(self.measures))]
        lines = [r"\begin{tabular}{l" + "r" * len(self.measures) + "}", r"\toprule",
                 "System & " + " & ".join(esc(m) for m in self.measures) + r" \\", r"\midrule"]
        for i, name in enumerate(self.systems):
            cells = []
            for k in range(len(self.measures)):
                mk = marks[k][i]
                cells.append(f"{self.means[i, k]:.{digits}f}" + (f"$^{{{mk}}}$" if mk else ""))
            lines.append(f"({labels[i]}) {esc(name)} & " + " & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", "% " + self._legend()]
        return "\n".join(lines) + "\n"

    def to_dataframe(self):
        """A :class:`pandas.DataFrame`: per measure a mean column and a ``<measure> sig`` column."""
        import pandas as pd

        data = {}
        for k, m in enumerate(self.measures):
            data[m] = self.means[:, k]
            data[f"{m} sig"] = self.markers(k)
        df = pd.DataFrame(data, index=pd.Index(self.systems, name="system"))
        df.insert(0, "label", self.labels())
        return df

    def __str__(self) -> str:
        return self.to_markdown()


def compare(per_query_matrix, system_names=None, test: str = "t", correction: str | None = "holm",
            alpha: float = 0.05, *, B: int | None = None, seed=None, baseline=None,
            measure: str = "score") -> Comparison:
    r"""Compare systems on per-topic scores: means with significance markers.

    Every pair of systems (or every system against ``baseline``) is tested with
    ``test`` on its per-topic differences; the p-values of each measure are then
    adjusted with ``correction`` over all the pairs tested, and system i is marked
    as significantly better than j when the adjusted p < ``alpha`` and
    :math:`\bar x_i > \bar x_j`.

    Parameters
    ----------
    per_query_matrix : array_like (n_systems, n_topics), or dict measure -> such a matrix
        Per-topic scores; a dict gives one column per measure (all with the same systems).
    system_names : sequence of str, optional
        Defaults to ``S1, S2, ...``.
    test : {'t', 'fisher', 'bootstrap'}, default 't'
        Paired t-test, Fisher randomisation test or paired bootstrap test.
    correction : {'holm', 'bonferroni', 'bh', 'none', None}, default 'holm'
    alpha : float, default 0.05
    B : int, optional
        Resamples for the resampling tests (default 10000).
    seed : int or None
        Seed of the resampling tests (the same seed is used for every pair).
    baseline : int or str, optional
        Test only against this system (index or name).
    measure : str, default 'score'
        Column name when ``per_query_matrix`` is a single matrix.

    Returns
    -------
    Comparison
        With ``to_markdown()``, ``to_latex()`` and ``to_dataframe()``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankjit.stats import compare
    >>> rng = np.random.default_rng(0)
    >>> base = rng.random(30)
    >>> m = np.vstack([base, base + 0.1 + 0.01 * rng.random(30), base - 0.001 * rng.random(30)])
    >>> c = compare(m, ["bm25", "neural", "noisy"], test="fisher", correction="holm", seed=1)
    >>> c.markers(0)
    ['c', 'ac', '']
    """
    test = _check_test(test)
    correction = _check_correction(correction)
    alpha = check_alpha(alpha)
    if isinstance(per_query_matrix, Mapping):
        if not per_query_matrix:
            raise ValueError("per_query_matrix is an empty dict")
        measures = [str(k) for k in per_query_matrix]
        mats = [as_matrix(v, name=f"per_query_matrix[{k!r}]") for k, v in per_query_matrix.items()]
        if len({m.shape[0] for m in mats}) != 1:
            raise ValueError("all measures must have the same number of systems; got "
                             + ", ".join(f"{k}: {m.shape[0]}" for k, m in zip(measures, mats)))
    else:
        measures = [str(measure)]
        mats = [as_matrix(per_query_matrix, name="per_query_matrix")]
    n_sys = mats[0].shape[0]
    if system_names is None:
        system_names = [f"S{i + 1}" for i in range(n_sys)]
    system_names = [str(s) for s in system_names]
    if len(system_names) != n_sys:
        raise ValueError(f"system_names has {len(system_names)} names for {n_sys} systems")
    if baseline is not None:
        if isinstance(baseline, str):
            if baseline not in system_names:
                raise ValueError(f"baseline {baseline!r} is not one of the system names")
            baseline = system_names.index(baseline)
        elif not (isinstance(baseline, (int, np.integer)) and 0 <= baseline < n_sys):
            raise ValueError(f"baseline must be a system name or an index in [0, {n_sys}); got {baseline!r}")
        baseline = int(baseline)
        I = np.array([i for i in range(n_sys) if i != baseline], dtype=np.int64)
        J = np.full(I.size, baseline, dtype=np.int64)
    else:
        I, J = pair_indices(n_sys)
    if test == "t":
        B = None
    else:
        B = check_B(10000 if B is None else B)
    key = seed_key(seed)
    pvals, adjusted, better = {}, {}, {}
    means = np.column_stack([m.mean(axis=1) for m in mats])
    for k, (name, M) in enumerate(zip(measures, mats)):
        _, p = _pvalues(M[I] - M[J], test, B, key)
        padj = correct_pvalues(p, correction)
        P = np.full((n_sys, n_sys), np.nan)
        A = np.full((n_sys, n_sys), np.nan)
        P[I, J] = P[J, I] = p
        A[I, J] = A[J, I] = padj
        sig = np.zeros((n_sys, n_sys), dtype=bool)
        mi, mj = means[I, k], means[J, k]
        hit = padj < alpha
        sig[I[hit & (mi > mj)], J[hit & (mi > mj)]] = True
        sig[J[hit & (mj > mi)], I[hit & (mj > mi)]] = True
        pvals[name], adjusted[name], better[name] = P, A, sig
    return Comparison(system_names, measures, means, pvals, adjusted, better, test, correction,
                      alpha, B, baseline)
