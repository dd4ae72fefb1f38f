"""Discriminative power, generalizability theory and stability-optimal discounts."""
import itertools
import math

import numpy as np
import pytest
import reference as ref  # tests/ is on sys.path (conftest.py)

pytest.importorskip("scipy")

from rankjit import stats


# --------------------------------------------------------------------------- discriminative power
def test_power_pairs_equal_bootstrap_asl():
    rng = np.random.default_rng(0)
    m = rng.random((5, 12)) + np.linspace(0, 0.4, 5)[:, None]
    dp = stats.discriminative_power(m, B=400, alpha=0.05, seed=17)
    assert dp.n_pairs == 10
    for k, (i, j) in enumerate(itertools.combinations(range(5), 2)):
        assert (dp.pairs_i[k], dp.pairs_j[k]) == (i, j)
        t, asl = stats.bootstrap_asl(m[i] - m[j], B=400, seed=17)
        assert dp.asl[k] == asl
        assert dp.t_observed[k] == pytest.approx(t)
    assert dp.power == np.mean(dp.asl < 0.05)
    x, y = dp.asl_curve()
    np.testing.assert_array_equal(y, np.sort(dp.asl))
    np.testing.assert_array_equal(x, np.arange(1, 11))
    am = dp.asl_matrix()
    assert am[1, 3] == am[3, 1] == dp.asl[5]


def test_power_agrees_with_enumeration_for_tiny_topic_set():
    """Each pair's ASL is within Monte-Carlo error of the exact ASL over all n**n resamples."""
    m = np.array([[0.30, 0.10, 0.55, 0.20, 0.45],
                  [0.20, 0.15, 0.30, 0.25, 0.10],
                  [0.05, 0.40, 0.10, 0.30, 0.35]])
    B = 20000
    dp = stats.discriminative_power(m, B=B, seed=3)
    idx = np.array(list(itertools.product(range(5), repeat=5)))
    for k, (i, j) in enumerate(zip(dp.pairs_i, dp.pairs_j)):
        z = m[i] - m[j]
        w = z - z.mean()
        t_obs = abs(z.mean() / (z.std(ddof=1) / np.sqrt(5)))
        r = w[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(r.mean(1) / (r.std(1, ddof=1) / np.sqrt(5)))
        t = np.where(np.isnan(t), 0.0, t)  # all-equal resample of zeros (not present here)
        exact = np.mean(t >= t_obs * (1 - 1e-9))
        tol = 4.5 * np.sqrt(max(exact * (1 - exact), 1 / B) / B)
        assert abs(dp.asl[k] - exact) <= tol, (i, j, dp.asl[k], exact)


def test_power_plot(tmp_path):
    pytest.importorskip("matplotlib")
    m = np.random.default_rng(1).random((4, 10))
    dp = stats.discriminative_power(m, B=100, seed=0)
    out = tmp_path / "asl.png"
    fig = dp.plot(path=out, label="random")
    assert out.stat().st_size > 1000
    assert fig.axes[0].get_lines()[0].get_ydata().tolist() == np.sort(dp.asl).tolist()


def test_power_bad_input():
    with pytest.raises(ValueError, match="at least 2 systems"):
        stats.discriminative_power(np.ones((1, 10)))
    with pytest.raises(ValueError, match="alpha"):
        stats.discriminative_power(np.ones((2, 10)), alpha=0)
    with pytest.raises(ValueError, match=r"rows \[0\]"):
        stats.discriminative_power(np.array([[np.nan, 1.0], [0.5, 0.2]]))


# --------------------------------------------------------------------------- G-theory
def least_squares_components(M):
    """Variance components from sums of squares obtained by least-squares model fits."""
    n_s, n_t = M.shape
    y = M.ravel()
    sys_d = np.kron(np.eye(n_s), np.ones((n_t, 1)))  # system dummies, row-major cells
    top_d = np.kron(np.ones((n_s, 1)), np.eye(n_t))  # topic dummies
    one = np.ones((y.size, 1))

    def rss(X):
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        return float(np.sum((y - X @ beta) ** 2))

    rss_full = rss(np.hstack([one, sys_d, top_d]))
    ss_s = rss(np.hstack([one, top_d])) - rss_full  # reduction from adding systems
    ss_t = rss(np.hstack([one, sys_d])) - rss_full  # reduction from adding topics
    ms_s, ms_t = ss_s / (n_s - 1), ss_t / (n_t - 1)
    ms_e = rss_full / ((n_s - 1) * (n_t - 1))
    # expected mean squares: E[MS_s] = s2_e + n_t s2_s, E[MS_t] = s2_e + n_s s2_t, E[MS_e] = s2_e
    return max(0.0, (ms_s - ms_e) / n_t), max(0.0, (ms_t - ms_e) / n_s), ms_e


@pytest.mark.parametrize("shape", [(2, 2), (3, 7), (8, 25)])
def test_gtheory_matches_least_squares(shape):
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    M = rng.random(shape) + rng.random(shape[0])[:, None] + 2 * rng.random(shape[1])[None, :]
    g = stats.gtheory(M)
    vs, vt, ve = least_squares_components(M)
    assert g.var_system == pytest.approx(vs, rel=1e-8, abs=1e-12)
    assert g.var_topic == pytest.approx(vt, rel=1e-8, abs=1e-12)
    assert g.var_interaction == pytest.approx(ve, rel=1e-8, abs=1e-12)
    assert (g.n_systems, g.n_topics) == shape


def test_gtheory_negative_components_set_to_zero():
    # identical system means (rows are permutations of each other): MS_s = 0 < MS_e
    M = np.array([[0.1, 0.5, 0.9], [0.9, 0.1, 0.5], [0.5, 0.9, 0.1]])
    g = stats.gtheory(M)
    assert g.ms_system == pytest.approx(0.0, abs=1e-15)
    assert g.var_system == 0.0
    assert g.var_topic == 0.0  # topic means identical as well
    assert g.var_interaction > 0
    assert g.topics_needed(0.95) == math.inf
    assert g.phi(10) == 0.0


def test_phi_erho2_and_topics_needed_formulas():
    rng = np.random.default_rng(5)
    M = rng.random((6, 20)) + np.linspace(0, 0.3, 6)[:, None]
    g = stats.gtheory(M)
    vs, vt, ve = g.var_system, g.var_topic, g.var_interaction
    for n in (1, 5, 50, 1000):
        assert g.phi(n) == pytest.approx(vs / (vs + (vt + ve) / n))
        assert g.erho2(n) == pytest.approx(vs / (vs + ve / n))
        assert g.erho2(n) >= g.phi(n)
    assert g.phi() == pytest.approx(g.phi(20))
    np.testing.assert_allclose(g.phi(np.array([5, 50])), [g.phi(5), g.phi(50)])
    for target in (0.5, 0.8, 0.95, 0.99):
        n = g.topics_needed(target)
        assert g.phi(n) >= target
        assert n == 1 or g.phi(n - 1) < target
    with pytest.raises(ValueError, match="target_phi"):
        g.topics_needed(1.0)


# --------------------------------------------------------------------------- stability
def synthetic_runs(seed=0, n_sys=4, n_q=12, n_d=10):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=(n_q, n_d))
    labels[0] = 0  # a query without relevant documents
    quality = np.linspace(0.3, 1.5, n_sys)[:, None, None]
    scores = np.round(quality * labels + rng.normal(size=(n_sys, n_q, n_d)), 1)  # rounding makes ties
    return labels, scores


def test_ranked_gains_reproduce_ndcg():
    labels, scores = synthetic_runs()
    k = 5
    rg = stats.rank_gains(labels, scores, k)
    np.testing.assert_array_equal(rg.queries, np.arange(1, 12))
    d = stats.standard_discounts(k)["log2"]
    gain = 2.0 ** np.arange(4) - 1
    got = rg.ndcg(d, gain)
    for s in range(scores.shape[0]):
        # nDCG@k with these gains by grade and discounts by rank, pessimistic ties, 0 without relevant documents
        want = ref.measure_batch("nDCG", labels, scores[s], k, "pessimistic", gain=gain, discount=d)[1:]
        np.testing.assert_allclose(got[s], want, rtol=1e-12)


def test_ranked_gains_agree_with_core_evaluate():
    rankjit = pytest.importorskip("rankjit")
    if not hasattr(rankjit, "evaluate"):
        pytest.skip("rankjit.evaluate not available")
    labels, scores = synthetic_runs(1)
    rg = stats.rank_gains(labels, scores, 5)
    got = rg.ndcg(stats.standard_discounts(5)["log2"], 2.0 ** np.arange(4) - 1)
    for s in range(scores.shape[0]):
        ref = rankjit.evaluate(labels, scores[s], ["nDCG(gain='exp2')@5"], per_query=True)["nDCG(gain='exp2')@5"]
        np.testing.assert_allclose(got[s], ref[rg.queries], rtol=1e-12)


def test_stable_discount_constraints_and_improvement():
    labels, scores = synthetic_runs(2, n_sys=5, n_q=15)
    res = stats.stable_discount(labels, scores, k=5, target_phi=0.95)
    assert [r.name for r in res.rows] == ["log2", "zipf", "linear", "optimal"]
    opt = res.optimal
    w, g = opt.discount, opt.gain
    assert np.all(np.diff(w) <= 1e-9) and w[-1] >= -1e-12  # non-increasing, non-negative
    assert g[0] == 0 and np.all(np.diff(g) >= -1e-9)  # gain(0) = 0, non-decreasing
    assert opt.phi >= max(r.phi for r in res.rows[:3]) - 1e-9
    # the reported G-study is that of the reported weights
    rg = stats.rank_gains(labels, scores, 5)
    g2 = stats.gtheory(rg.ndcg(w, g))
    assert opt.phi == pytest.approx(g2.phi())
    assert opt.topics_needed == g2.topics_needed(0.95)
    # baseline rows use the standard discounts
    np.testing.assert_allclose(res.rows[1].discount, 1.0 / np.arange(1, 6))
    assert "optimal" in res.to_markdown()


def test_stable_discount_fixed_gain():
    labels, scores = synthetic_runs(3)
    res = stats.stable_discount(labels, scores, k=4, optimize_gain=False, gain="linear")
    np.testing.assert_array_equal(res.optimal.gain, np.arange(4.0))


def test_stable_discount_plot(tmp_path):
    pytest.importorskip("matplotlib")
    labels, scores = synthetic_runs(4)
    res = stats.stable_discount(labels, scores, k=4)
    res.plot(path=tmp_path / "d.png")
    assert (tmp_path / "d.png").stat().st_size > 1000


def test_stable_discount_bad_input():
    labels, scores = synthetic_runs()
    with pytest.raises(ValueError, match="does not match labels shape"):
        stats.stable_discount(labels, scores[:, :, :5], k=3)
    with pytest.raises(ValueError, match="at least 2 systems"):
        stats.stable_discount(labels, scores[:1], k=3)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        stats.stable_discount(labels, scores, k=0)
    with pytest.raises(TypeError, match="integer relevance grades"):
        stats.stable_discount(labels + 0.5, scores, k=3)
    with pytest.raises(ValueError, match="relevant document"):
        stats.stable_discount(np.zeros_like(labels), scores, k=3)
