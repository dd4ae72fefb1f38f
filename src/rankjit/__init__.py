"""rankjit: compiled, exact ranking-quality metrics with explicit conventions.

Nothing is compiled at import; the first call of each kernel compiles it (and caches
it on disk), and :func:`warmup` compiles the common signatures ahead of time.
"""
from rankjit._api import evaluate, evaluate_systems
from rankjit._warmup import warmup
from rankjit.diversity import alpha_dcg, alpha_ndcg, err_ia, s_recall  # registers alpha_nDCG, ERR_IA, ...
from rankjit.metrics import (
    ap,
    dcg,
    err,
    hit_rate,
    ndcg,
    offsets_from_qids,
    pfound,
    precision,
    recall,
    rprec,
    rr,
)
from rankjit.preference import rpp, rpp_matrix  # registers RPP

__version__ = "0.1.0"

__all__ = [
    "evaluate", "evaluate_systems", "warmup",
    "precision", "recall", "hit_rate", "rr", "ap", "rprec", "dcg", "ndcg", "err", "pfound",
    "alpha_ndcg", "alpha_dcg", "err_ia", "s_recall", "rpp", "rpp_matrix",
    "offsets_from_qids", "__version__",
]
