"""Parser grammar, batch layout (no copies), query grouping, warm-up, demo, import cost."""
import os
import subprocess
import sys

import numpy as np
import pytest

import rankjit
from rankjit import _measures
from rankjit._validation import as_batch


@pytest.mark.parametrize(
    "text, family, k, params",
    [
        ("nDCG@10", "nDCG", 10, {}),
        ("ndcg@10", "nDCG", 10, {}),
        ("NDCG(gain='linear')@10", "nDCG", 10, {"gain": "linear"}),
        ("P(rel=2)@5", "P", 5, {"rel": 2}),
        ("ERR(max_grade=3)@20", "ERR", 20, {"max_grade": 3}),
        ("AP", "AP", None, {}),
        ("MAP@100", "AP", 100, {}),
        ("AP(denominator='r')@10", "AP", 10, {"denominator": "r"}),
        ("pFound(p_break=0.2, prel=(0, 0.5, 1))", "pFound", None, {"p_break": 0.2, "prel": (0, 0.5, 1)}),
        ("  RR @ 3 ", "RR", 3, {}),
        ("Success@1", "Success", 1, {}),
        ("recall@50", "R", 50, {}),
        ("Rprec", "Rprec", None, {}),
    ],
)
def test_parse_grammar(text, family, k, params):
    m = _measures.parse(text)
    assert (m.family, m.k, m.params) == (family, k, params)


@pytest.mark.parametrize(
    "text, match",
    [
        ("nDGC@10", r"unknown measure 'nDGC'.*valid names: .*nDCG"),
        ("nDCG(gian='linear')@10", r"unknown parameter 'gian' for nDCG.*valid parameters: base, dcg, discount, empty, gain, gains"),
        ("nDCG@0", r"cutoff .* must be a positive integer"),
        ("nDCG@ten", r"cutoff .* must be a positive integer"),
        ("Rprec@10", r"Rprec takes no cutoff"),
        ("nDCG(gain=linear)@10", r"cannot parse the parameters"),
        ("nDCG(1)@10", r"cannot parse the parameters"),
        ("@@", r"cannot parse measure"),
    ],
)
def test_parse_errors(text, match):
    with pytest.raises(ValueError, match=match):
        _measures.parse(text)


def test_parsed_strings_are_kept_but_each_call_gets_its_own_measure(monkeypatch):
    # parse() keeps what it parsed (a training loop asks for the same names every round); each caller gets a
    # Measure of its own, which it may change without changing what later calls get
    monkeypatch.setattr(_measures, "_PARSED", {})
    first = _measures.parse("nDCG(gain=[0, 1, 3], judged_only=True)@5")
    assert list(_measures._PARSED) == ["nDCG(gain=[0, 1, 3], judged_only=True)@5"]
    first.params["gain"].append(7)
    first.params["empty"] = "one"
    first.judged_only = False
    again = _measures.parse("nDCG(gain=[0, 1, 3], judged_only=True)@5")
    assert again is not first and again.params is not first.params
    assert (again.family, again.k, again.params, again.judged_only) == ("nDCG", 5, {"gain": [0, 1, 3]}, True)
    for _ in range(2):  # an error is raised each time, and nothing is kept of it
        with pytest.raises(ValueError, match="unknown measure 'nDGC'"):
            _measures.parse("nDGC@10")
    assert "nDGC@10" not in _measures._PARSED

    class Text(str):
        pass

    assert _measures.parse(Text("P@5")).k == 5 and "P@5" not in _measures._PARSED  # (subclasses: parsed anew)
    monkeypatch.setattr(_measures, "_PARSED_MAX", 3)
    for k in range(1, 8):
        assert _measures.parse(f"P@{k}").k == k
        assert len(_measures._PARSED) <= 3  # bounded


def test_evaluate_rejects_unknown_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument.*nuggetz"):
        rankjit.evaluate([[1, 0]], [[1.0, 0.0]], ["P@1"], nuggetz=1)


def test_evaluate_keys_and_order_follow_the_request():
    labels = np.array([[1, 0, 2]])
    scores = np.array([[0.1, 0.5, 0.9]])
    names = ["RR", "nDCG@2", "P@1"]
    res = rankjit.evaluate(labels, scores, names)
    assert list(res) == names
    assert all(isinstance(v, float) for v in res.values())
    # the top document has label 2 >= 1: RR = P@1 = 1
    assert res["RR"] == 1.0 and res["P@1"] == 1.0


def test_padded_c_contiguous_input_is_not_copied():
    labels = np.zeros((4, 5), dtype=np.int8)
    scores = np.zeros((4, 5), dtype=np.float32)
    b = as_batch(labels, scores, lengths=np.array([5, 4, 0, 1]))
    assert np.shares_memory(b.labels, labels) and np.shares_memory(b.scores, scores)
    mask = np.ones((4, 5), dtype=bool)
    b = as_batch(labels, scores, mask=mask)
    assert np.shares_memory(b.mask, mask)


def test_ragged_input_is_not_copied():
    labels = np.zeros(7, dtype=np.int64)
    scores = np.zeros(7, dtype=np.float64)
    b = as_batch(labels, scores, offsets=np.array([0, 3, 3, 7]))
    assert np.shares_memory(b.labels, labels) and np.shares_memory(b.scores, scores)
    assert b.counts.tolist() == [3, 0, 4]


def test_non_contiguous_input_gives_the_same_result_as_a_copy():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, size=(6, 12))
    scores = rng.random((6, 12))
    view_l, view_s = labels[:, ::2], scores[:, ::2]
    assert not view_s.flags.c_contiguous
    np.testing.assert_array_equal(
        rankjit.ndcg(view_l, view_s, k=4), rankjit.ndcg(np.ascontiguousarray(view_l), np.ascontiguousarray(view_s), k=4)
    )


def test_offsets_from_qids_grouped_and_unsorted():
    off, order, ids = rankjit.offsets_from_qids(np.array([7, 7, 3, 9, 9, 9]))
    assert off.tolist() == [0, 2, 3, 6] and order is None and ids.tolist() == [7, 3, 9]
    q = np.array(["b", "a", "b", "c", "a"])
    off, order, ids = rankjit.offsets_from_qids(q)
    assert order is not None
    grouped = q[order]
    assert ids.tolist() == ["a", "b", "c"]
    for i, qid in enumerate(ids):
        assert (grouped[off[i]:off[i + 1]] == qid).all()
    # stable: rows of one query keep their input order
    assert order.tolist() == [1, 4, 0, 2, 3]


def test_offsets_from_qids_feed_a_ragged_evaluation():
    qids = np.array([2, 1, 2, 1, 2])
    labels = np.array([1, 0, 0, 1, 0])
    scores = np.array([0.9, 0.8, 0.1, 0.3, 0.5])
    off, order, ids = rankjit.offsets_from_qids(qids)
    res = rankjit.rr(labels[order], scores[order], offsets=off)
    # query 1: docs (0, .8), (1, .3) -> relevant at rank 2; query 2: (1, .9) first -> 1
    assert ids.tolist() == [1, 2] and res.tolist() == [0.5, 1.0]


def test_offsets_from_qids_errors():
    with pytest.raises(ValueError, match="empty batch"):
        rankjit.offsets_from_qids([])
    with pytest.raises(ValueError, match="must be 1-D"):
        rankjit.offsets_from_qids(np.zeros((2, 2)))


def _run(code, env=None):
    full_env = dict(os.environ, **(env or {}))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_compiles_nothing():
    # every public name is loaded (the package loads its modules on first use), then no
    # kernel of any rankjit module may have a compiled signature
    code = (
        "import numba, rankjit, sys\n"
        "loaded = [getattr(rankjit, name) for name in rankjit.__all__]\n"
        "import rankjit.io, rankjit.stats, rankjit.stream, rankjit.presets, rankjit.integrations\n"
        "from numba.core.registry import CPUDispatcher\n"
        "compiled = [n for name, mod in list(sys.modules.items()) if name.startswith('rankjit')\n"
        "            for n, obj in vars(mod).items() if isinstance(obj, CPUDispatcher) and obj.signatures]\n"
        "print(len(compiled))\n"
    )
    assert _run(code).strip() == "0"


def test_import_is_light_and_loads_the_api_on_first_use():
    code = (
        "import sys, rankjit\n"
        "print('numba' in sys.modules, 'rankjit._api' in sys.modules)\n"
        "f = rankjit.ndcg\n"
        "print('numba' in sys.modules, 'rankjit.diversity' in sys.modules, 'ndcg' in dir(rankjit) and 'rpp' in dir(rankjit))\n"
        "from rankjit import evaluate\n"
        "print(evaluate is rankjit.evaluate, rankjit.__version__)\n"
    )
    lines = _run(code).split("\n")
    assert lines[0] == "False False"
    assert lines[1] == "True False True"
    assert lines[2] == f"True {rankjit.__version__}"
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        rankjit.no_such_name


def test_external_measures_registered_without_importing_their_modules():
    # evaluate() knows alpha_nDCG and RPP even when only rankjit._api was imported
    code = (
        "import numpy as np\n"
        "from rankjit._api import evaluate\n"
        "from rankjit._measures import parse\n"
        "print(parse('alpha_nDCG@5').family, parse('RPP').family)\n"
    )
    assert _run(code).strip() == "alpha_nDCG RPP"


@pytest.mark.jit
def test_warmup_jobs_cover_each_tie_rule_asked_for(capsys):
    from rankjit._warmup import jobs
    from rankjit.cli import main

    got = jobs(("int8",), ("float32",), (False,), average=True, ties=("stable", "optimistic"))
    assert [job[3] for job in got] == ["stable", "optimistic", "average"]
    assert [job[3] for job in jobs(("int8",), ("float32",), (False,))] == ["pessimistic"]
    with pytest.raises(ValueError, match=r"unknown tie rule 'pesimistic'; valid: pessimistic, optimistic"):
        jobs(ties=("pesimistic",))
    assert main(["warmup", "--ties", "stable,pesimistic"]) == 1  # a command error: one line, exit 1
    assert "--ties: unknown tie rule 'pesimistic'" in capsys.readouterr().err


def test_warmup_refuses_an_unknown_front_end(capsys):
    import rankjit
    from rankjit.cli import main

    with pytest.raises(ValueError, match=r"^unknown front end 'trec'; valid: trec_eval, pytrec_eval, ranx, ir_measures$"):
        rankjit.warmup(front_ends=("trec_eval", "trec"))  # refused before anything compiles
    assert main(["warmup", "--front-ends", "ranx,trec"]) == 1
    assert capsys.readouterr().err.strip() == (
        "rankjit warmup: error: --front-ends: unknown front end 'trec'; valid: trec_eval, pytrec_eval, ranx, ir_measures")


def test_demo_command_runs_on_a_small_batch():
    from rankjit.cli import main

    assert main(["demo", "--queries", "300", "--docs", "20", "--repeat", "1"]) == 0


def test_demo_output(capsys):
    from rankjit.cli import main

    main(["demo", "--queries", "200", "--docs", "10", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "nDCG@10" in out and "queries/s" in out


def test_evaluate_systems_matches_one_call_per_system():
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 3, size=(9, 7))
    stack = rng.random((4, 9, 7))
    lengths = rng.integers(0, 8, size=9)
    names = ["nDCG@3", "AP", "RR"]
    got = rankjit.evaluate_systems(labels, stack, names, lengths=lengths)
    for s in range(4):
        one = rankjit.evaluate(labels, stack[s], names, lengths=lengths, per_query=True)
        for name in names:
            assert got[name].shape == (4, 9)
            np.testing.assert_array_equal(got[name][s], one[name])


def test_evaluate_systems_shape_errors():
    labels = np.zeros((3, 4), dtype=np.int64)
    with pytest.raises(ValueError, match=r"scores_stack must have shape \(n_systems, \*labels.shape\)"):
        rankjit.evaluate_systems(labels, np.zeros((3, 4)), ["P@1"])
    with pytest.raises(ValueError, match=r"scores_stack must have shape"):
        rankjit.evaluate_systems(labels, np.zeros((2, 3, 5)), ["P@1"])
    with pytest.raises(ValueError, match="holds no system"):
        rankjit.evaluate_systems(labels, np.zeros((0, 3, 4)), ["P@1"])


@pytest.mark.parametrize("ties", ["pessimistic", "stable", "average"])
def test_evaluate_systems_one_pass_ragged_masked_and_judged(ties):
    rng = np.random.default_rng(5)
    n_q, width, n_sys = 3000, 9, 3  # > 2048 queries: the parallel driver
    labels = rng.integers(0, 4, size=(n_q, width))
    stack = rng.integers(0, 5, size=(n_sys, n_q, width)).astype(np.float32)  # many ties
    mask = rng.random((n_q, width)) < 0.8
    ideal = np.stack([np.bincount(labels[q][mask[q]], minlength=4) for q in range(n_q)]) + 1
    names = ["nDCG@3", "AP", "P@2"] + ([] if ties == "average" else ["ERR@5"])
    got = rankjit.evaluate_systems(labels, stack, names, mask=mask, ties=ties, ideal_counts=ideal)
    for s in range(n_sys):
        one = rankjit.evaluate(labels, stack[s], names, mask=mask, ties=ties, ideal_counts=ideal, per_query=True)
        for name in names:
            np.testing.assert_array_equal(got[name][s], one[name])
    # ragged layout of the same rows
    lengths = mask.sum(1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat_labels = labels[mask]
    flat_stack = np.stack([stack[s][mask] for s in range(n_sys)])
    got_r = rankjit.evaluate_systems(flat_labels, flat_stack, names, offsets=offsets, ties=ties, ideal_counts=ideal)
    for name in names:
        if ties == "stable":  # input order among ties: same order in both layouts
            np.testing.assert_array_equal(got_r[name], got[name])
        else:
            np.testing.assert_allclose(got_r[name], got[name], rtol=1e-12, atol=1e-12)
