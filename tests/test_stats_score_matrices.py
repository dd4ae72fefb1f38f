"""rankjit.stats.score_matrices: per-topic matrices of several TREC runs through the readers."""

import numpy as np
import pytest

from rankjit.io import align, read_trec_qrels, read_trec_run
from rankjit.stats import score_matrices


def test_score_matrices_equal_one_aligned_run_at_a_time(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 z 2\n2 0 c 1\n2 0 d 1\n")
    run1 = tmp_path / "run1"
    run1.write_text("1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n2 Q0 d 1 1.0 r1\n2 Q0 x 2 0.5 r1\n")
    run2 = tmp_path / "run2"
    run2.write_text("1 Q0 b 1 3.0 r2\n1 Q0 z 2 2.0 r2\n2 Q0 c 1 9.0 r2\n")
    topics, names, mats = score_matrices(qrels, [run1, run2], ["AP", "nDCG(gain='linear')@2"])
    assert topics == ["1", "2"] and names == ["r1", "r2"]
    q = read_trec_qrels(qrels)
    for i, path in enumerate((run1, run2)):
        res = align(read_trec_run(path), q, complete=True).evaluate(["AP", "nDCG(gain='linear')@2"], per_query=True)
        np.testing.assert_array_equal(mats["AP"][i], res["AP"])
        np.testing.assert_array_equal(mats["nDCG(gain='linear')@2"][i], res["nDCG(gain='linear')@2"])
    # by hand, run1 topic 1: relevant a (rank 1), z unretrieved; R = 2 -> AP = (1/1) / 2
    assert mats["AP"][0, 0] == 0.5
    # run2 topic 2: c at rank 1, d unretrieved -> AP = 1/2
    assert mats["AP"][1, 1] == 0.5


def test_score_matrices_needs_two_topics(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 1.0 r\n")
    with pytest.raises(ValueError, match="need judgments for at least 2 topics"):
        score_matrices(qrels, [run], ["AP"])
