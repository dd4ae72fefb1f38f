"""Meta-evaluation: significance tests, discriminative power, stability, robustness.

Matrices are ``(n_systems, n_topics)`` float arrays of per-topic scores of one
measure.  Resampling tests run in Numba kernels with counter-based random
streams: a fixed seed gives the same p-value on every call and for any number
of threads.  scipy, pandas and matplotlib are imported only by the functions
that need them.

Significance
    :func:`paired_ttest`, :func:`randomization_test` (Fisher), :func:`bootstrap_test`
    and :func:`bootstrap_asl` (Sakai 2006), :func:`paired_test`,
    :func:`correct_pvalues` (Bonferroni, Holm, Benjamini-Hochberg), :func:`compare`.
Discriminative power
    :func:`discriminative_power`.
Stability (generalizability theory)
    :func:`gtheory`, :func:`stable_discount`.
Robustness and agreement
    :func:`judgment_robustness`, :func:`metric_agreement`, :func:`pairwise_differences`.
"""
from __future__ import annotations

from rankjit._lazy import lazy_names

#: public name -> (module that defines it, name there); loaded on first use (PEP 562),
#: so that ``rankjit compare`` or ``import rankjit.stats._cli`` does not import every part
_PUBLIC = {
    "GTheory": ("rankjit.stats._gtheory", "GTheory"),
    "gtheory": ("rankjit.stats._gtheory", "gtheory"),
    "DiscriminativePower": ("rankjit.stats._power", "DiscriminativePower"),
    "discriminative_power": ("rankjit.stats._power", "discriminative_power"),
    "Agreement": ("rankjit.stats._robustness", "Agreement"),
    "RobustnessResult": ("rankjit.stats._robustness", "RobustnessResult"),
    "judgment_robustness": ("rankjit.stats._robustness", "judgment_robustness"),
    "metric_agreement": ("rankjit.stats._robustness", "metric_agreement"),
    "pairwise_differences": ("rankjit.stats._robustness", "pairwise_differences"),
    "StabilityResult": ("rankjit.stats._stability", "StabilityResult"),
    "rank_gains": ("rankjit.stats._stability", "rank_gains"),
    "stable_discount": ("rankjit.stats._stability", "stable_discount"),
    "standard_discounts": ("rankjit.stats._stability", "standard_discounts"),
    "Comparison": ("rankjit.stats._tests", "Comparison"),
    "TestResult": ("rankjit.stats._tests", "TestResult"),
    "bootstrap_asl": ("rankjit.stats._tests", "bootstrap_asl"),
    "bootstrap_test": ("rankjit.stats._tests", "bootstrap_test"),
    "compare": ("rankjit.stats._tests", "compare"),
    "correct_pvalues": ("rankjit.stats._tests", "correct_pvalues"),
    "paired_test": ("rankjit.stats._tests", "paired_test"),
    "paired_ttest": ("rankjit.stats._tests", "paired_ttest"),
    "randomization_test": ("rankjit.stats._tests", "randomization_test"),
    "fisher_test": ("rankjit.stats._tests", "randomization_test"),
    "score_matrices": ("rankjit.stats._trecdata", "score_matrices"),
}


__getattr__, __dir__ = lazy_names("rankjit.stats", _PUBLIC, globals())


__all__ = [
    "Agreement",
    "Comparison",
    "DiscriminativePower",
    "GTheory",
    "RobustnessResult",
    "StabilityResult",
    "TestResult",
    "bootstrap_asl",
    "bootstrap_test",
    "compare",
    "correct_pvalues",
    "discriminative_power",
    "fisher_test",
    "gtheory",
    "judgment_robustness",
    "metric_agreement",
    "paired_test",
    "paired_ttest",
    "pairwise_differences",
    "rank_gains",
    "score_matrices",
    "randomization_test",
    "stable_discount",
    "standard_discounts",
]
