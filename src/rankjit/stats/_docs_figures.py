"""Figures and tables of ``docs/meta-evaluation.md``.

    python -m rankjit.stats._docs_figures docs/img

Builds a synthetic test collection (50 queries x 100 documents, grades 0-3) with
12 systems of increasing quality, evaluates nDCG@10, AP, RR and P@10 with
:func:`rankjit.evaluate`, and writes

* ``stats_asl_curves.png``   - discriminative power (sorted ASL curves);
* ``stats_robustness.png``   - Kendall's tau under incomplete judgments;
* ``stats_discounts.png``    - log2 / Zipf / linear / stability-optimal discounts;

printing the tables shown in the document.  Everything is seeded.
"""
from __future__ import annotations

import os
import sys

import numpy as np

MEASURES = ("nDCG@10", "AP", "RR", "P@10")


def collection(seed: int = 2024, n_sys: int = 12, n_q: int = 50, n_d: int = 100):
    """Labels (n_q, n_d) and scores (n_sys, n_q, n_d) of a synthetic collection."""
    rng = np.random.default_rng(seed)
    labels = rng.choice(4, size=(n_q, n_d), p=[0.80, 0.10, 0.06, 0.04])
    quality = np.linspace(0.2, 0.8, n_sys)[:, None, None]
    affinity = rng.normal(0.0, 0.3, size=(n_sys, n_q, 1))  # system x query interaction
    scores = (quality + affinity) * labels + rng.normal(size=(n_sys, n_q, n_d))
    return labels, scores


def per_query(labels, scores, measures=MEASURES):
    import rankjit

    out = {m: [] for m in measures}
    for s in range(scores.shape[0]):
        res = rankjit.evaluate(labels, scores[s], list(measures), per_query=True)
        for m in measures:
            out[m].append(res[m])
    return {m: np.vstack(v) for m, v in out.items()}


def main(argv=None) -> int:
    from rankjit import stats

    argv = sys.argv[1:] if argv is None else argv
    outdir = argv[0] if argv else os.path.join("docs", "img")
    os.makedirs(outdir, exist_ok=True)
    labels, scores = collection()
    mats = per_query(labels, scores)
    names = [f"sys{i:02d}" for i in range(scores.shape[0])]

    print("## compare (nDCG@10, AP; Fisher, Holm), first 4 systems\n")
    sub = {m: mats[m][[0, 3, 6, 11]] for m in ("nDCG@10", "AP")}
    print(stats.compare(sub, [names[i] for i in (0, 3, 6, 11)], test="fisher", correction="holm",
                        B=10000, seed=1).to_markdown())

    print("## G-theory\n")
    print("| measure | var_system | var_topic | var_interaction | Phi(50) | topics for Phi >= 0.95 |")
    print("|---|---:|---:|---:|---:|---:|")
    for m, M in mats.items():
        g = stats.gtheory(M)
        print(f"| {m} | {g.var_system:.4g} | {g.var_topic:.4g} | {g.var_interaction:.4g} | "
              f"{g.phi(50):.4f} | {g.topics_needed(0.95)} |")

    print("\n## discriminative power (B = 1000, alpha = 0.05)\n")
    print("| measure | power |")
    print("|---|---:|")
    fig, ax = None, None
    for m, M in mats.items():
        dp = stats.discriminative_power(M, B=1000, alpha=0.05, seed=1)
        print(f"| {m} | {dp.power:.3f} |")
        fig = dp.plot(ax=ax, label=f"{m} ({dp.power:.2f})")
        ax = fig.axes[0]
    fig.savefig(os.path.join(outdir, "stats_asl_curves.png"), dpi=120, bbox_inches="tight")

    print("\n## stability-optimal discount and gain for nDCG@10\n")
    res = stats.stable_discount(labels, scores, k=10, target_phi=0.95)
    print(res.to_markdown())
    print("optimal discount:", np.round(res.optimal.discount, 3).tolist())
    print("optimal gain:    ", np.round(res.optimal.gain, 3).tolist())
    res.plot(path=os.path.join(outdir, "stats_discounts.png"))

    print("\n## incomplete judgments (Kendall tau, mean of 5 draws)\n")

    def measure(name):
        import rankjit

        def fn(lab, sc):
            return rankjit.evaluate(lab, sc, [name], per_query=True)[name]

        return fn

    rob = stats.judgment_robustness(labels, scores, {m: measure(m) for m in MEASURES},
                                    fractions=(0.1, 0.3, 0.5, 0.7, 0.9), repeats=5, seed=1)
    summary = rob.summary()
    print("| measure | " + " | ".join(f"{int(f * 100)}% dropped" for f in rob.fractions) + " |")
    print("|---|" + "---:|" * len(rob.fractions))
    for m, (ts, tp) in summary.items():
        print(f"| {m} (systems / preferences) | "
              + " | ".join(f"{a:.3f} / {b:.3f}" for a, b in zip(ts, tp)) + " |")
    rob.plot(path=os.path.join(outdir, "stats_robustness.png"))

    print("\n## agreement of per-query differences with nDCG@10\n")
    print("| measure | Pearson r | sign agreement |")
    print("|---|---:|---:|")
    base = stats.pairwise_differences(mats["nDCG@10"])
    for m in ("AP", "RR", "P@10"):
        ag = stats.metric_agreement(base, stats.pairwise_differences(mats[m]))
        print(f"| {m} | {ag.pearson:.3f} | {ag.sign_agreement:.3f} |")
    print(f"\nfigures written to {outdir}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
