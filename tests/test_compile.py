"""What compiles, when, and what rankjit says about it (issue 13).

Every scenario runs in a fresh interpreter with its own empty ``NUMBA_CACHE_DIR``, so
that "first call" really means an empty cache, and is bounded by a timeout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.jit  # nothing compiles with NUMBA_DISABLE_JIT=1

TIMEOUT = 900
NOTICE = "rankjit: compiling "


def _python(code, cache_dir, *args, env=None):
    full_env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), **(env or {}))
    full_env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)] if code else [sys.executable, *args],
                          capture_output=True, text=True, env=full_env, timeout=TIMEOUT)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


NDCG = """
    import numpy as np, rankjit
    labels = np.array([[2, 0, 1, 0], [0, 0, 3, 1]], dtype=np.int8)
    scores = np.array([[0.9, 0.8, 0.1, 0.3], [0.2, 0.4, 0.3, 0.9]], dtype=np.float32)
    print(rankjit.ndcg(labels, scores, k=3).tolist())
"""


def test_first_call_says_what_it_compiles_and_a_warm_cache_says_nothing(tmp_path):
    first = _python(NDCG, tmp_path)
    lines = [line for line in first.stderr.splitlines() if line.startswith(NOTICE)]
    assert lines, first.stderr
    for line in lines:
        assert "once" in line and str(tmp_path) in line and "uint8 labels" in line  # what, once, where
    assert any("uint8 labels / float32 scores" in line for line in lines)
    assert any("rank_blocks" in line for line in lines) and any("measure_blocks" in line for line in lines)
    # a second process finds everything in the cache: the same answer, not a word on stderr
    second = _python(NDCG, tmp_path)
    assert second.stdout == first.stdout
    assert NOTICE not in second.stderr


def test_the_notice_goes_through_logging_and_can_be_silenced(tmp_path):
    proc = _python('import logging\nlogging.getLogger("rankjit").setLevel(logging.ERROR)\n' + textwrap.dedent(NDCG),
                   tmp_path)
    assert NOTICE not in proc.stderr


def test_ndcg_compiles_only_the_graded_paths(tmp_path):
    # nDCG@10 alone: the binary measures, the cascades, the other tie rules and deep selections
    # are left out of the compiled variant; evaluate() with every family then needs another
    proc = _python(
        """
        import numpy as np, rankjit
        from rankjit._kernels import engine as _engine
        rng = np.random.default_rng(0)
        labels = rng.integers(0, 3, (50, 60)).astype(np.int8)
        scores = rng.random((50, 60)).astype(np.float32)
        rankjit.ndcg(labels, scores, k=10)
        (variant,) = _engine._VARIANTS
        print(variant.name())
        rankjit.evaluate(labels, scores, ["nDCG@10", "AP", "ERR@20"])
        print(len(_engine._VARIANTS))
        sparse = labels * (rng.random(labels.shape) < 0.2)  # about 8 valued documents per row
        rankjit.ndcg(sparse, scores, k=10)
        print(list(_engine._VARIANTS)[-1].name())
        """,
        tmp_path,
    )
    flags, n_variants, sparse_flags = proc.stdout.split("\n")[:3]
    # the default tie rule; no binary, cascade, deep or masked code; grades 0..2 in packed counters;
    # about 40 valued documents per row: the pruning
    assert flags == "pessimistic-graded-packed_grades-prune"
    assert n_variants == "2"
    # few valued documents per row: no pruning compiled
    assert sparse_flags == "pessimistic-graded-packed_grades"


def test_a_second_dtype_pair_or_tie_rule_recompiles_the_rank_pass_only(tmp_path):
    # the measure pass never reads a score: float64 scores after float32 ones, int64 labels after
    # int8 ones (both narrowed to uint8) and another tie rule reuse it; only the rank pass compiles
    proc = _python(
        """
        import sys
        import numpy as np, rankjit
        rng = np.random.default_rng(0)
        labels = rng.integers(0, 3, (40, 30)).astype(np.int8)
        scores = rng.random((40, 30)).astype(np.float32)
        first = rankjit.ndcg(labels, scores, k=10)
        print("---", file=sys.stderr)
        second = rankjit.ndcg(labels.astype(np.int64), scores.astype(np.float64), k=10)
        print("---", file=sys.stderr)
        third = rankjit.ndcg(labels, scores, k=10, ties="optimistic")
        print(np.array_equal(first, second), np.array_equal(first, third))
        """,
        tmp_path,
    )
    first, second, third = proc.stderr.split("---")
    assert "rank_blocks" in first and "measure_blocks" in first, proc.stderr
    for later, what in ((second, "float64"), (third, "optimistic")):
        notices = [line for line in later.splitlines() if line.startswith(NOTICE)]
        assert notices and all("rank_blocks" in line for line in notices), later
        assert what in later
    assert proc.stdout.split() == ["True", "True"]  # distinct float32 scores: no tie, same values


def test_evaluate_after_ndcg_with_the_same_variant_compiles_nothing_more(tmp_path):
    # per-query values and means come from the same compiled function
    proc = _python(
        """
        import numpy as np, rankjit
        labels = np.array([[2, 0, 1, 0], [0, 0, 3, 1]], dtype=np.int8)
        scores = np.array([[0.9, 0.8, 0.1, 0.3], [0.2, 0.4, 0.3, 0.9]], dtype=np.float32)
        rankjit.ndcg(labels, scores, k=3)
        import sys; print("---", file=sys.stderr)
        rankjit.evaluate(labels, scores, ["nDCG@3", "nDCG@2"])
        """,
        tmp_path,
    )
    assert NOTICE not in proc.stderr.split("---")[1]


def test_warmup_command_fills_the_cache_for_the_first_calls(tmp_path):
    proc = _python(None, tmp_path, "-m", "rankjit", "warmup", "--labels", "int8", "--scores", "float32", "-j", "2")
    assert "done" in proc.stderr
    after = _python(
        textwrap.dedent("""
        import numpy as np, rankjit
        rng = np.random.default_rng(1)
        labels = rng.integers(0, 4, (30, 70)).astype(np.int8)
        scores = rng.random((30, 70)).astype(np.float32)
        mask = rng.random((30, 70)) < 0.9
        rankjit.ndcg(labels, scores, k=10)
        rankjit.evaluate(labels, scores, ["P@10", "R@10", "Success@10", "RR", "AP", "Rprec", "DCG@10", "nDCG@10",
                                          "ERR@20", "pFound"])
        rankjit.evaluate(labels, scores, ["nDCG@10", "AP"], mask=mask, per_query=True)  # the full variant, padded
        long_labels = rng.integers(0, 4, (3, 1000)).astype(np.int8)  # rows of > 255 documents (TREC runs)
        long_scores = rng.random((3, 1000)).astype(np.float32)
        rankjit.ndcg(long_labels, long_scores, k=10)
        rankjit.evaluate(long_labels, long_scores, ["nDCG@10", "AP", "ERR@20"])
        long_mask = rng.random((3, 1000)) < 0.9  # padded rows of > 128 documents: the rank pass that selects
        rankjit.evaluate(long_labels, long_scores, ["nDCG@10", "AP"], mask=long_mask, per_query=True)
        """) + FRONT_ENDS_AFTER_WARMUP,
        tmp_path,
    )
    assert "front ends done" in after.stdout, after.stderr
    assert NOTICE not in after.stderr, after.stderr
    # the warm-up function, in-process, on the cache the command filled: it loads the padded and unpadded
    # variants, each pass for the one dtype pair asked for, and compiles nothing more
    api = _python(
        """
        import numpy as np, rankjit
        from rankjit._kernels import engine as _engine
        rankjit.warmup(label_dtypes=(np.int8,), score_dtypes=(np.float32,), front_ends=())
        print(sorted({v.masked for v in _engine._VARIANTS}),
              sorted({len(k.signatures) for passes in _engine._VARIANTS.values() for k in passes}))
        """,
        tmp_path,
    )
    assert api.stdout.split() == ["[False,", "True]", "[1]"], api.stdout
    assert NOTICE not in api.stderr, api.stderr


# the front ends, on inputs larger than the warm-up's (60 queries, rows of 110 documents): nothing more compiles
FRONT_ENDS_AFTER_WARMUP = """
import contextlib, io, os, tempfile
import ir_measures
from rankjit.cli import main
from rankjit.compat import pytrec_eval, ranx
from rankjit.integrations import ir_measures as provider
qrels, run = {}, {}
for q in range(60):
    docs = ["d%d" % d for d in rng.permutation(400)[:150]]
    qrels["q%d" % q] = {d: int(g) for d, g in zip(docs[:80], rng.integers(0, 4, 80))}
    run["q%d" % q] = {d: float(s) for d, s in zip(docs[40:], rng.random(110))}
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "qrels"), "w") as f:
    f.writelines("%s 0 %s %d\\n" % (q, d, g) for q, docs in qrels.items() for d, g in docs.items())
with open(os.path.join(folder, "run"), "w") as f:
    f.writelines("%s Q0 %s %d %r x\\n" % (q, d, i, s) for q, docs in run.items() for i, (d, s) in enumerate(docs.items()))
for options in ([], ["-q", "-m", "all_trec"], ["-J"], ["-c", "-m", "ndcg_cut.10"], ["-m", "map"]):
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["trec_eval", *options, os.path.join(folder, "qrels"), os.path.join(folder, "run")]) == 0
pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut", "P", "recall", "bpref"}).evaluate(run)
ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run), ["ndcg@10", "map", "mrr", "bpref"])
with provider.registered():
    names = ["nDCG@10", "AP", "P@5", "Judged@10", "ERR@20"]
    ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    judgments = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], judgments, rows)
print("front ends done")
"""


def test_warmup_command_refuses_an_unknown_dtype(tmp_path):
    full_env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "rankjit", "warmup", "--labels", "int9"], capture_output=True,
                          text=True, env=full_env, timeout=TIMEOUT)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "rankjit warmup: error: --labels: unknown dtype 'int9'"


SPECIALISED = """
    import sys
    sys.path.insert(0, {folder!r})
    import kernels_mod as km
    from rankjit._config import specialise
    copies = specialise([km.outer, km.inner], "two", {{"FLAG": 2}})
    print(km.outer(10), copies["outer"](10), copies["inner"](10))
    print(copies["outer"].py_func.__qualname__, copies["outer"].py_func.__globals__ is not km.__dict__)
    print(sorted(copies["outer"].stats.cache_hits.values()), sorted(copies["outer"].stats.cache_misses.values()))
"""

KERNELS_MOD = """
from rankjit._config import jit

FLAG = 1


@jit
def inner(x):
    if FLAG == 1:
        return x + 1
    return x * 100


@jit
def outer(x):
    return inner(x) + FLAG
"""


def test_specialise_compiles_copies_with_constants_that_call_each_other(tmp_path):
    # the copies read the replaced globals, call each other's copies (not the originals),
    # keep the originals untouched, and have disk-cache entries of their own
    (tmp_path / "kernels_mod.py").write_text(KERNELS_MOD)
    code = SPECIALISED.format(folder=str(tmp_path))
    first = _python(code, tmp_path / "cache")
    values, names, cache = first.stdout.splitlines()
    assert values.split() == ["12", "1002", "1000"]  # 10+1+1 ; 10*100+2 ; 10*100
    assert names == "outer.two True"
    assert cache == "[] [1]"  # compiled: a cache miss, no hit
    second = _python(code, tmp_path / "cache")
    assert second.stdout.splitlines()[2] == "[1] []"  # loaded from the disk cache
