"""Significance tests of rankjit.stats: exact enumeration, scipy agreement, seeds, threads, corrections."""
import itertools

import numba
import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from rankjit import stats
from rankjit.stats import _kernels


# --------------------------------------------------------------------------- helpers
def t_of(x):
    """Paired t of the rows of x (plain numpy, ddof=1); sd = 0 -> 0 or +/-inf."""
    x = np.atleast_2d(x)
    n = x.shape[1]
    m = x.mean(axis=1)
    sd = x.std(axis=1, ddof=1)
    out = np.empty(len(m))
    for i in range(len(m)):
        if sd[i] > 0:
            out[i] = m[i] / (sd[i] / np.sqrt(n))
        else:
            out[i] = 0.0 if m[i] == 0 else np.sign(m[i]) * np.inf
    return out


def exact_bootstrap_asl(z):
    """ASL over all n**n equally likely ordered resamples of the null-shifted differences."""
    z = np.asarray(z, float)
    n = z.size
    w = z - z.mean()
    t_obs = abs(t_of(z)[0])
    idx = np.array(list(itertools.product(range(n), repeat=n)))
    t_all = np.abs(t_of(w[idx]))
    return float(np.mean(t_all >= t_obs * (1 - 1e-9)))


def exact_fisher_p(d):
    """Exact two-sided randomisation p-value over all 2**n sign vectors."""
    d = np.asarray(d, float)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
    sums = np.abs(signs @ d)
    return float(np.mean(sums >= abs(d.sum()) * (1 - 1e-9)))


def mc_tolerance(p, B, z=4.5):
    return z * np.sqrt(max(p * (1 - p), 1.0 / B) / B) + 1e-12


# --------------------------------------------------------------------------- t-test
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ttest_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.random(25)
    b = a + rng.normal(0.03, 0.1, 25)
    r = stats.paired_ttest(a, b)
    ref = scipy_stats.ttest_rel(a, b)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert r.mean_difference == pytest.approx(np.mean(a - b))
    assert r.n == 25


def test_ttest_hand_example():
    # z = (0.1, 0.1, 0.2, 0.0): mean 0.1, sd = sqrt(0.02/3), t = 0.1 / (sd / 2)
    r = stats.paired_ttest([0.5, 0.6, 0.7, 0.4], [0.4, 0.5, 0.5, 0.4])
    sd = np.sqrt(((0.0) ** 2 * 2 + 0.1**2 + 0.1**2) / 3)
    assert r.statistic == pytest.approx(0.1 / (sd / 2.0))


def test_ttest_constant_differences():
    assert stats.paired_ttest([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]).pvalue == 1.0
    assert stats.paired_ttest([1.5, 2.5, 3.5], [1.0, 2.0, 3.0]).pvalue == 0.0


# --------------------------------------------------------------------------- bootstrap
TINY = np.array([0.30, -0.10, 0.25, 0.05, 0.40, -0.05])


def test_bootstrap_asl_agrees_with_enumeration():
    exact = exact_bootstrap_asl(TINY)
    assert 0.02 < exact < 0.98  # a non-degenerate case
    B = 20000
    t, asl = stats.bootstrap_asl(TINY, B=B, seed=11)
    assert t == pytest.approx(scipy_stats.ttest_1samp(TINY, 0.0).statistic)
    assert abs(asl - exact) <= mc_tolerance(exact, B)


def test_bootstrap_kernel_equals_numpy_recomputation_with_same_draws():
    """The compiled count equals a numpy recomputation over the same resample indices."""
    z = np.array([0.2, -0.1, 0.05, 0.3, 0.0, 0.12, -0.02])
    key = 987654321
    B = 300
    w = z - z.mean()
    thr = abs(t_of(z)[0]) * (1 - 1e-9)
    idx = np.array([_kernels.resample_indices(key, b, z.size) for b in range(B)])
    assert idx.min() >= 0 and idx.max() < z.size
    expected = int(np.sum(np.abs(t_of(w[idx])) >= thr))
    got = _kernels.bootstrap_counts(w[None, :], np.array([thr]), key, B)[0]
    assert got == expected


def test_resample_indices_are_uniform():
    n, B = 5, 4000
    idx = np.concatenate([_kernels.resample_indices(3, b, n) for b in range(B)])
    counts = np.bincount(idx, minlength=n)
    chi2 = scipy_stats.chisquare(counts).pvalue
    assert chi2 > 1e-4


# --------------------------------------------------------------------------- Fisher
D10 = np.array([0.12, -0.03, 0.08, 0.2, -0.1, 0.05, 0.0, 0.15, -0.04, 0.07])


def test_fisher_agrees_with_enumeration():
    exact = exact_fisher_p(D10)
    assert 0.02 < exact < 0.98
    B = 20000
    r = stats.randomization_test(D10, np.zeros_like(D10), B=B, seed=5)
    assert r.statistic == pytest.approx(D10.mean())
    assert abs(r.pvalue - exact) <= mc_tolerance(exact, B)


def test_fisher_kernel_equals_numpy_recomputation_with_same_signs():
    d = np.random.default_rng(4).normal(0.02, 0.1, 70)  # > 64 topics: two draws per permutation
    key, B = 42, 200
    thr = abs(np.cumsum(d)[-1]) * (1 - 1e-9)
    signs = np.array([_kernels.flip_signs(key, b, d.size) for b in range(B)])
    assert set(np.unique(signs)) == {-1.0, 1.0}
    expected = int(np.sum(np.abs(signs @ d) >= thr))
    got = _kernels.fisher_counts(d[None, :], np.array([thr]), key, B)[0]
    assert got == expected


def test_fisher_zero_difference_gives_one():
    a = np.array([0.1, 0.4, 0.3])
    assert stats.randomization_test(a, a, B=100, seed=0).pvalue == 1.0


# --------------------------------------------------------------------------- seeds & threads
def test_seeded_runs_repeat_and_seeds_differ():
    rng = np.random.default_rng(9)
    a, b = rng.random(40), rng.random(40)
    p1 = stats.randomization_test(a, b, B=3000, seed=123).pvalue
    p2 = stats.randomization_test(a, b, B=3000, seed=123).pvalue
    assert p1 == p2
    asl1 = stats.bootstrap_asl(a - b, B=3000, seed=123)
    assert asl1 == stats.bootstrap_asl(a - b, B=3000, seed=123)
    # a different seed gives different draws
    assert not np.array_equal(_kernels.resample_indices(stats._common.seed_key(1), 0, 40),
                              _kernels.resample_indices(stats._common.seed_key(2), 0, 40))


def test_results_identical_for_any_thread_count(monkeypatch):
    monkeypatch.setattr(_kernels, "PARALLEL_MIN_WORK", 0)  # force the parallel drivers
    rng = np.random.default_rng(3)
    m = rng.random((4, 30)) + np.linspace(0, 0.2, 4)[:, None]
    old = numba.get_num_threads()
    results = []
    try:
        for nt in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(nt)
            fisher = stats.randomization_test(m[0], m[1], B=700, seed=8).pvalue
            boot = stats.bootstrap_asl(m[0] - m[2], B=700, seed=8)
            dp = stats.discriminative_power(m, B=300, seed=8).asl
            results.append((fisher, boot, dp))
    finally:
        numba.set_num_threads(old)
    for fisher, boot, dp in results[1:]:
        assert fisher == results[0][0]
        assert boot == results[0][1]
        np.testing.assert_array_equal(dp, results[0][2])
    # serial driver agrees with the parallel one as well
    monkeypatch.setattr(_kernels, "PARALLEL_MIN_WORK", 10**18)
    assert stats.randomization_test(m[0], m[1], B=700, seed=8).pvalue == results[0][0]


# --------------------------------------------------------------------------- corrections
def holm_rejects(p, alpha):
    order = np.argsort(p)
    m = len(p)
    rej = np.zeros(m, bool)
    for step, i in enumerate(order):
        if p[i] <= alpha / (m - step):
            rej[i] = True
        else:
            break
    return rej


def bh_rejects(p, alpha):
    order = np.argsort(p)
    m = len(p)
    k = 0
    for rank, i in enumerate(order, start=1):
        if p[i] <= rank * alpha / m:
            k = rank
    rej = np.zeros(m, bool)
    rej[order[:k]] = True
    return rej


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_corrections_match_step_procedures(seed, alpha):
    p = np.random.default_rng(seed).beta(0.4, 3.0, size=12)
    np.testing.assert_array_equal(stats.correct_pvalues(p, "holm") <= alpha, holm_rejects(p, alpha))
    np.testing.assert_array_equal(stats.correct_pvalues(p, "bh") <= alpha, bh_rejects(p, alpha))
    np.testing.assert_allclose(stats.correct_pvalues(p, "bonferroni"), np.minimum(1, p * 12))
    np.testing.assert_array_equal(stats.correct_pvalues(p, None), p)


def test_corrections_hand_example():
    # Holm: sorted .01 .03 .04 -> 3*.01, max(.03, 2*.03), max(.06, 1*.04)
    np.testing.assert_allclose(stats.correct_pvalues([0.01, 0.04, 0.03], "holm"), [0.03, 0.06, 0.06])
    # BH: 3*.01/1, 3*.03/2 = .045, 3*.04/3 = .04 -> step-up minimum .04
    np.testing.assert_allclose(stats.correct_pvalues([0.01, 0.04, 0.03], "bh"), [0.03, 0.04, 0.04])


def test_correction_bad_input():
    with pytest.raises(ValueError, match="unknown correction"):
        stats.correct_pvalues([0.1], "sidak")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        stats.correct_pvalues([0.1, 1.5], "holm")


# --------------------------------------------------------------------------- compare
def make_matrix(seed=0, n_topics=30):
    rng = np.random.default_rng(seed)
    base = rng.random(n_topics)
    return np.vstack([base, base + 0.15 + 0.05 * rng.normal(size=n_topics), base + 0.01 * rng.normal(size=n_topics)])


def test_compare_t_matches_scipy_and_markers():
    m = make_matrix()
    c = stats.compare(m, ["a0", "b0", "c0"], test="t", correction="none")
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        ref = scipy_stats.ttest_rel(m[i], m[j]).pvalue
        assert c.pvalues["score"][i, j] == pytest.approx(ref, rel=1e-10)
        assert c.pvalues["score"][j, i] == pytest.approx(ref, rel=1e-10)
    # markers follow the p-values and the means
    for i in range(3):
        expect = "".join("abc"[j] for j in range(3)
                         if j != i and c.pvalues["score"][i, j] < 0.05 and m[i].mean() > m[j].mean())
        assert c.markers(0)[i] == expect
    assert "b" not in c.markers(0)[1] and "a" in c.markers(0)[1]
    md = c.to_markdown()
    assert "| (b) b0 |" in md and "<sup>" in md
    tex = c.to_latex()
    assert r"\begin{tabular}" in tex and "$^{" in tex
    df = c.to_dataframe()
    assert list(df.index) == ["a0", "b0", "c0"]
    np.testing.assert_allclose(df["score"].to_numpy(), m.mean(axis=1))


def test_compare_corrections_and_tests():
    m = make_matrix(1)
    raw = stats.compare(m, test="fisher", correction="none", B=2000, seed=1)
    holm = stats.compare(m, test="fisher", correction="holm", B=2000, seed=1)
    iu = np.triu_indices(3, 1)
    np.testing.assert_allclose(holm.adjusted["score"][iu], stats.correct_pvalues(raw.pvalues["score"][iu], "holm"))
    # each pair's p-value equals the two-system test with the same seed
    assert raw.pvalues["score"][0, 2] == stats.randomization_test(m[0], m[2], B=2000, seed=1).pvalue
    boot = stats.compare(m, test="bootstrap", correction="bh", B=2000, seed=1)
    assert boot.pvalues["score"][1, 2] == stats.bootstrap_asl(m[1] - m[2], B=2000, seed=1)[1]


def test_compare_baseline_and_multiple_measures():
    m = make_matrix(2)
    c = stats.compare({"nDCG@10": m, "AP": m[[1, 0, 2]]}, ["x", "y", "z"], baseline="x", correction="none")
    assert c.measures == ["nDCG@10", "AP"]
    assert np.isnan(c.pvalues["nDCG@10"][1, 2])  # not tested in baseline mode
    assert c.markers("nDCG@10")[1] == "+"
    assert c.markers("AP")[1] == "-"  # in AP x is the strongest system
    assert "baseline x" in c.to_markdown()


def test_compare_bad_input():
    m = make_matrix()
    with pytest.raises(ValueError, match="system_names has 2 names for 3 systems"):
        stats.compare(m, ["a", "b"])
    with pytest.raises(ValueError, match="unknown test"):
        stats.compare(m, test="wilcoxon")
    with pytest.raises(ValueError, match="alpha"):
        stats.compare(m, alpha=1.5)
    with pytest.raises(ValueError, match="baseline"):
        stats.compare(m, baseline="nope")
    with pytest.raises(ValueError, match="same number of systems"):
        stats.compare({"a": m, "b": m[:2]})


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "fn",
    [stats.paired_ttest, lambda a, b: stats.randomization_test(a, b, B=10),
     lambda a, b: stats.bootstrap_test(a, b, B=10)],
)
def test_paired_bad_input(fn):
    with pytest.raises(ValueError, match="same number of topics"):
        fn([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ValueError, match="at least 2 topics"):
        fn([0.1], [0.2])
    with pytest.raises(ValueError, match="NaN"):
        fn([0.1, np.nan, 0.3], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="1-D"):
        fn([[0.1, 0.2]], [[0.1, 0.2]])
    with pytest.raises(TypeError, match="numeric"):
        fn(["a", "b"], [0.1, 0.2])


def test_matrix_bad_input():
    with pytest.raises(ValueError, match="at least 2 systems"):
        stats.compare(np.ones((1, 5)))
    with pytest.raises(ValueError, match="at least 2 topics"):
        stats.discriminative_power(np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"NaN or infinite values in rows \[1\]"):
        stats.gtheory(np.array([[0.1, 0.2], [np.nan, 0.3]]))
    with pytest.raises(ValueError, match="2-D"):
        stats.gtheory(np.ones(4))


def test_B_and_seed_validation():
    with pytest.raises(ValueError, match="B must be >= 1"):
        stats.bootstrap_asl([0.1, 0.2, 0.3], B=0)
    with pytest.raises(TypeError, match="B must be a positive integer"):
        stats.bootstrap_asl([0.1, 0.2, 0.3], B=10.5)
    with pytest.raises(ValueError, match="seed must be non-negative"):
        stats.randomization_test([0.1, 0.2], [0.2, 0.1], seed=-1)
    with pytest.raises(TypeError, match="seed"):
        stats.randomization_test([0.1, 0.2], [0.2, 0.1], seed="x")
