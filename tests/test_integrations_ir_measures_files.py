"""TREC files passed to ir_measures as its own generators, read by rankjit's TREC reader.

``ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(path),
ir_measures.read_trec_run(path))`` is how most scripts call ir_measures on TREC files.  With
the provider registered, an unstarted ``read_trec_run`` generator (and a ``read_trec_qrels``
one, when rankjit computes every measure of the call) is read from its file by rankjit's
reader instead of ir_measures' line parser, but only where the two read the file alike
(``rankjit.io._trec.read_split_alike``); anywhere else the generator is read
as it is.  Every case here runs the same call three ways -- ir_measures alone, the provider
registered, and the provider registered with the file reading switched off -- and checks that
the provider gives the same per-query values (or raises the same error) either way, that these
are ir_measures' own where ir_measures gives values, and which files took the reader.
"""
from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pyarrow")

from rankjit.integrations import ir_measures as rj  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WEB = SHARED / "web2012"
SUITE = SHARED / "trec_eval"

#: a measure of each provider the rankjit provider stands in for: pytrec_eval, gdeval, cwl_eval, msmarco, judged
NAMES = ["nDCG@10", "AP", "P@5", "R@100", "RR", "Bpref", "ERR@20", "RBP(rel=1)", "RR@10", "Judged@10"]
GDEVAL_TOL = 5e-6 + 1e-12  # gdeval prints %.5f
NDEVAL_TOL = 5e-7  # ndeval's 6th decimal
DIVERSITY = ("alpha_", "ERR_IA", "nERR_IA", "P_IA", "StRecall", "AP_IA", "NRBP", "nNRBP")

QRELS = """\
101 0 d1 2
101 0 d2 0
101 0 d3 1
101 0 d9 -1
101 0 d7 1
102 0 x1 1
102 0 x5 3
103 0 z1 0
"""
RUN = """\
101 Q0 d1 1 3.5 tag
101 Q0 d5 2 3.5 tag
101 Q0 d3 3 2.25 tag
101 Q0 d2 4 2.25 tag
101 Q0 d9 5 1e-3 tag
101 Q0 d8 6 -7 tag
102 Q0 x2 1 10 tag
102 Q0 x5 2 9.999999999999999999 tag
102 Q0 x1 3 .5 tag
102 Q0 x3 4 +5. tag
103 Q0 z1 1 1 tag
104 Q0 w1 1 1 tag
"""


@pytest.fixture(autouse=True)
def unregistered():
    rj.unregister()
    yield
    rj.unregister()


def per_query(metrics):
    return {(str(m.measure), m.query_id): float(m.value) for m in metrics}


def outcome(fn):
    """The per-query values of ``fn()``, or ``("raised", type, message)``."""
    try:
        return per_query(fn())
    except Exception as exc:  # noqa: BLE001 (every error is compared)
        return ("raised", type(exc), str(exc))


def three_ways(monkeypatch, names, qrels_path, run_path):
    """``(ir_measures alone, registered, registered without the file reading, what the reader took)``."""
    measures = [ir_measures.parse_measure(n) for n in names]
    call = lambda: ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(qrels_path),  # noqa: E731
                                         ir_measures.read_trec_run(run_path))
    alone = outcome(call)
    took = set()
    for name, kind in (("_run_file", "run"), ("_qrels_file", "qrels")):
        real = getattr(rj, name)

        def spy(*args, real=real, kind=kind):
            read = real(*args)
            if read is not None:
                took.add(kind)
            return read

        monkeypatch.setattr(rj, name, spy)
    with rj.registered():
        fast = outcome(call)
    with monkeypatch.context() as m, rj.registered():
        m.setattr(rj, "_trec_file_text", lambda *args: None)
        slow = outcome(call)
    return alone, fast, slow, took


def assert_agree(alone, fast, slow, as_alone=True):
    """The provider gives the same with and without the file reading; and, ``as_alone``, ir_measures' values
    where ir_measures alone gives values (False: a documented difference of the provider, docs/migrating.md)."""
    assert fast == slow or (  # the same values (NaN included), or the same error
        isinstance(fast, dict) and isinstance(slow, dict) and fast.keys() == slow.keys()
        and all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(fast.values(), [slow[k] for k in fast]))
    ), (fast, slow)
    if isinstance(alone, dict) and as_alone:
        assert isinstance(fast, dict), fast
        assert fast.keys() == alone.keys()
        for key, want in alone.items():
            tol = (GDEVAL_TOL if key[0].startswith("ERR@") else NDEVAL_TOL if key[0].startswith(DIVERSITY)
                   else 1e-9)
            assert math.isnan(want) and math.isnan(fast[key]) or abs(fast[key] - want) <= tol, (key, fast[key], want)


def write(tmp_path, name, text, gz=False):
    path = tmp_path / name
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def test_clean_files_are_read_by_rankjit_with_ir_measures_numbers(monkeypatch, tmp_path):
    alone, fast, slow, took = three_ways(monkeypatch, NAMES, write(tmp_path, "q", QRELS), write(tmp_path, "r", RUN))
    assert isinstance(alone, dict) and len(alone) > 20
    assert_agree(alone, fast, slow)
    assert took == {"run", "qrels"}


# the run's text in each case, whether rankjit's reader takes it, and whether the provider gives ir_measures' values
# (False: documented differences, docs/migrating.md: a repeated document keeps one place for gdeval and cwl_eval
# too; a NaN score is refused)
RUN_CASES = {
    "crlf": (RUN.replace("\n", "\r\n"), True, True),
    "tabs and blank lines": (RUN.replace(" Q0 ", "\tQ0\t").replace("\n102", "\n   \n\t\n102") + "\n\n", True, True),
    "infinite and long scores": (RUN.replace(" 10 tag", " inf tag").replace(" -7 tag", " -Infinity tag")
                                 .replace(" 1e-3 ", " 0.1000000000000000055511151231257827 "), True, True),
    "repeated document": (RUN + "101 Q0 d1 9 0.5 tag\n", True, False),
    "lone cr": (RUN.replace("\n", "\r"), False, True),
    "mixed cr": (RUN.replace("102 Q0 x1 3 .5 tag\n", "102 Q0 x1 3 .5 tag\r"), False, True),
    "comment line": ("# a comment line\n" + RUN, False, True),
    "six-field comment": ("# a b c d e\n" + RUN, False, True),
    "hash in a doc id": (RUN.replace("d5", "d#5"), False, True),
    "seven fields": (RUN.replace("x3 4 +5. tag", "x3 4 +5. tag extra"), False, True),
    "five fields": (RUN.replace("x3 4 +5. tag", "x3 4 +5."), False, True),
    "nan score": (RUN.replace(" .5 ", " nan "), False, False),
    "underscore score": (RUN.replace(" 10 tag", " 1_0 tag"), False, True),
    "word score": (RUN.replace(" 10 tag", " ten tag"), False, True),
    "non-ascii id": (RUN.replace("d5", "d\u00e95"), False, True),
    "no-break space": (RUN.replace("d5", "d5\u00a0x"), False, True),  # (str.split: 7 fields; bytes: 6)
    "vertical tab": (RUN.replace("d5 2", "d5\x0b2"), False, True),
    "control byte": (RUN.replace("d5", "d\x015"), False, True),
    "empty": ("", False, True),
    "blank only": ("\n  \n", False, True),
}


# (a document judged twice: gdeval's ERR is refused, docs/migrating.md)
QRELS_CASES = {
    "signs and zeros": (QRELS.replace("d3 1", "d3 +1").replace("x5 3", "x5 003").replace("z1 0", "z1 -0"), True, True),
    "repeated judgment": (QRELS + "101 0 d2 2\n", True, False),
    "crlf": (QRELS.replace("\n", "\r\n"), True, True),
    "decimal judgment": (QRELS.replace("d3 1", "d3 1.0"), False, True),
    "underscore judgment": (QRELS.replace("x5 3", "x5 1_0"), False, True),
    "judgment beyond int64": (QRELS.replace("x5 3", "x5 99999999999999999999"), False, True),
    "five fields": (QRELS.replace("d7 1", "d7 1 extra"), False, True),
    "comment line": ("# judged by hand\n" + QRELS, False, True),
    "non-ascii id": (QRELS.replace("d7", "d\u00e97"), False, True),
}


@pytest.mark.parametrize("kind, case", [("run", c) for c in sorted(RUN_CASES)]
                         + [("qrels", c) for c in sorted(QRELS_CASES)])
def test_files_read_by_rankjit_only_where_ir_measures_reads_them_alike(monkeypatch, tmp_path, kind, case):
    text, taken, as_alone = (RUN_CASES if kind == "run" else QRELS_CASES)[case]
    files = {"run": RUN, "qrels": QRELS, kind: text}  # the case's file, the other one plain
    assert text != RUN and text != QRELS
    alone, fast, slow, took = three_ways(monkeypatch, NAMES, write(tmp_path, "q", files["qrels"]),
                                         write(tmp_path, "r", files["run"]))
    assert_agree(alone, fast, slow, as_alone)
    assert (kind in took) == taken
    if kind == "run" or isinstance(fast, dict):  # (qrels ir_measures cannot read: the run is never read)
        assert ({"run", "qrels"} - {kind}) <= took  # the other file, plain, is read by rankjit's reader


def test_gzip_files_as_gzip_open_reads_them(monkeypatch, tmp_path):
    q, r = write(tmp_path, "q.gz", QRELS, gz=True), write(tmp_path, "r.gz", RUN, gz=True)
    alone, fast, slow, took = three_ways(monkeypatch, NAMES, q, r)
    assert_agree(alone, fast, slow)
    assert took == {"run", "qrels"}
    # a .gz name on plain text, gzip data under another name: ir_measures' errors, read by ir_measures
    for q, r in [(write(tmp_path, "q", QRELS), write(tmp_path, "plain.gz", RUN)),
                 (write(tmp_path, "q", QRELS), write(tmp_path, "packed", gzip.compress(RUN.encode())))]:
        alone, fast, slow, took = three_ways(monkeypatch, NAMES, q, r)
        assert alone[0] == "raised" and fast[:2] == alone[:2]
        assert_agree(alone, fast, slow)
        assert "run" not in took


def test_what_is_not_a_path_of_an_unstarted_generator_is_read_as_given(monkeypatch, tmp_path):
    q, r = write(tmp_path, "q", QRELS), write(tmp_path, "r", RUN)
    measures = [ir_measures.parse_measure(n) for n in NAMES]
    with rj.registered():
        want = per_query(ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(q),
                                               list(ir_measures.read_trec_run(r))))
    took = []
    real = rj._trec_file_text
    monkeypatch.setattr(rj, "_trec_file_text", lambda *a: took.append(real(*a)) or took[-1])
    with rj.registered():
        started = ir_measures.read_trec_run(r)
        first = next(started)  # a generator already started: the rest of it, as ir_measures reads it
        got = per_query(ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(q), started))
        assert got == per_query(ir_measures.iter_calc(
            measures, ir_measures.read_trec_qrels(q), [x for x in ir_measures.read_trec_run(r) if x != first]))
        assert took[-1] is None
        text = Path(r).read_text()  # the file's text given as a string (it holds newlines)
        assert per_query(ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(q),
                                               ir_measures.read_trec_run(text))) == want
        assert took[-1] is None
        with open(r) as fh:  # an open file
            assert per_query(ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(q),
                                                   ir_measures.read_trec_run(fh))) == want
        assert took[-1] is None
        with pytest.raises(FileNotFoundError):  # ir_measures' own error
            list(ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(q),
                                       ir_measures.read_trec_run(str(tmp_path / "missing"))))


def test_runs_that_are_not_files_cost_no_file_reading(monkeypatch):
    """The file reading looks at the run first: a run of dicts or named tuples never lists the qrels' doc ids
    into the string column that a file's rows are joined with (0.8 ms of 4.7 on TREC 2012 Web's dicts)."""
    made = []
    real = rj._string_column
    monkeypatch.setattr(rj, "_string_column", lambda values: made.append(1) or real(values))
    qrels = {"101": {"d1": 2, "d2": 0, "d3": 1}, "102": {"x1": 1}}
    run = {"101": {"d1": 3.5, "d5": 3.5, "d3": 2.0}, "102": {"x2": 1.0, "x1": 0.5}}
    measures = [ir_measures.parse_measure(n) for n in ("nDCG@10", "AP", "P@5")]
    alone = per_query(ir_measures.iter_calc(measures, qrels, run))
    alone_aggregate = ir_measures.calc_aggregate(measures, qrels, run)
    with rj.registered():
        assert per_query(ir_measures.iter_calc(measures, qrels, run)) == alone
        assert ir_measures.calc_aggregate(measures, qrels, run) == pytest.approx(alone_aggregate, abs=1e-12)
    assert made == []


def test_files_with_ties_import_neither_pyarrow_nor_pandas(tmp_path):
    """A one-off script pays for every import: the ids of tied documents are compared without pyarrow (whose
    string columns import pandas, about 0.15 s of a first call), in a fresh process."""
    import subprocess
    import sys
    import textwrap

    q, r = write(tmp_path, "q", QRELS), write(tmp_path, "r", RUN)  # (101: d1 and d5 tie, d3 and d2 tie)
    script = textwrap.dedent(f"""
        import sys
        import ir_measures
        from rankjit.integrations import ir_measures as rj
        rj.register()
        measures = [ir_measures.parse_measure(n) for n in ("nDCG@10", "AP", "P@1", "RR@1", "Judged@1")]
        values = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels({q!r}),
                                            ir_measures.read_trec_run({r!r}))
        print(sorted(m for m in ("pyarrow", "pandas") if m in sys.modules), values[measures[2]])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    with rj.registered():
        p1 = ir_measures.calc_aggregate([ir_measures.P @ 1], ir_measures.read_trec_qrels(q),
                                        ir_measures.read_trec_run(r))[ir_measures.P @ 1]
    assert out == ["[]", repr(p1)]


def test_the_generators_read_by_rankjit_yield_nothing_more(tmp_path):
    q, r = write(tmp_path, "q", QRELS), write(tmp_path, "r", RUN)
    qrels, run = ir_measures.read_trec_qrels(q), ir_measures.read_trec_run(r)
    with rj.registered():
        ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, run)
    assert list(qrels) == [] and list(run) == []  # as after ir_measures read them


def test_qrels_of_a_call_with_measures_of_other_providers_go_to_ir_measures(monkeypatch, tmp_path):
    # Compat is ir_measures' own: its provider reads the qrels too, so they stay ir_measures' generator
    names = ["nDCG@10", "AP", "Compat(p=0.8)"]
    assert not rj.supports(ir_measures.parse_measure("Compat(p=0.8)"))
    alone, fast, slow, took = three_ways(monkeypatch, names, write(tmp_path, "q", QRELS), write(tmp_path, "r", RUN))
    assert_agree(alone, fast, slow)
    assert "qrels" not in took


@pytest.mark.skipif(not WEB.is_dir(), reason=f"{WEB} not found (../shared/data absent)")
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_web2012_files(monkeypatch):
    for run in ("run.ql.cata.txt", "run.rm.cata.txt"):
        alone, fast, slow, took = three_ways(monkeypatch, NAMES, str(WEB / "qrels.adhoc.txt"), str(WEB / run))
        assert_agree(alone, fast, slow)
        assert took == {"run", "qrels"}


@pytest.mark.skipif(not WEB.is_dir(), reason=f"{WEB} not found (../shared/data absent)")
@pytest.mark.slow
def test_web2012_diversity_qrels_read_by_rankjit_keep_their_subtopics(monkeypatch):
    names = ["alpha_nDCG@20", "ERR_IA@20", "P_IA@10", "StRecall@10", "AP_IA", "NRBP"]
    alone, fast, slow, took = three_ways(monkeypatch, names, str(WEB / "qrels.diversity-ndeval.txt"),
                                         str(WEB / "run.ql.cata.txt"))
    assert isinstance(alone, dict)
    assert_agree(alone, fast, slow)
    assert took == {"run", "qrels"}


@pytest.mark.skipif(not SUITE.is_dir(), reason=f"{SUITE} not found (../shared/data absent)")
@pytest.mark.parametrize("qrels_name, run_name", [("qrels.test", "results.test"), ("qrels.rel_level", "results.test"),
                                                  ("qrels.123", "results.test"), ("qrels.test", "results.trunc"),
                                                  ("qrels.comment.test", "results.comment.test")])
def test_trec_eval_suite_files(monkeypatch, qrels_name, run_name):
    # (the comment files' query ids, "2024-127266", are not numbers: gdeval reports them cut, "127266")
    names = [n for n in NAMES if not (n.startswith("ERR@") and "comment" in qrels_name)]
    alone, fast, slow, took = three_ways(monkeypatch, names, str(SUITE / qrels_name), str(SUITE / run_name))
    assert_agree(alone, fast, slow)
    if (qrels_name, run_name) == ("qrels.test", "results.test"):
        assert took == {"run", "qrels"}
