"""`rankjit compare -m RPP` and the stats CLI on rankjit.io's alignment, against plain-Python references."""
from __future__ import annotations

import collections
import pathlib

import numpy as np
import pytest
from reference.preference import rpp_rankings  # tests/ is on sys.path (conftest.py)

pytest.importorskip("pyarrow")
scipy_stats = pytest.importorskip("scipy.stats")

from rankjit.cli import main  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "web2012"
QRELS = DATA / "qrels.adhoc.txt"
RUNS = [DATA / "run.ql.cata.txt", DATA / "run.rm.cata.txt"]
needs_data = pytest.mark.skipif(
    not all(p.exists() for p in [QRELS, *RUNS]),
    reason=f"TREC 2012 Web track data not found in {DATA} (shared data folder absent)",
)


# ---------------------------------------------------------------------------------------------
# plain-Python references
# ---------------------------------------------------------------------------------------------


def read_qrels(path):
    out = collections.defaultdict(dict)
    for line in open(path):
        f = line.split()
        if f:
            out[f[0]][f[2]] = int(f[3])
    return out


def read_ranked(path):
    """{qid: [docno, ...]} in trec_eval order (score descending, docno descending)."""
    out = collections.defaultdict(list)
    for line in open(path):
        f = line.split()
        if f:
            out[f[0]].append((float(f[4]), f[2]))
    return {q: [d for _, d in sorted(v, reverse=True)] for q, v in out.items()}


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


@pytest.fixture()
def small(tmp_path):
    """4 topics; runs retrieve different documents; topic 4 has no relevant document;
    d9 of topic 1 is relevant and retrieved by no run."""
    qrels = write(tmp_path / "qrels", [
        "1 0 d1 1", "1 0 d2 2", "1 0 d3 0", "1 0 d9 1",
        "2 0 d1 1", "2 0 d5 1", "2 0 d6 -2",
        "3 0 d2 1", "3 0 d4 3", "3 0 d7 1",
        "4 0 d1 0",
    ])
    runs = {
        "A": ["1 Q0 d1 1 3 A", "1 Q0 d3 2 2 A", "1 Q0 d2 3 1 A",
              "2 Q0 d5 1 5 A", "2 Q0 d1 2 5 A",          # tie: d5 before d1 (docno descending)
              "3 Q0 d8 1 1 A", "3 Q0 d4 2 0.5 A",
              "4 Q0 d1 1 1 A"],
        "B": ["1 Q0 d2 1 9 B", "1 Q0 d1 2 8 B",
              "2 Q0 d6 1 1 B", "2 Q0 d1 2 0 B",
              "3 Q0 d7 1 2 B", "3 Q0 d2 2 1 B", "3 Q0 d4 3 0 B",
              "4 Q0 d2 1 1 B"],
        "C": ["1 Q0 d9 1 1 C", "2 Q0 d0 1 1 C", "3 Q0 d0 1 1 C", "9 Q0 d1 1 1 C"],
    }
    paths = [write(tmp_path / f"run{name}", lines) for name, lines in runs.items()]
    return qrels, paths


def ref_pairs(qrels_path, run_paths, pairs, weights="uniform", k=None):
    qrels = read_qrels(qrels_path)
    ranked = [read_ranked(p) for p in run_paths]
    topics = sorted(qrels, key=int)
    return np.array([[rpp_rankings(qrels[q], ranked[i].get(q, []), ranked[j].get(q, []), weights, k)
                      for q in topics] for i, j in pairs])


def parse_csv(out):
    lines = out.strip().splitlines()
    assert lines[0] == "measure,run_a,run_b,mean,topics,pvalue,adjusted,significant"
    return [line.rsplit(",", 7) for line in lines[1:]]


# ---------------------------------------------------------------------------------------------
# per-topic values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("weights,k", [("uniform", None), ("inverse", None), ("uniform", 2), ("inverse", 1)])
def test_pairwise_matrices_match_reference(small, weights, k):
    from rankjit.stats._trecdata import load, pairwise_matrices

    qrels, runs = small
    data = load(qrels, runs)
    assert data.topics == ["1", "2", "3", "4"] and data.names == ["A", "B", "C"]
    pairs = [(0, 1), (1, 0), (0, 2), (2, 1), (1, 1)]
    name = f"RPP(weights={weights!r})" + (f"@{k}" if k else "")
    got = pairwise_matrices(data, [name], pairs)[name]
    np.testing.assert_allclose(got, ref_pairs(qrels, runs, pairs, weights, k), rtol=1e-12, atol=1e-15)
    assert np.isnan(got[:, 3]).all()  # topic 4: no relevant document


def test_union_handles_unretrieved_and_ties(small):
    from rankjit.stats._trecdata import load, pairwise_matrices

    qrels, runs = small
    got = pairwise_matrices(load(qrels, runs), ["RPP"], [(0, 1)])["RPP"][0]
    # topic 1, relevant d1 d2 d9 (m = 3): A finds them at 1, 3, -; B at 1, 2, -  -> (0 - 1 + 0) / 3
    # topic 2, relevant d1 d5: A at 1, 2 (tie, d5 first); B at 2, -  -> (1 + 1) / 2
    # topic 3, relevant d2 d4 d7: A at 2, -, -; B at 1, 2, 3  -> (-1 - 1 - 1) / 3
    np.testing.assert_allclose(got[:3], [-1 / 3, 1.0, -1.0])


# ---------------------------------------------------------------------------------------------
# the compare table
# ---------------------------------------------------------------------------------------------


def test_compare_rpp_csv_against_scipy(small, capsys):
    qrels, runs = small
    assert main(["compare", qrels, *runs, "-m", "RPP", "-m", "RPP(weights='inverse')@2", "--format", "csv",
                 "--correction", "bonferroni"]) == 0
    rows = parse_csv(capsys.readouterr().out)
    pairs = [(0, 1), (0, 2), (1, 2)]
    names = ["A", "B", "C"]
    assert [(r[1], r[2]) for r in rows] == [(names[i], names[j]) for i, j in pairs] * 2
    for block, (measure, weights, k) in enumerate([("RPP", "uniform", None),
                                                  ("RPP(weights='inverse')@2", "inverse", 2)]):
        ref = ref_pairs(qrels, runs, pairs, weights, k)[:, :3]  # topic 4 dropped (no relevant document)
        for p, row in enumerate(rows[3 * block: 3 * block + 3]):
            assert row[0].strip('"') == measure
            assert float(row[3]) == pytest.approx(ref[p].mean(), rel=1e-12)
            assert int(row[4]) == 3
            d = ref[p]
            if np.ptp(d) > 0:
                p_ref = scipy_stats.ttest_1samp(d, 0.0).pvalue
                assert float(row[5]) == pytest.approx(p_ref, rel=1e-9)
                assert float(row[6]) == pytest.approx(min(1.0, 3 * p_ref), rel=1e-9)


def test_compare_rpp_markdown_with_listwise_and_baseline(small, capsys):
    qrels, runs = small
    assert main(["compare", qrels, *runs, "-m", "P@2", "-m", "RPP", "--baseline", "B", "--test", "fisher",
                 "-B", "500"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 topics\n") and "| (a) A |" in out  # the listwise table comes first
    assert "| RPP | (a) A | (b) B |" in out and "| RPP | (c) C | (b) B |" in out
    assert "| RPP | (a) A | (c) C |" not in out
    assert "Fisher randomisation test (B=500) of the per-topic values against 0" in out


def test_compare_rpp_significance_marker(tmp_path, capsys):
    # run "good" puts the relevant document first on 12 topics, "bad" last: RPP(good, bad) = 1 everywhere
    qrels = write(tmp_path / "q", [f"{t} 0 r 1" for t in range(1, 13)] + [f"{t} 0 n 0" for t in range(1, 13)])
    good = write(tmp_path / "g", [f"{t} Q0 {d} {i + 1} {2 - i} good" for t in range(1, 13)
                                  for i, d in enumerate(["r", "n"])])
    bad = write(tmp_path / "b", [f"{t} Q0 {d} {i + 1} {2 - i} bad" for t in range(1, 13)
                                 for i, d in enumerate(["n", "r"])])
    assert main(["compare", qrels, good, bad, "-m", "RPP", "--test", "fisher", "-B", "2000"]) == 0
    out = capsys.readouterr().out
    assert "| RPP | (a) good | (b) bad | 1.0000 | 12 |" in out and "| a > b |" in out
    assert main(["compare", qrels, bad, good, "-m", "RPP", "--format", "tex"]) == 0
    out = capsys.readouterr().out
    assert "(a) bad vs (b) good & -1.0000" in out and "b > a" in out and out.startswith(r"\begin{tabular}")


def test_rpp_cli_errors(small, tmp_path, capsys):
    qrels, runs = small
    assert main(["analyze", qrels, *runs, "-m", "RPP"]) == 1
    assert "RPP is a pairwise measure (a preference between two runs): use it with `rankjit compare`" \
        in capsys.readouterr().err
    assert main(["compare", qrels, *runs, "-m", "RPP", "--baseline", "Z"]) == 1
    assert "baseline 'Z' is not one of the run names: A, B, C" in capsys.readouterr().err
    assert main(["compare", qrels, *runs, "-m", "RPP(empty='zero')"]) == 1
    assert "drops topics without relevant documents; do not set empty=" in capsys.readouterr().err
    one = write(tmp_path / "one", ["1 0 d1 1", "2 0 d1 0"])
    assert main(["compare", one, *runs, "-m", "RPP"]) == 1
    assert "RPP: need at least 2 topics with relevant documents; got 1" in capsys.readouterr().err
    assert main(["compare", write(tmp_path / "q1", ["1 0 d1 1"]), *runs, "-m", "AP"]) == 1
    assert "need judgments for at least 2 topics; got 1" in capsys.readouterr().err
    dup = write(tmp_path / "dup", ["1 Q0 d1 1 2 D", "1 Q0 d1 2 1 D"])
    assert main(["compare", qrels, runs[0], dup, "-m", "AP"]) == 1
    assert "document 'd1' is retrieved twice for query '1'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="need at least 2 runs"):
        from rankjit.stats._cli import _load
        import argparse

        _load(argparse.Namespace(measures=["AP"], runs=[runs[0]], qrels=qrels))


def test_listwise_matrices_keep_trec_eval_conventions(small):
    """AP per topic from a plain-Python trec_eval transcription (R counts unretrieved relevant docs)."""
    from rankjit.stats._trecdata import score_matrices

    qrels, runs = small
    topics, names, mats = score_matrices(qrels, runs, ["AP"])
    judged = read_qrels(qrels)
    for r, path in enumerate(runs):
        ranked = read_ranked(path)
        for t, q in enumerate(topics):
            rel = {d for d, g in judged[q].items() if g >= 1}
            hits, s = 0, 0.0
            for i, d in enumerate(ranked.get(q, [])):
                if d in rel:
                    hits += 1
                    s += hits / (i + 1)
            assert mats["AP"][r, t] == pytest.approx(s / len(rel) if rel else 0.0, abs=1e-15)


# ---------------------------------------------------------------------------------------------
# real data
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@needs_data
def test_rpp_on_web2012_against_reference(capsys):
    from rankjit.stats._trecdata import load, pairwise_matrices

    data = load(QRELS, RUNS)
    got = pairwise_matrices(data, ["RPP", "RPP(weights='inverse')@100"], [(0, 1)])
    for name, w, k in (("RPP", "uniform", None), ("RPP(weights='inverse')@100", "inverse", 100)):
        ref = ref_pairs(QRELS, RUNS, [(0, 1)], w, k)
        np.testing.assert_allclose(got[name], ref, rtol=1e-12, atol=1e-15)
    assert main(["compare", str(QRELS), *map(str, RUNS), "-m", "RPP", "--format", "csv"]) == 0
    (row,) = parse_csv(capsys.readouterr().out)
    ref = ref_pairs(QRELS, RUNS, [(0, 1)])[0]
    assert float(row[3]) == pytest.approx(np.nanmean(ref), rel=1e-12)
    assert float(row[5]) == pytest.approx(scipy_stats.ttest_1samp(ref[~np.isnan(ref)], 0.0).pvalue, rel=1e-9)
