"""TREC run / qrels / diversity readers: formats, edge cases and error messages."""
from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from rankjit.io import (  # noqa: E402
    StringColumn,
    TrecRun,
    read_diversity_qrels,
    read_trec_qrels,
    read_trec_run,
)


def test_mixed_whitespace_trailing_columns_and_comments():
    text = (
        b"# a comment line\n"
        b"q1\tQ0\td1\t1\t2.5\ttag\n"
        b"  q1   Q0  d2 2    1.5 tag   extra junk  \r\n"
        b"\n"
        b"q2 \t Q0\t \tdoc#3\t1\t-0.25\tlast\n"
    )
    run = read_trec_run(text)
    assert run.qid.tolist() == ["q1", "q1", "q2"]
    assert run.docno.tolist() == ["d1", "d2", "doc#3"]
    assert run.score.tolist() == [2.5, 1.5, -0.25]
    assert run.runid == "last"


def test_docnos_with_hash_are_kept_whole():
    run = read_trec_run(b"q Q0 msmarco_doc_00#4_163 1 0.7 t\n#skipped line\n")
    assert run.docno.tolist() == ["msmarco_doc_00#4_163"]


def test_empty_and_blank_files(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    assert len(read_trec_run(p)) == 0
    assert len(read_trec_qrels(b"\n  \n\t\n")) == 0
    assert read_trec_run(p).runid is None


def test_gzip_input(tmp_path):
    raw = b"q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\n"
    p = tmp_path / "run.gz"
    p.write_bytes(gzip.compress(raw))
    assert read_trec_run(p).docno.tolist() == ["d1", "d2"]
    q = tmp_path / "qrels.txt.gz"
    q.write_bytes(gzip.compress(b"q1 0 d1 1\n"))
    assert read_trec_qrels(q).rel.tolist() == [1]


def test_negative_judgments_are_read_as_is():
    qrels = read_trec_qrels(b"1 0 a -2\n1 0 b 4\n1 0 c 0 trailing\n")
    assert qrels.rel.tolist() == [-2, 4, 0]
    assert qrels.rel.dtype == np.int64


@pytest.fixture(params=["numpy", "pyarrow"])
def full_float_parser(request, monkeypatch):
    """The parser of the fields the compiled one leaves: numpy (few fields) or pyarrow (many; forced here)."""
    from rankjit.io import _trec

    if request.param == "pyarrow":
        monkeypatch.setattr(_trec, "SLOW_FLOATS_NUMPY_MAX", 0)
    return request.param


def test_score_parsing_matches_python_float(full_float_parser):
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-8, 8, 200), [0.0, -0.0, 1e300, 5e-324]])
    texts = [repr(float(v)) for v in values] + ["1e5", "+3.", ".5", "-7E-3", "0.6898301657029192",
                                                "12345678901234567890.5", "inf", "-Infinity", "1e-400"]
    body = "".join(f"q Q0 d{i} 1 {t} r\n" for i, t in enumerate(texts)).encode()
    got = read_trec_run(body).score
    want = np.array([float(t) for t in texts])
    assert np.array_equal(got, want)  # bit-exact, including the full-parser fallbacks


def test_malformed_run_line_names_file_line_and_expectation(tmp_path):
    p = tmp_path / "bad.run"
    p.write_bytes(b"q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2\n")
    with pytest.raises(ValueError, match=r"bad\.run: line 3: expected 6 fields 'qid Q0 docno rank score runid', "
                                         r"found 4 field\(s\)"):
        read_trec_run(p)


def test_bad_score_is_reported_with_line():
    with pytest.raises(ValueError, match=r"<bytes>: line 2: score field 'abc' is not a number"):
        read_trec_run(b"q Q0 a 1 1 t\nq Q0 b 2 abc t\n")


@pytest.mark.parametrize("field", ["1_0", "1e", "0x10", "1.2.3", "--1", "+", "12345678901234567890_1", "1e5x", "nan"])
def test_bad_long_score_is_reported_with_line_by_either_full_parser(full_float_parser, field):
    # a valid 17-digit score first: the whole batch of fields goes to the full parser
    body = f"q Q0 a 1 0.30000000000000004 t\nq Q0 b 2 {field} t\n".encode()
    want = rf"<bytes>: line 2: score field '{re.escape(field)}' is not a number" + (
        ": NaN cannot be ranked" if field == "nan" else "$")
    with pytest.raises(ValueError, match=want):
        read_trec_run(body)


def test_reading_seventeen_digit_scores_imports_no_pyarrow(tmp_path):
    import subprocess
    import sys

    rng = np.random.default_rng(5)
    run = tmp_path / "run"
    run.write_text("".join(f"q{i % 7} Q0 d{i} {i} {float(v)!r} t\n" for i, v in enumerate(rng.random(5000))))
    code = ("import sys; from rankjit.io import read_trec_run; r = read_trec_run(sys.argv[1]); "
            "print(len(r.score), 'pyarrow' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["5000", "False", "False"]


def test_malformed_qrels_lines():
    with pytest.raises(ValueError, match=r"line 2: expected 4 fields 'qid iter docno rel', found 3"):
        read_trec_qrels(b"1 0 a 1\n1 0 b\n", name="qrels.x")
    with pytest.raises(ValueError, match=r"qrels\.x: line 1: relevance field '1\.5' is not an integer"):
        read_trec_qrels(b"1 0 a 1.5\n", name="qrels.x")


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nope.txt: no such file"):
        read_trec_run("nope.txt")


def test_diversity_qrels():
    div = read_diversity_qrels(b"51 1 d1 1\n51 2 d1 0\n51 2  d2\t1\n52 1 d9 1\n")
    assert div.qid.tolist() == ["51", "51", "51", "52"]
    assert div.subtopic.tolist() == [1, 2, 2, 1]
    assert div.docno.tolist() == ["d1", "d1", "d2", "d9"]
    assert div.judgment.tolist() == [1, 0, 1, 1]
    with pytest.raises(ValueError, match="subtopic field 'x' is not an integer"):
        read_diversity_qrels(b"51 x d1 1\n")


def test_string_column_roundtrip_and_from_columns():
    col = StringColumn.from_list(["", "é", "abc"])
    assert col.tolist() == ["", "é", "abc"]
    assert StringColumn.from_arrow(col.to_arrow()).tolist() == ["", "é", "abc"]
    run = TrecRun.from_columns([1, 1], ["a", "b"], [0.5, 0.25])
    assert run.qid.tolist() == ["1", "1"]


@pytest.mark.parametrize("rows", [[], [0], [3, 1, 3, 0, 2], [2, 2, 2]])
def test_string_column_take(rows):
    """Rows in any order, repeated or none; empty and non-ASCII strings (bytes gathered without pyarrow)."""
    values = ["", "é", "abc", "x" * 20]
    taken = StringColumn.from_list(values).take(np.array(rows, dtype=np.int64))
    assert taken.tolist() == [values[r] for r in rows]
    assert taken.offsets.dtype == np.int64 and taken.data.dtype == np.uint8


# ---- the chunked one-pass reader against a plain-Python split ---------------------------

from rankjit.io import _kernels as K  # noqa: E402
from rankjit.io import _trec  # noqa: E402

_SEPS = [b" ", b"\t", b"  ", b" \t ", b"\x0b", b"\x0c", b"\r "]


def _random_run_text(rng, n_lines):
    """Run lines with mixed separators, blank and comment lines, '#' in docnos, CRLF, odd numbers."""
    lines = []
    qid = b"q0"
    for i in range(n_lines):
        u = rng.random()
        if u < 0.05:
            lines.append(rng.choice([b"", b"   ", b"\t"]))
            continue
        if u < 0.08:
            lines.append(b"  # comment " + str(i).encode())
            continue
        if rng.random() < 0.2:  # runs of equal query ids, crossing chunk borders
            qid = b"q" + str(int(rng.integers(0, 5))).encode()
        docno = rng.choice([b"d", b"doc#", b"clueweb09-en0000-", b"x"]) + str(int(rng.integers(0, 10**int(rng.integers(1, 12))))).encode()
        score = rng.choice([repr(float(rng.normal() * 10.0 ** int(rng.integers(-5, 5)))).encode(),
                            str(int(rng.integers(-50, 50))).encode(), b"0.12345678901234567891", b"inf", b"1e-400",
                            b"-0.0", b"+3.", b".5"])
        fields = [qid, b"Q0", docno, str(i).encode(), score, b"tag" + str(i % 3).encode()]
        if rng.random() < 0.1:
            fields.append(b"extra")
        seps = [_SEPS[int(j)] for j in rng.integers(0, len(_SEPS), len(fields) - 1)]
        line = fields[0] + b"".join(s + f for s, f in zip(seps, fields[1:]))
        if rng.random() < 0.1:
            line = b" \t" + line + b"  "
        if rng.random() < 0.1:
            line += b"\r"
        lines.append(line)
    text = b"\n".join(lines)
    return text if rng.random() < 0.5 else text + b"\n"


def _python_run(text):
    rows = [ln.split() for ln in text.split(b"\n")]
    rows = [f for f in rows if f and not f[0].startswith(b"#")]
    return ([f[0].decode() for f in rows], [f[2].decode() for f in rows], [float(f[4]) for f in rows],
            rows[-1][5].decode() if rows else None)


@pytest.mark.parametrize("seed", range(6))
def test_chunked_reader_matches_python_split(seed):
    rng = np.random.default_rng(seed)
    text = _random_run_text(rng, int(rng.integers(0, 400)))
    want_q, want_d, want_s, want_tag = _python_run(text)
    buf = np.frombuffer(text, dtype=np.uint8)
    for n_chunks in (1, 2, 3, 7):
        qid, docno, score, tag = _trec._read_pairs(buf, "x", 0, 2, 4, 5, 6, "f", "score", "6 fields",
                                                   n_chunks=n_chunks)
        assert qid.tolist() == want_q and docno.tolist() == want_d and tag == want_tag
        assert np.array_equal(score, np.array(want_s, dtype=np.float64))
        # the cached derived data equal what is computed from the strings alone
        assert np.array_equal(qid.run_starts(), K.string_runs(qid.data, qid.offsets))
        assert np.array_equal(docno.hashes(), StringColumn.from_list(want_d).hashes())


def test_chunked_reader_reports_the_first_malformed_line():
    good = b"q Q0 d 1 2.0 t\n" * 50
    text = good + b"q Q0 d 1\n" + good + b"q Q0 d\n" + good
    buf = np.frombuffer(text, dtype=np.uint8)
    for n_chunks in (1, 2, 3, 5):
        with pytest.raises(ValueError, match=r"f: line 51: expected 6 fields, found 4 field\(s\)"):
            _trec._read_pairs(buf, "f", 0, 2, 4, 5, 6, "f", "score", "6 fields", n_chunks=n_chunks)
        bad = np.frombuffer(good + b"q Q0 d 1 x1 t\n" + good + b"q Q0 d 1 x2 t\n", dtype=np.uint8)
        with pytest.raises(ValueError, match=r"f: line 51: score field 'x1' is not a number"):
            _trec._read_pairs(bad, "f", 0, 2, 4, 5, 6, "f", "score", "6 fields", n_chunks=n_chunks)


def test_chunked_reader_with_a_largest_number_of_fields():
    # max_fields: a line of more fields is malformed (ir_measures' reading of a run: exactly six); without it,
    # fields after the sixth are ignored (trec_eval's)
    good = b"q Q0 d 1 2.0 t\n" * 50
    text = good + b"q Q0 d 1 2.0 t extra\n" + good + b"q Q0 d\n"
    buf = np.frombuffer(text, dtype=np.uint8)
    for n_chunks in (1, 2, 3, 5):
        with pytest.raises(ValueError, match=r"f: line 51: expected 6 fields, found 7 field\(s\)"):
            _trec._read_pairs(buf, "f", 0, 2, 4, 5, 6, "f", "score", "6 fields", n_chunks=n_chunks, max_fields=6)
        with pytest.raises(ValueError, match=r"f: line 102: expected 6 fields, found 3 field\(s\)"):
            _trec._read_pairs(buf, "f", 0, 2, 4, 5, 6, "f", "score", "6 fields", n_chunks=n_chunks)
        qid, _, score, _ = _trec._read_pairs(np.frombuffer(good + good, dtype=np.uint8), "f", 0, 2, 4, 5, 6, "f",
                                             "score", "6 fields", n_chunks=n_chunks, max_fields=6)
        assert len(qid) == 100 and (score == 2.0).all()
    assert len(read_trec_run(good + b"q Q0 d 1 2.0 t extra\n")) == 51


def test_large_file_is_memory_mapped_and_read_in_chunks(tmp_path, monkeypatch):
    rng = np.random.default_rng(9)
    text = _random_run_text(rng, 3000)
    p = tmp_path / "run.txt"
    p.write_bytes(text)
    monkeypatch.setattr(_trec, "_MMAP_MIN", 0)
    monkeypatch.setattr(_trec, "_PARALLEL_MIN_BYTES", 0)
    run = read_trec_run(p)
    want_q, want_d, want_s, want_tag = _python_run(text)
    assert run.qid.tolist() == want_q and run.docno.tolist() == want_d and run.runid == want_tag
    assert np.array_equal(run.score, np.array(want_s))
    qrels = read_trec_qrels(b"q1 0 d1 3\n\nq1 0 doc#2 -1\n# c\nq2 0 d1 2")
    assert qrels.qid.tolist() == ["q1", "q1", "q2"] and qrels.rel.tolist() == [3, -1, 2]


def test_hash_depends_only_on_the_bytes():
    words = [b"", b"a", b"abcdefg", b"abcdefgh", b"abcdefghi", b"clueweb09-en0000-00-00000", "é".encode()]
    col = StringColumn.from_list(words + words[::-1])
    h = col.hashes()
    assert np.array_equal(h[: len(words)], h[len(words):][::-1])
    assert len(set(h[: len(words)].tolist())) == len(words)
    buf = np.frombuffer(b"xx" + b"".join(words), dtype=np.uint8)
    pos = 2
    for w, hw in zip(words, h):
        assert K.hash_bytes(buf, pos, pos + len(w)) == hw
        pos += len(w)
