"""The two TREC 2012 Web track runs (../shared/data/web2012) compared with every test, and the CLI."""
import collections
import pathlib

import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from rankjit import stats

DATA = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data" / "web2012"
QRELS = DATA / "qrels.adhoc.txt"
RUNS = [DATA / "run.ql.cata.txt", DATA / "run.rm.cata.txt"]

needs_data = pytest.mark.skipif(
    not all(p.exists() for p in [QRELS, *RUNS]),
    reason=f"TREC 2012 Web track data not found in {DATA} (shared data folder absent)",
)


def read_pairs(path, n_fields):
    out = collections.defaultdict(dict)
    for line in open(path):
        f = line.split()
        if len(f) >= n_fields:
            out[f[0]][f[2]] = int(f[3]) if n_fields == 4 else float(f[4])
    return out


@pytest.fixture(scope="module")
def ap_matrix():
    """Per-topic AP of the two runs, by pytrec_eval (trec_eval) from a few lines of parsing."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = read_pairs(QRELS, 4)
    topics = sorted(qrels, key=int)
    rows = []
    for run in RUNS:
        res = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(read_pairs(run, 6))
        rows.append([res[q]["map"] if q in res else 0.0 for q in topics])
    return np.array(rows)


@needs_data
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_score_matrices_match_trec_eval(ap_matrix):
    pytest.importorskip("rankjit.io")
    from rankjit.stats._trecdata import score_matrices

    topics, names, mats = score_matrices(QRELS, RUNS, ["AP"])
    assert len(topics) == 50 and names == ["run.ql.cata.txt", "run.rm.cata.txt"]
    np.testing.assert_allclose(mats["AP"], ap_matrix, atol=1e-4)  # trec_eval prints 4 decimals


@needs_data
def test_every_test_on_real_runs(ap_matrix):
    a, b = ap_matrix
    d = a - b
    # t-test against scipy
    t = stats.paired_ttest(a, b)
    ref = scipy_stats.ttest_rel(a, b)
    assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    # Fisher: reproducible, and within Monte-Carlo error of an independent numpy estimate
    B = 5000
    f1 = stats.randomization_test(a, b, B=B, seed=2012)
    assert f1.pvalue == stats.randomization_test(a, b, B=B, seed=2012).pvalue
    rng = np.random.default_rng(0)
    signs = rng.choice([-1.0, 1.0], size=(B, d.size))
    p_np = np.mean(np.abs(signs @ d) >= abs(d.sum()) * (1 - 1e-9))
    assert abs(f1.pvalue - p_np) <= 4.5 * np.sqrt(2 * max(p_np * (1 - p_np), 1 / B) / B)
    # bootstrap: same as the discriminative power of the two-run matrix, and close to numpy
    t_obs, asl = stats.bootstrap_asl(d, B=B, seed=2012)
    assert t_obs == pytest.approx(ref.statistic)
    dp = stats.discriminative_power(ap_matrix, B=B, seed=2012)
    assert dp.asl[0] == asl
    w = d - d.mean()
    r = w[rng.integers(0, d.size, size=(B, d.size))]
    asl_np = np.mean(np.abs(r.mean(1) / (r.std(1, ddof=1) / np.sqrt(d.size))) >= abs(t_obs) * (1 - 1e-9))
    assert abs(asl - asl_np) <= 4.5 * np.sqrt(2 * max(asl_np * (1 - asl_np), 1 / B) / B)
    # compare with every test and correction: one pair, so corrections leave p unchanged
    for test in ("t", "fisher", "bootstrap"):
        for corr in ("none", "bonferroni", "holm", "bh"):
            c = stats.compare(ap_matrix, ["ql", "rm"], test=test, correction=corr, B=2000, seed=1)
            assert c.adjusted["score"][0, 1] == c.pvalues["score"][0, 1]
            sig = c.pvalues["score"][0, 1] < 0.05
            assert (c.markers(0) != ["", ""]) == sig
    # G-theory on the two runs
    g = stats.gtheory(ap_matrix)
    n_s, n_t = ap_matrix.shape
    resid = ap_matrix - ap_matrix.mean(1, keepdims=True) - ap_matrix.mean(0) + ap_matrix.mean()
    assert g.var_interaction == pytest.approx(np.sum(resid**2) / ((n_s - 1) * (n_t - 1)))


@pytest.mark.slow
@needs_data
def test_cli_on_real_runs(capsys, tmp_path):
    pytest.importorskip("rankjit.io")
    pytest.importorskip("matplotlib")
    from rankjit.cli import main

    args = [str(QRELS), *map(str, RUNS), "-m", "AP", "-m", "RR"]
    assert main(["compare", *args, "--test", "fisher", "--correction", "holm", "-B", "2000"]) == 0
    out = capsys.readouterr().out
    assert "50 topics" in out and "| (a) run.ql.cata.txt |" in out and "Fisher randomisation" in out
    png = tmp_path / "asl.png"
    assert main(["analyze", *args, "--stability", "--discriminative-power", "--plot", str(png), "-B", "200"]) == 0
    out = capsys.readouterr().out
    assert "| AP |" in out and "discriminative power" in out and png.stat().st_size > 1000


def test_cli_on_small_files(tmp_path, capsys):
    pytest.importorskip("rankjit.io")
    from rankjit.cli import main

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 d{i} {int(i < 3)}\n" for q in (1, 2, 3) for i in range(6)))
    runs = []
    for r, order in enumerate([(0, 1, 2, 3, 4, 5), (5, 4, 3, 2, 1, 0), (3, 0, 4, 1, 5, 2)]):
        path = tmp_path / f"run{r}"
        path.write_text("".join(f"{q} Q0 d{d} {k + 1} {10 - k} tag{r}\n" for q in (1, 2, 3)
                                for k, d in enumerate(order)))
        runs.append(str(path))
    assert main(["compare", str(qrels), *runs, "-m", "P@3", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("system,label,P@3")
    # P@3 per topic: run0 top d0 d1 d2 -> 1; run1 top d5 d4 d3 -> 0; run2 top d3 d0 d4 -> 1/3
    means = [float(line.split(",")[2]) for line in lines[1:]]
    np.testing.assert_allclose(means, [1.0, 0.0, 1 / 3])
    assert main(["compare", str(qrels), runs[0], "-m", "P@3"]) == 1
    assert "at least 2 runs" in capsys.readouterr().err
    assert main(["analyze", str(qrels), *runs, "-m", "RPP"]) == 1
    assert "RPP is a pairwise measure" in capsys.readouterr().err
