"""More hostile files: a very long score field, ids that are not UTF-8, LETOR labels and qids,
and the ``-Z`` z-scores file of ``rankjit trec_eval``.

* Long fields: the fallback number parser converts fields in tables by width class, so one
  score written with thousands of digits no longer makes a (rows x longest field) table
  (a 2.4 MB run with one 3,000-digit score took 2.8 GB; 12,000 digits: MemoryError).
* Ids that are not UTF-8 (``caf\\xe9``, ``caf\\xe8``) are kept byte for byte (surrogate
  escapes), so two such queries are never merged, and the command line writes them back
  as the bytes of the files, as trec_eval does.
* ``read_letor`` refuses bad labels by file and line at read time and keeps ids that are
  not UTF-8 (pyarrow's ``ArrowInvalid`` leaked before).
* ``-Z`` files are read as the qrels and runs are (gzip, ``\\r`` line ends, byte-order mark),
  and quote at most 120 bytes of a line.
"""
from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)

from rankjit.cli import main
from rankjit.io import read_letor, read_scores, read_trec_qrels, read_trec_run
from rankjit.io._trec import StringColumn

LATIN1_QRELS = b"caf\xe9 0 a 1\ncaf\xe9 0 b 0\ncaf\xe8 0 a 0\ncaf\xe8 0 b 1\n"
LATIN1_RUN = b"caf\xe9 Q0 a 1 2 r\xe9\ncaf\xe9 Q0 b 2 1 r\xe9\ncaf\xe8 Q0 a 1 2 r\xe9\ncaf\xe8 Q0 b 2 1 r\xe9\n"


@pytest.fixture
def latin1(tmp_path):
    qrels, run = tmp_path / "l1.qrels", tmp_path / "l1.run"
    qrels.write_bytes(LATIN1_QRELS)
    run.write_bytes(LATIN1_RUN)
    return qrels, run


def _cli(args, capsysbinary):
    rc = main([str(a) for a in args])
    out, err = capsysbinary.readouterr()
    return rc, out, err.decode("utf-8", "backslashreplace")


# ---- D1: one very long score field -------------------------------------------------------

def _long_score_lines(n=2000, digits=3000):
    lines = [b"0.12345678901234567"] * n  # 17 digits: the fallback parser's fields
    lines[5] = b"0." + b"3" * digits
    return lines


def test_long_score_field_memory_is_bounded():
    lines = _long_score_lines()
    lines[7] = b"-1" + b"0" * 400 + b".5e-390"  # fields of other width classes: 512 bytes,
    lines[9] = b"1" * 70 + b"e-60"  # 128,
    lines[11] = b"1e" + b"0" * 100 + b"5000"  # 128 (inf)
    data = b"\n".join(lines) + b"\n"
    read_scores(b"0.12345678901234567\n")  # (kernels compiled or loaded outside the measurement)
    tracemalloc.start()
    try:
        values = read_scores(data, name="s.txt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # before: a (2000 x 3002) byte table and its int64 positions, ~96 MB; now ~1 MB
    assert peak < 20e6, peak
    assert values.tolist() == [float(s) for s in lines]  # the values numpy's parser gives each field
    run = b"".join(b"q Q0 d%d %d %s t\n" % (i, i, s) for i, s in enumerate(lines))
    assert read_trec_run(run).score.tolist() == values.tolist()


def test_long_bad_score_field_quoted_120_bytes():
    lines = _long_score_lines(50, 3000)
    lines[3] = b"0." + b"3" * 3000 + b"x"
    lines[40] = b"1,5"  # a later bad field of another width class is not the one named
    run = b"".join(b"q Q0 d%d %d %s t\n" % (i, i, s) for i, s in enumerate(lines))
    with pytest.raises(ValueError) as info:
        read_trec_run(run, name="run.txt")
    assert str(info.value) == ("run.txt: line 4: score field '0." + "3" * 118 + "' (its first 120 of 3003 bytes) "
                               "is not a number")
    lines[2] = b"1.5.2"  # the first bad field, in a class of shorter fields
    with pytest.raises(ValueError, match=r"^s\.txt: line 3: score field '1\.5\.2' is not a number$"):
        read_scores(b"\n".join(lines), name="s.txt")


# ---- D3: ids that are not UTF-8 ------------------------------------------------------------

def test_string_column_is_lossless():
    col = StringColumn.from_list([b"caf\xe9", b"caf\xe8", "caf\udce9", "caf\u00e9"])
    assert col.tolist() == ["caf\udce9", "caf\udce8", "caf\udce9", "caf\u00e9"]
    assert col[0].encode("utf-8", "surrogateescape") == b"caf\xe9"
    run = read_trec_run(LATIN1_RUN)
    assert run.qid.tolist() == ["caf\udce9"] * 2 + ["caf\udce8"] * 2 and run.runid == "r\udce9"
    assert read_trec_qrels(LATIN1_QRELS).qid[2] == "caf\udce8"


def test_trec_eval_q_writes_the_original_ids(latin1, capsysbinary):
    rc, out, err = _cli(["trec_eval", "-q", "-m", "map", "-m", "runid", *latin1], capsysbinary)
    assert rc == 0, err
    # the ids' bytes, as trec_eval writes them (before: 'caf\xef\xbf\xbd' twice, for both queries)
    assert out == (b"map                   \tcaf\xe8\t0.5000\n"
                   b"map                   \tcaf\xe9\t1.0000\n"
                   b"runid                 \tall\tr\xe9\n"
                   b"map                   \tall\t0.7500\n")


def test_trec_eval_q_judgment_groups_keep_ids(latin1, capsysbinary):
    rc, out, err = _cli(["trec_eval", "-R", "qrels_jg", "-q", "-m", "map_avgjg", *latin1], capsysbinary)
    assert rc == 0, err
    assert out.splitlines()[:2] == [b"map_avgjg             \tcaf\xe8\t0.5000",
                                    b"map_avgjg             \tcaf\xe9\t1.0000"]


def test_zscores_of_ids_that_are_not_utf8(latin1, tmp_path, capsysbinary):
    z = tmp_path / "l1.z"
    z.write_bytes(b"caf\xe9 map 0.5 0.1\n")
    rc, out, err = _cli(["trec_eval", "-q", "-m", "map", "-Z", z, *latin1], capsysbinary)
    assert rc == 0, err
    # trec_eval's output: caf\xe8 has no line in the file (before: caf\xe9's line was applied to it, 0.0000)
    assert out == (b"Zmap                   \tcaf\xe8\t-1000000.0000\n"
                   b"Zmap                   \tcaf\xe9\t5.0000\n"
                   b"Zmap                   \tall\t-499997.5000\n")
    z.write_bytes(b"caf\xe9 map 0.5 0.1\ncaf\xe8 map 0.1 0.2\n")  # before: refused, "given twice"
    rc, out, err = _cli(["trec_eval", "-q", "-m", "map", "-Z", z, *latin1], capsysbinary)
    assert rc == 0, err
    assert out == (b"Zmap                   \tcaf\xe8\t2.0000\n"
                   b"Zmap                   \tcaf\xe9\t5.0000\n"
                   b"Zmap                   \tall\t3.5000\n")


def test_eval_per_query_ids_that_are_not_utf8(latin1, capsysbinary):
    rc, out, err = _cli(["eval", "--per-query", *latin1, "AP"], capsysbinary)
    assert rc == 0, err
    # before: one row 'caf\ufffd' for the two queries
    assert out == (b"query  measure  l1.run\n"
                   b"caf\xe8   AP       0.5000\n"
                   b"caf\xe9   AP       1.0000\n"
                   b"all    AP       0.7500\n")
    rc, out, err = _cli(["eval", "--per-query", "--format", "csv", *latin1, "AP"], capsysbinary)
    assert rc == 0, err
    assert out == b"query,measure,l1.run\ncaf\xe8,AP,0.5\ncaf\xe9,AP,1.0\nall,AP,0.75\n"
    rc, out, err = _cli(["eval", "--per-query", "--format", "json", *latin1, "AP"], capsysbinary)
    assert rc == 0, err
    # JSON text is UTF-8: the bytes are written as the escapes \udce8, \udce9 (json.loads gives the str back)
    doc = json.loads(out)
    assert list(doc) == ["l1.run"] and list(doc["l1.run"]) == ["AP"]
    assert sorted(doc["l1.run"]["AP"].items()) == [("caf\udce8", 0.5), ("caf\udce9", 1.0)]


def test_duplicate_of_an_id_that_is_not_utf8(tmp_path, capsysbinary):
    (tmp_path / "q").write_bytes(b"caf\xe9 0 a 1\n")
    (tmp_path / "run.txt").write_bytes(b"caf\xe9 Q0 a 1 2 r\ncaf\xe9 Q0 a 2 1 r\n")
    rc, out, err = _cli(["trec_eval", tmp_path / "q", tmp_path / "run.txt"], capsysbinary)
    assert rc == 1 and re.fullmatch(r"rankjit trec_eval: error: \S*run\.txt: document 'a' is retrieved twice for "
                                    r"query 'caf\\udce9' \(lines 1 and 2\) \(trec_eval refuses duplicate documents\)\n",
                                    err), err


def test_output_to_a_text_stream_without_bytes(latin1, monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buf)
    assert main(["trec_eval", "-q", "-m", "map", *map(str, latin1)]) == 0
    assert buf.getvalue().splitlines()[:2] == ["map                   \tcaf\udce8\t0.5000",
                                               "map                   \tcaf\udce9\t1.0000"]


def test_trec_eval_q_same_bytes_as_trec_eval(trec_eval_bin, latin1):  # noqa: F811 (the fixture)
    args = ["-q", "-m", "map", "-m", "P.1", "-m", "runid", *map(str, latin1)]
    want = subprocess.run([trec_eval_bin, *args], capture_output=True, timeout=60)
    got = subprocess.run([sys.executable, "-m", "rankjit", "trec_eval", *args], capture_output=True, timeout=300)
    assert want.returncode == got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


# ---- D7: read_letor ----------------------------------------------------------------------

def test_letor_ids_that_are_not_utf8():
    b = read_letor(b"1 qid:caf\xe9 1:1\n0 qid:caf\xe9 1:1\n2 qid:caf\xe8\n", name="train.txt")
    assert b.qids.tolist() == ["caf\udce9", "caf\udce8"]
    assert b.offsets.tolist() == [0, 2, 3] and b.labels.tolist() == [1, 0, 2]
    with pytest.raises(ValueError) as info:
        read_letor(b"1 qid:caf\xe9\n0 qid:caf\xe8\n2 qid:caf\xe9\n", name="train.txt")
    assert str(info.value) == ("train.txt: line 3: rows of query 'caf\\udce9' are not contiguous; "
                               "sort the file by qid first")


@pytest.mark.parametrize("label, why", [
    (b"-1", "is negative (labels are relevance grades >= 0)"),
    (b"-0.5", "is negative (labels are relevance grades >= 0)"),
    (b"inf", "is infinite (labels must be finite)"),
    (b"1e400", "is infinite (labels must be finite)"),
    (b"99999999999999999999", "is beyond 2**53, where float64 cannot hold every integer (labels must be integers "
                              "of at most 18 digits, or numbers up to 2**53)"),
])
def test_letor_bad_labels(label, why):
    with pytest.raises(ValueError) as info:
        read_letor(b"1 qid:1 1:1\n\n2 qid:1\n" + label + b" qid:1 1:1\n0 qid:1\n", name="train.txt")
    assert str(info.value) == f"train.txt: line 4: label field {label.decode()!r} {why}"


def test_letor_labels_kept():
    b = read_letor(b"1 qid:caf\xe9\n0.5 qid:caf\xe9\n", name="train.txt")  # (before: pyarrow's ArrowInvalid)
    assert b.qids.tolist() == ["caf\udce9"] and b.labels.tolist() == [1.0, 0.5]
    b = read_letor(b"1 qid:1\n0.5 qid:1\n9007199254740992 qid:1\n", name="train.txt")
    assert b.labels.dtype == np.float64 and b.labels.tolist() == [1.0, 0.5, 2.0**53]
    b = read_letor(b"1 qid:1\n999999999999999999 qid:1\n")
    assert b.labels.dtype == np.int64 and b.labels.tolist() == [1, 999999999999999999]


# ---- D8: the -Z z-scores file ----------------------------------------------------------------

Z_QRELS = b"1 0 a 1\n1 0 b 0\n2 0 a 0\n2 0 b 1\n"
Z_RUN = b"1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 a 1 2 r\n2 Q0 b 2 1 r\n"
Z_FILE = b"1 map 0.5 0.1\n2 map 0.1 0.2\n"
Z_OUT = (b"Zmap                   \t1\t5.0000\nZmap                   \t2\t2.0000\n"
         b"Zmap                   \tall\t3.5000\n")


@pytest.mark.parametrize("content", [
    gzip.compress(Z_FILE),
    Z_FILE.replace(b"\n", b"\r"),
    b"\xef\xbb\xbf" + Z_FILE,
], ids=["gzip", "cr", "bom"])
def test_z_file_read_like_the_trec_files(tmp_path, content, capsysbinary):
    (tmp_path / "q").write_bytes(Z_QRELS)
    (tmp_path / "r").write_bytes(Z_RUN)
    (tmp_path / "z").write_bytes(content)
    rc, out, err = _cli(["trec_eval", "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "q", tmp_path / "r"],
                        capsysbinary)
    assert rc == 0, err  # before: gzip and \r refused ("expected 4 fields"), the BOM joined to query 1
    assert out == Z_OUT


@pytest.mark.parametrize("content, message", [
    (bytes(range(128, 256)) * 11, r"z: line 1: expected 4 fields 'qid measure mean std_dev', found 1 field\(s\): "
                                  r"'\ufffd{120}'"),
    (b"1 map 0.5 " + b"7" * 2000 + b"x\n",
     r"z: line 1: std_dev field '7{120}' is not a number: '1 map 0\.5 7{110}'"),
    (Z_FILE + b"\xef\xbb\xbf" + Z_FILE, r"z: line 3: a UTF-8 byte-order mark \(EF BB BF\) inside the file "
                                        r"\(were files concatenated\?\): '\\ufeff1 map 0\.5 0\.1'"),
    (gzip.compress(Z_FILE, mtime=0)[:-12],
     r"z: line 2: truncated or corrupt gzip data \(.*\); the decompressed text breaks off in this line"),
], ids=["binary", "long-field", "bom-inside", "truncated-gzip"])
def test_z_file_errors_quote_at_most_120_bytes(tmp_path, content, message, capsysbinary):
    (tmp_path / "q").write_bytes(Z_QRELS)
    (tmp_path / "r").write_bytes(Z_RUN)
    (tmp_path / "z").write_bytes(content)
    rc, out, err = _cli(["trec_eval", "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "q", tmp_path / "r"],
                        capsysbinary)
    assert rc == 1 and out == b""
    assert len(err.splitlines()) == 1 and len(err) < 600, err
    assert re.fullmatch(r"rankjit trec_eval: error: \S*" + message + r"\n", err), err
