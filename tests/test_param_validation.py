"""Counts, levels and thresholds of the front ends go through rankjit._validation (issue 15: one set of
validators, booleans refused wherever a number is expected, nothing truncated).

Before, ``rankjit.io.align(..., max_docs=True)`` ran with 1 document per query, ``max_docs=1.5``
with 1 and ``rel_level=True`` as 1; ``rankjit.compat.ranx.compare(max_p=True)`` compared p-values
with 1; the torch front end's ``padding_value=True`` marked the documents of label 1 as padding.
Each test gives the error type and its whole message.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from rankjit._registry import KINDS, Param, _CHOICE_KINDS, _NUMBER_KINDS
from rankjit._validation import document_limit, integer

BOOL = "got the boolean True (booleans are not numbers here)"


def raises(exc, message, func, *args, **kwargs):
    with pytest.raises(exc, match=f"^{re.escape(message)}$"):
        func(*args, **kwargs)


# ---- the validators ----------------------------------------------------------------------


def test_integer():
    assert integer(3, "n") == 3
    got = integer(np.int64(3), "n")
    assert got == 3 and type(got) is int
    assert integer(-2**70, "n") == -2**70  # any Python int: no bound unless one is asked
    raises(TypeError, f"n must be an integer, {BOOL}", integer, True, "n")
    raises(TypeError, "n must be an integer, got the boolean False (booleans are not numbers here)",
           integer, np.False_, "n")
    raises(TypeError, "n must be an integer, got 1.5 (not an integer)", integer, 1.5, "n")
    raises(TypeError, "n must be an integer, got 2.0 (not an integer)", integer, 2.0, "n")  # not truncated either
    raises(TypeError, "n must be an integer, got '3' of type str", integer, "3", "n")
    raises(ValueError, "n must be >= 0, got -1", integer, -1, "n", minimum=0)
    raises(TypeError, "n in 'X' must be a count, got 1.5 (not an integer)", integer, 1.5, "n", "a count",
           where=" in 'X'")


def test_document_limit():
    assert document_limit(None) is None
    assert document_limit(0) == 0
    assert document_limit(np.uint64(5)) == 5
    assert document_limit(2**80) == np.iinfo(np.int64).max  # every document: the kernels count in int64
    raises(TypeError, f"max_docs must be an integer >= 0 or None, {BOOL}", document_limit, True)
    raises(TypeError, "max_docs must be an integer >= 0 or None, got 1.5 (not an integer)", document_limit, 1.5)
    raises(ValueError, "max_docs must be >= 0, got -1", document_limit, -1)


def test_every_parameter_kind_has_one_check():
    """Param.check sends each kind to one step (numbers, choices, collections); an unknown kind is a registry bug."""
    collections = set(KINDS) - _NUMBER_KINDS - _CHOICE_KINDS
    assert collections == {"gain_map_or_none", "probabilities_or_none"}
    assert not _NUMBER_KINDS & _CHOICE_KINDS and (_NUMBER_KINDS | _CHOICE_KINDS) <= set(KINDS)
    with pytest.raises(AssertionError, match="unknown parameter kind 'fraction'"):
        Param("x", 0.5, "fraction").check(0.5)
    assert Param("p", 0.5, "unit").check(np.float32(0.25)) == 0.25
    raises(TypeError, f"p in 'RBP' must be a number in [0, 1], {BOOL}", Param("p", 0.5, "unit").check, True, "RBP")
    raises(ValueError, "unknown dcg='log3'; valid values: 'log2', 'exp-log2'",
           Param("dcg", None, "choice_or_none", ("log2", "exp-log2")).check, "log3")
    raises(ValueError, "prel must be a 1-D array of probabilities in [0, 1] (probabilities by grade) in 'pFound'",
           Param("prel", None, "probabilities_or_none", (), "probabilities by grade").check, [0.5, 2.0], "pFound")


# ---- rankjit.io ---------------------------------------------------------------------------

RUN = b"q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 c 3 1 t\n"
QRELS = b"q 0 a 1\nq 0 b 2\nq 0 c 0\n"
DIV_QRELS = b"q 1 a 1\nq 2 b 1\n"


def _run_and_qrels():
    from rankjit.io import read_trec_qrels, read_trec_run

    return read_trec_run(RUN), read_trec_qrels(QRELS)


def test_align_max_docs_and_rel_level():
    from rankjit.io import align

    run, qrels = _run_and_qrels()
    raises(TypeError, f"max_docs must be an integer >= 0 or None, {BOOL}", align, run, qrels, max_docs=True)
    raises(TypeError, "max_docs must be an integer >= 0 or None, got 1.5 (not an integer)", align, run, qrels,
           max_docs=1.5)
    raises(ValueError, "max_docs must be >= 0, got -1", align, run, qrels, max_docs=-1)
    raises(TypeError, f"rel_level must be an integer, {BOOL}", align, run, qrels, rel_level=True)
    raises(TypeError, "rel_level must be an integer, got 1.5 (not an integer)", align, run, qrels, rel_level=1.5)
    # NumPy integers are integers: the same as Python's
    al = align(run, qrels, max_docs=np.int64(2), rel_level=np.int32(2))
    assert al.num_ret.tolist() == [2] and al.n_relevant.tolist() == [1]
    assert type(al.rel_level) is int and al.rel_level == 2
    assert align(run, qrels, max_docs=2**80).num_ret.tolist() == [3]  # beyond int64: every document


def test_evaluate_run_max_docs():
    from rankjit.io import evaluate_run

    run, qrels = _run_and_qrels()
    raises(TypeError, f"max_docs must be an integer >= 0 or None, {BOOL}", evaluate_run, qrels, run, ["P@2"],
           max_docs=True)


def test_align_diversity_max_docs():
    pytest.importorskip("pyarrow")
    from rankjit.io import align_diversity, read_trec_run

    run = read_trec_run(RUN)
    raises(TypeError, f"max_docs must be an integer >= 0 or None, {BOOL}", align_diversity, DIV_QRELS, run,
           max_docs=True)
    raises(TypeError, "max_docs must be an integer >= 0 or None, got 1.5 (not an integer)", align_diversity,
           DIV_QRELS, run, max_docs=1.5)
    assert align_diversity(DIV_QRELS, run, max_docs=np.int64(1)).lengths.tolist() == [1]


def test_prefs_and_jg_max_docs_and_rel_level():
    from rankjit.io import _trec_prefs as P
    from rankjit.io import read_trec_run

    run = read_trec_run(RUN)
    prefs = P.read_trec_prefs(b"q 1 s a 2\nq 1 s b 1\nq 1 s c 0\n")
    raises(TypeError, f"max_docs must be an integer >= 0 or None, {BOOL}", P.prefs_values, prefs, run,
           max_docs=True)
    raises(TypeError, "max_docs must be an integer >= 0 or None, got 2.5 (not an integer)", P.prefs_values, prefs,
           run, max_docs=2.5)
    raises(ValueError, "max_docs must be >= 0, got -1", P.prefs_values, prefs, run, max_docs=-1)
    jg = P.read_trec_qrels_jg(b"q g a 1\nq g b 0\n")
    raises(TypeError, f"rel_level must be an integer, {BOOL}", P.jg_values, jg, run, rel_level=True)
    raises(TypeError, f"max_docs must be an integer >= 0 or None, {BOOL}", P.jg_values, jg, run, max_docs=True)
    # numpy integers are taken: the same values as with Python's
    want = P.jg_values(jg, run, cutoffs=(1,), multiples=(1.0,), max_docs=1, rel_level=1)
    got = P.jg_values(jg, run, cutoffs=(1,), multiples=(1.0,), max_docs=np.int64(1), rel_level=np.int64(1))
    for a, b in zip(want[1:], got[1:]):
        np.testing.assert_array_equal(a, b)


# ---- rankjit.compat.ranx ------------------------------------------------------------------


def test_ranx_counts_and_thresholds():
    from rankjit.compat import ranx as rj

    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    run = {"a": {"x": 1.0, "z": 0.5}, "b": {"y": 0.2, "z": 0.9}}
    named = [rj.Run(run, name="one"), rj.Run(run, name="two")]
    raises(TypeError, f"threads must be an int >= 0 (0: all available threads), {BOOL}", rj.evaluate, qrels, run,
           "map", threads=True)
    raises(TypeError, "threads must be an int >= 0 (0: all available threads), got 1.5 (not an integer)",
           rj.evaluate, qrels, run, "map", threads=1.5)
    raises(TypeError, f"n_permutations must be a positive int, {BOOL}", rj.compare, qrels, named, "map",
           n_permutations=True)
    raises(TypeError, f"max_p must be a number in [0, 1], {BOOL}", rj.compare, qrels, named, "map", max_p=True)
    raises(ValueError, "max_p must be a number in [0, 1], got 5", rj.compare, qrels, named, "map", max_p=5)
    raises(TypeError, f"rounding_digits must be an int >= 0, {BOOL}", rj.compare, qrels, named, "map",
           rounding_digits=True)
    raises(TypeError, "rounding_digits must be an int >= 0, got 2.5 (not an integer)", rj.compare, qrels, named,
           "map", rounding_digits=2.5)
    raises(ValueError, "rounding_digits must be >= 0, got -1", rj.compare, qrels, named, "map", rounding_digits=-1)
    report = rj.compare(qrels, named, "map", max_p=np.float64(0.05), rounding_digits=np.int64(2), n_permutations=10)
    assert report.max_p == 0.05 and report.rounding_digits == 2


# ---- rankjit.integrations.torch -----------------------------------------------------------


def test_torch_padding_value():
    from rankjit.integrations.torch import evaluate

    scores, labels = np.array([[3.0, 2.0, 1.0]]), np.array([[0, 1, -1]])
    raises(TypeError, f"padding_value must be a number, {BOOL}", evaluate, scores, labels, "P@2",
           padding_value=True)
    assert evaluate(scores, labels, "P@2", padding_value=np.int8(-1)) == {"P@2": 0.5}
