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

from ._gtheory import GTheory, gtheory
from ._power import DiscriminativePower, discriminative_power
from ._robustness import (
    Agreement,
    RobustnessResult,
    judgment_robustness,
    metric_agreement,
    pairwise_differences,
)
from ._stability import StabilityResult, rank_gains, stable_discount, standard_discounts
from ._tests import (
    Comparison,
    TestResult,
    bootstrap_asl,
    bootstrap_test,
    compare,
    correct_pvalues,
    paired_test,
    paired_ttest,
    randomization_test,
)

from rankjit.stats._trecdata import score_matrices  # noqa: E402

fisher_test = randomization_test

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
