"""Fill ranx's own Numba cache (``cache=True``, in the CI's fresh virtual environment) ahead of the tests.

ranx compiles its metric, comparison and fusion kernels at their first call; the tests that
compare rankjit.compat.ranx with ranx pay that compile on the compiled pass, the critical
path of ``.ci/run``.  ``.ci/run`` runs this script at low priority beside the two passes, so
the compile happens on the core the interpreted pass leaves idle.  It changes no test: a
kernel it has not cached yet is compiled by the test, as before.
"""
import warnings

warnings.filterwarnings("ignore")  # ranx's Numba type-safety and NumPy 0/0 warnings

import ranx  # noqa: E402

FAMILIES = ["hits", "hit_rate", "precision", "recall", "f1", "mrr", "map", "dcg", "dcg_burges", "ndcg",
            "ndcg_burges", "r-precision", "bpref", "rbp.8"]
METRICS = FAMILIES + [f + "@3" for f in FAMILIES if not f.startswith("rbp")] + [f + "-l2" for f in FAMILIES]
QRELS = {"q1": {"d2": 1, "d5": 2, "d7": 0}, "q2": {"d4": 1}}
RUNS = ({"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.1}, "q2": {"d1": 0.2, "d4": 0.8}},
        {"q1": {"d2": 3.0, "d3": 2.0, "d5": 1.0}, "q2": {"d4": 0.5, "d6": 0.7}})

qrels = ranx.Qrels(QRELS)
runs = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(RUNS)]
for make_comparable in (False, True):
    ranx.evaluate(qrels, runs[0], METRICS, return_mean=False, make_comparable=make_comparable)
ranx.evaluate(QRELS, RUNS[0], METRICS, return_mean=False)
for stat_test in ("student", "fisher", "tukey"):
    ranx.compare(qrels, runs, ["ndcg@5", "map", "mrr@3-l2", "rbp.8", "hits@10", "precision@5"], stat_test=stat_test,
                 n_permutations=20)
for norm, method, params in (("min-max", "wsum", {"weights": [0.3, 0.7]}), ("rank", "rrf", None),
                             ("min-max", "mnz", None), ("zmuv", "sum", None), ("rank", "isr", None)):
    ranx.fuse([ranx.Run(r, name=f"r{i}") for i, r in enumerate(RUNS)], norm=norm, method=method, params=params)
print("ranx's kernels compiled")
