"""``rankjit.compat.pytrec_eval.parse_run`` / ``parse_qrel`` of open files, read by rankjit's TREC reader.

The parsers read an open, seekable text file with rankjit's compiled reader where the
reader and the parser's ``line.strip().split()`` read it alike, and with the line parser
anywhere else.  Each case reads one file both ways (the line parser forced by switching the
reader off) and checks the same dicts, in the same order, or the same error; that they are
pytrec_eval's own where pytrec_eval reads the file; and which files took the reader.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

import rankjit.compat.pytrec_eval as rj

try:
    import pytrec_eval as pte
except ImportError:  # pragma: no cover - a test extra
    pte = None

DATA = Path(__file__).parents[2] / "shared" / "data"

RUN = """\
q1 Q0 d1 1 3.5 tag
q1 Q0 d5 2 3.5 tag
q1\tQ0\td3\t3\t2.25\ttag
q2 Q0 x2 1 10 tag
q2 Q0 x5 2 9.999999999999999999 tag
q1 Q0 d9 5 1e-3 tag
q2 Q0 x1 3 .5 tag
q3 Q0 z1 1 -0 tag
q2 Q0 x3 4 +5. tag
q4 Q0 w1 1 inf tag
"""
QRELS = """\
q1 0 d1 2
q1 0 d2 0
q2 0 x1 1
q1 0 d3 +1
q2 0 x5 003
q3 0 z1 -1
"""

#: (text, whether the reader takes it) of each run; the file is opened with open(path, **OPEN[case]) when listed
RUN_CASES = {
    "plain": (RUN, True),
    "no last newline": (RUN.rstrip("\n"), True),
    "crlf": (RUN.replace("\n", "\r\n"), True),
    "blank line": (RUN.replace("q2 Q0 x2", "\nq2 Q0 x2"), False),
    "blank line at the end": (RUN + "\n", False),
    "spaces line": (RUN.replace("q2 Q0 x2", "  \t\nq2 Q0 x2"), False),
    "comment": ("# a b c d e\n" + RUN, False),
    "seven fields": (RUN.replace("w1 1 inf tag", "w1 1 inf tag more"), False),
    "five fields": (RUN.replace("w1 1 inf tag", "w1 1 inf"), False),
    "nan": (RUN.replace(" .5 ", " nan "), False),
    "underscore": (RUN.replace(" 10 tag", " 1_0 tag"), False),
    "word": (RUN.replace(" 10 tag", " ten tag"), False),
    "repeated document": (RUN + "q1 Q0 d1 7 0.5 tag\n", False),
    "non-ascii": (RUN.replace("d5", "d\u00e95"), False),
    "vertical tab": (RUN.replace("d5 2", "d5\x0b2"), False),
    "empty": ("", False),
}
QRELS_CASES = {
    "plain": (QRELS, True),
    "crlf": (QRELS.replace("\n", "\r\n"), True),
    "decimal": (QRELS.replace("d2 0", "d2 0.0"), False),
    "underscore": (QRELS.replace("x5 003", "x5 1_0"), False),
    "beyond int64": (QRELS.replace("x5 003", "x5 99999999999999999999"), False),
    "repeated judgment": (QRELS + "q1 0 d1 1\n", False),
    "five fields": (QRELS.replace("d2 0", "d2 0 x"), False),
    "blank line": (QRELS.replace("q2 0 x1", "\nq2 0 x1"), False),
}


def outcome(fn, *args):
    try:
        out = fn(*args)
    except Exception as exc:  # noqa: BLE001 (every error is compared)
        return ("raised", type(exc), str(exc))
    # (values by repr: NaN equals NaN, -0.0 differs from 0.0, 1 from 1.0)
    return [(q, [(doc, repr(v)) for doc, v in d.items()]) for q, d in out.items()], type(out)


def both_ways(monkeypatch, parse, path, **open_kw):
    """``(with the reader, with the line parser, whether the reader took the file)``."""
    took = []
    real = rj._parse_plain
    monkeypatch.setattr(rj, "_parse_plain", lambda *a: took.append(real(*a)) or took[-1])
    with open(path, **open_kw) as f:
        fast = outcome(parse, f)
    with monkeypatch.context() as m, open(path, **open_kw) as f:
        m.setattr(rj, "_parse_file", lambda f, kind: None)
        slow = outcome(parse, f)
    return fast, slow, any(t is not None for t in took)


@pytest.mark.parametrize("newline", [None, ""])
@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_parse_run_of_files(monkeypatch, tmp_path, case, newline):
    text, taken = RUN_CASES[case]
    path = tmp_path / "run"
    path.write_bytes(text.encode("utf-8"))
    fast, slow, took = both_ways(monkeypatch, rj.parse_run, path, newline=newline)
    assert fast == slow
    assert took == taken
    if pte is not None and fast[0] != "raised":
        with open(path, newline=newline) as f:
            assert outcome(pte.parse_run, f) == fast


@pytest.mark.parametrize("case", sorted(QRELS_CASES))
def test_parse_qrel_of_files(monkeypatch, tmp_path, case):
    text, taken = QRELS_CASES[case]
    path = tmp_path / "qrels"
    path.write_bytes(text.encode("utf-8"))
    fast, slow, took = both_ways(monkeypatch, rj.parse_qrel, path)
    assert fast == slow
    assert took == taken
    if pte is not None and fast[0] != "raised":
        with open(path) as f:
            assert outcome(pte.parse_qrel, f) == fast


def test_what_is_not_an_open_seekable_text_file_is_read_line_by_line(monkeypatch, tmp_path):
    path = tmp_path / "run"
    path.write_text(RUN)
    want = outcome(rj.parse_run, RUN.splitlines(keepends=True))  # a list of lines: the line parser
    took = []
    real = rj._parse_plain
    monkeypatch.setattr(rj, "_parse_plain", lambda *a: took.append(1) or real(*a))
    assert outcome(rj.parse_run, io.StringIO(RUN)) == want  # a text file in memory: read by the reader
    assert len(took) == 1
    with open(path) as f:  # a file read in part: the reader reads from where it stands
        first = f.readline()
        rest = outcome(rj.parse_run, f)
    assert rest == outcome(rj.parse_run, RUN.splitlines(keepends=True)[1:]) and first.startswith("q1 Q0 d1")
    assert len(took) == 2

    class Pipe(io.StringIO):
        def seekable(self):
            return False

    assert outcome(rj.parse_run, Pipe(RUN)) == want  # not seekable: the line parser
    with open(path, "rb") as f:  # a binary file: bytes lines, the line parser
        got = outcome(rj.parse_run, f)[0]
        assert got == [(q.encode(), [(d.encode(), s) for d, s in ds]) for q, ds in want[0]]
    assert len(took) == 2
    path.write_bytes(RUN.encode() + b"q9 Q0 \xff 1 1 t\n")
    with open(path) as f:  # undecodable: the line parser raises the decoding error
        assert outcome(rj.parse_run, f)[1] is UnicodeDecodeError


@pytest.mark.skipif(not (DATA / "web2012").is_dir(), reason=f"{DATA / 'web2012'} not found (../shared/data absent)")
@pytest.mark.skipif(pte is None, reason="pytrec_eval-terrier is not installed (pip install -e '.[test]')")
def test_web2012_and_trec_eval_files_as_pytrec_eval_reads_them(monkeypatch):
    for parse, theirs, path in [
        (rj.parse_run, pte.parse_run, DATA / "web2012" / "run.ql.cata.txt"),
        (rj.parse_qrel, pte.parse_qrel, DATA / "web2012" / "qrels.adhoc.txt"),
        (rj.parse_run, pte.parse_run, DATA / "trec_eval" / "results.test"),
        (rj.parse_qrel, pte.parse_qrel, DATA / "trec_eval" / "qrels.test"),
    ]:
        fast, slow, took = both_ways(monkeypatch, parse, path)
        assert fast == slow and took
        with open(path) as f:
            assert outcome(theirs, f) == fast
