"""Hostile TREC files: the readers and ``rankjit trec_eval`` never silently misread one.

Part 1 takes each class of malformed or unusual file in turn (line ends, byte-order
marks and UTF-16, damaged gzip, error locations, the command line's one-line errors);
expected values come from reading the plain ``\\n`` version of the same file.

Part 2 is a seeded file fuzzer: it mutates trec_eval's test-suite files and a TREC
2012 Web run and holds ``rankjit trec_eval`` against the real trec_eval
(``../shared/tools/build-trec_eval``).  For every mutant, either both print the same
lines, or rankjit reads the file as intended (its output equals trec_eval's on the
cleanly written equivalent file), or rankjit stops with one clear line naming the
file (and the line) where trec_eval refuses or misreads the file.
"""
from __future__ import annotations

import collections
import contextlib
import gzip
import io
import os
import re
import subprocess
import sys
import zlib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

from rankjit.cli import main  # noqa: E402
from rankjit.io import read_diversity_qrels, read_trec_qrels, read_trec_run  # noqa: E402

SHARED = Path(__file__).parents[2] / "shared"  # ../shared, as tests/test_cli_trec_eval.py finds it
DATA = SHARED / "data"
TE_DATA = DATA / "trec_eval"
WEB = DATA / "web2012"
BUILD_TREC_EVAL = SHARED / "tools" / "build-trec_eval"

BOM = b"\xef\xbb\xbf"
COMPILE_NOTICE = "rankjit: compiling "  # the first call's one-line notice per kernel (cold cache)

RUN = (
    b"q1 Q0 d1 1 3.5 tagA\n"
    b"q1 Q0 d2 2 2.5 tagA\n"
    b"# a comment\n"
    b"q1 Q0 d3 3 1.5 tagA\n"
    b"\n"
    b"q2 Q0 d1 1 0.25 tagB\n"
    b"q2 Q0 d4 2 0.75 tagB\n"
)
QRELS = b"q1 0 d1 1\nq1 0 d3 2\nq1 0 d9 1\nq2 0 d4 1\nq2 0 d5 0\n"
DIV = b"q1 1 d1 1\nq1 2 d1 0\nq1 2 d3 1\n\nq2 1 d4 1\nq2 3 d5 1\n"


def _cr(text):
    return text.replace(b"\n", b"\r")


def _crlf(text):
    return text.replace(b"\n", b"\r\n")


def _mixed(text, seed=0):
    """Each line end drawn from \\n, \\r\\n and \\r.

    An empty line after a \\r line end ends in \\r: \\r then \\n is one line end
    (\\r\\n), in an editor as in the readers.
    """
    rng = np.random.default_rng(seed)
    ends = (b"\n", b"\r\n", b"\r")
    out = []
    prev = b"\n"
    for part in text.split(b"\n")[:-1]:
        prev = b"\r" if (prev == b"\r" and not part) else ends[int(rng.integers(0, 3))]
        out.append(part + prev)
    return b"".join(out) + text.split(b"\n")[-1]


def _columns(obj):
    """Every column of a reader's result, as plain Python values."""
    out = {}
    for field in ("qid", "docno", "score", "rel", "subtopic", "judgment", "runid"):
        value = getattr(obj, field, None)
        if value is not None:
            out[field] = value if isinstance(value, str) else list(value.tolist())
    return out


def _cli(args):
    """``rankjit trec_eval ARGS`` in this process: ``(exit code, stdout, stderr lines)``.

    Stderr lines are those a warm kernel cache prints: the compile notices of a cold
    cache are left out.
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["trec_eval", *[str(a) for a in args]])
    lines = [ln for ln in err.getvalue().splitlines() if not ln.startswith(COMPILE_NOTICE)]
    return rc, out.getvalue(), lines


def _one_error_line(rc, lines, path, line=None):
    """A clear error: status 1, one stderr line that names the file (and the line)."""
    assert rc == 1, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("rankjit trec_eval: error: "), lines
    where = f"{path}: line {line}: " if line is not None else f"{path}: "
    assert where in lines[0], (where, lines)
    return lines[0]


# ------------------------------------------------------------------ 1. line ends
@pytest.mark.parametrize("variant", [_crlf, _cr, _mixed, lambda t: _mixed(t, 1)], ids=["crlf", "cr", "mixed", "mixed2"])
@pytest.mark.parametrize("reader, text", [(read_trec_run, RUN), (read_trec_qrels, QRELS), (read_diversity_qrels, DIV)],
                         ids=["run", "qrels", "diversity"])
def test_line_ends_read_like_the_plain_file(reader, text, variant):
    assert _columns(reader(variant(text))) == _columns(reader(text))


@pytest.mark.parametrize("variant", [lambda t: t, _crlf, _cr, _mixed], ids=["lf", "crlf", "cr", "mixed"])
def test_error_line_numbers_count_every_kind_of_line_end(variant):
    # the 4th line (counting the comment and the blank line) lacks two fields
    bad_run = b"q Q0 a 1 1 t\n# c\n\nq Q0 b 2\nq Q0 c 3 1 t\n"
    with pytest.raises(ValueError, match=r"^r\.txt: line 4: expected 6 fields .*found 4 field\(s\): 'q Q0 b 2'$"):
        read_trec_run(variant(bad_run), name="r.txt")
    bad_qrels = b"q 0 a 1\n\n\nq 0 b x\n"
    with pytest.raises(ValueError, match=r"^q\.txt: line 4: relevance field 'x' is not an integer"):
        read_trec_qrels(variant(bad_qrels), name="q.txt")
    bad_div = b"q 1 a 1\n\nq 1 b\n"
    with pytest.raises(ValueError, match=r"^d\.txt: line 3: expected 4 fields"):
        read_diversity_qrels(variant(bad_div), name="d.txt")


def test_old_mac_run_through_the_cli(tmp_path):
    # the case: a 5-line run with \r line ends was read as one line, exit 0
    run = b"".join(b"q1 Q0 d%d %d %d t\n" % (i, i, 10 - i) for i in range(5))
    qrels = b"q1 0 d0 1\nq1 0 d3 1\nq1 0 d7 1\n"
    (tmp_path / "qrels").write_bytes(qrels)
    (tmp_path / "plain").write_bytes(run)
    (tmp_path / "mac").write_bytes(_cr(run))
    args = ["-q", "-m", "num_ret", "-m", "map"]
    plain = _cli([*args, tmp_path / "qrels", tmp_path / "plain"])
    assert plain[0] == 0 and "num_ret               \tall\t5" in plain[1]
    assert _cli([*args, tmp_path / "qrels", tmp_path / "mac"]) == plain
    (tmp_path / "qrels.mac").write_bytes(_cr(qrels))
    assert _cli([*args, tmp_path / "qrels.mac", tmp_path / "plain"]) == plain


def test_carriage_return_before_a_blank_stays_whitespace():
    # a \r followed by a blank inside a \n file is whitespace, as trec_eval reads it;
    # followed by a field it starts a new line (a file with mixed line ends)
    run = read_trec_run(b"q1\r Q0 d1 1 2 t \r\nq1 Q0 d2 2 1 t\rq1 Q0 d3 3 0 t\n")
    assert run.docno.tolist() == ["d1", "d2", "d3"]
    assert read_trec_run(b"q1 Q0 d1 1 2 t\r\r\nq1 Q0 d2 2 1 t\r\r\n").docno.tolist() == ["d1", "d2"]


#: (reader, fields of a record, the fields a reader keeps of a record)
READERS = {
    "run": (read_trec_run, 6, lambda r: list(zip(r.qid.tolist(), r.docno.tolist(), r.score.tolist()))),
    "qrels": (read_trec_qrels, 4, lambda r: list(zip(r.qid.tolist(), r.docno.tolist(), r.rel.tolist()))),
    "diversity": (read_diversity_qrels, 4, lambda r: list(zip(r.qid.tolist(), r.subtopic.tolist(),
                                                              r.docno.tolist(), r.judgment.tolist()))),
}


def _kept(kind, fields):
    """What ``READERS[kind]`` keeps of one line's fields (bytes), as the reader's types."""
    f = [x.decode() for x in fields]
    if kind == "run":
        return (f[0], f[2], float(f[4]))
    if kind == "qrels":
        return (f[0], f[2], int(f[3]))
    return (f[0], int(f[1]), f[2], int(f[3]))


_FIELD_AFTER_BLANKS = re.compile(rb"[ \t\x0b\x0c]+[^ \t\x0b\x0c]")


def _python_lines(data, fields):
    """The lines of ``data`` by docs/cli.md's line-end rule, in plain Python (apart from the readers).

    No ``\n`` in the file: every ``\r`` ends a line.  Otherwise the text is cut at
    ``\n`` (a ``\r`` right before it is a blank) and at every ``\r`` not followed by
    blanks and then a field; a region between two such cuts is a list of segments
    joined by ``\r`` that are followed by blanks and a field: :func:`_region_lines`.
    Returns the lines as bytes (a ``\r`` read as a blank is written as a space).
    """
    if b"\n" not in data:
        return data.split(b"\r")
    pieces = data.split(b"\n")
    lines = []
    for k, piece in enumerate(pieces):
        if k < len(pieces) - 1 and piece.endswith(b"\r"):
            piece = piece[:-1] + b" "  # \r\n
        regions = []
        for j, part in enumerate(piece.split(b"\r")):
            if j and _FIELD_AFTER_BLANKS.match(part):
                regions[-1].append(part)
            else:
                regions.append([part])
        for segs in regions:
            lines += _region_lines(segs, fields)
    return lines


def _region_lines(segs, fields):
    """The \r between ``segs[t - 1]`` and ``segs[t]`` ends a line when no field precedes it on
    its line, when its line is a comment, or when (``fields`` > 0) its line holds a whole
    record before it and ``segs[t:]`` hold at least ``fields`` fields; otherwise it is a blank."""
    counts = [len(seg.split()) for seg in segs]
    lines = [segs[0]]
    start = 0  # first segment of the current line
    for t in range(1, len(segs)):
        before = sum(counts[start:t])
        comment = before and lines[-1].split()[0].startswith(b"#")
        if before == 0 or comment or (fields > 0 and before >= fields and sum(counts[t:]) >= fields):
            lines.append(segs[t])
            start = t
        else:
            lines[-1] += b" " + segs[t]
    return lines


def _python_read(kind, data):
    """``(rows kept, None)`` or ``(None, (line, fields found))`` of the first short line."""
    fields = READERS[kind][1]
    rows = []
    for i, line in enumerate(_python_lines(data, fields)):
        f = line.split()
        if not f or f[0].startswith(b"#"):
            continue
        if len(f) < fields:
            return None, (i + 1, len(f))
        rows.append(_kept(kind, f))
    return rows, None


def _check_against_python(kind, data):
    reader, fields, kept = READERS[kind]
    want, short = _python_read(kind, data)
    if short is None:
        assert kept(reader(data, name="f")) == want, data
    else:
        line, found = short
        with pytest.raises(ValueError, match=rf"^f: line {line}: expected {fields} fields.* found {found} field"):
            reader(data, name="f")


@pytest.mark.parametrize("kind", list(READERS))
def test_python_line_split_reads_the_documented_examples(kind):
    # the reference itself, on the cases docs/cli.md spells out
    n = READERS[kind][1]
    rec = b" ".join([b"1"] * n)
    assert _python_lines(b"a b\r c\n", n) == [b"a b  c", b""]
    assert _python_lines(b"a b\rc d\n", n) == [b"a b", b"c d", b""]
    assert _python_lines(rec + b"\r  " + rec + b"\n", n) == [rec, b"  " + rec, b""]
    assert _python_lines(b"# c\r  " + rec + b"\n", n) == [b"# c", b"  " + rec, b""]
    assert _python_lines(rec + b"\r\n" + rec, n) == [rec + b" ", rec]
    assert _python_lines(rec + b"\r" + rec, n) == [rec, rec]


@pytest.mark.parametrize("kind", list(READERS))
def test_cr_before_an_indented_record_ends_the_line(kind):
    # a \r line end followed by an indented line was read as a blank: the second record
    # became ignored extra fields of the first (run, qrels and diversity qrels alike)
    reader, _, kept = READERS[kind]
    plain = {"run": RUN, "qrels": QRELS, "diversity": DIV}[kind]
    lines = [ln for ln in plain.split(b"\n") if ln.split() and not ln.startswith(b"#")]
    want = kept(reader(plain))
    for lead in (b" ", b"\t", b"  \t "):
        for sep in ((b"\r", b"\r"), (b"\r", b"\n"), (b"\r", b"\r\n")):
            mixed = b"".join(ln + sep[i % 2] + lead for i, ln in enumerate(lines))
            assert kept(reader(mixed)) == want, mixed
            _check_against_python(kind, mixed)
    # after a comment line: the record is not swallowed by the comment
    assert kept(reader(b"# head\r  " + b"\n".join(lines) + b"\n")) == want
    # the blank between two fields stays a blank (trec_eval's reading), also before extra fields
    first = lines[0].split()
    assert kept(reader(b" ".join(first[:2]) + b"\r " + b" ".join(first[2:]) + b" x\n")) == want[:1]


def test_cr_line_ends_count_in_error_line_numbers():
    # an indented line after a \r line end is a line of its own in the error's line number
    bad = b"q Q0 a 1 1 t\r  q Q0 b 2 1 t\n  # c\r  q Q0 c 3\n"
    with pytest.raises(ValueError, match=r"^r: line 4: expected 6 fields .*found 4 field\(s\): 'q Q0 c 3'$"):
        read_trec_run(bad, name="r")
    with pytest.raises(ValueError, match=r"^q: line 3: expected 4 fields .*found 3 field\(s\)"):
        read_trec_qrels(b"q 0 a 1\r q 0 b 1\r\n\t q 0 c\n", name="q")


#: pieces of a random text: fields (numbers, so that every reader's number fields parse), blanks, line ends
_SOUP = st.lists(st.sampled_from([b"1", b"20", b"3", b" ", b"\t", b"  ", b"\x0b", b"\r", b"\r", b"\n", b"\r\n",
                                  b"\r ", b"\r\t", b"\n#", b"\n# 7"]), max_size=80)


@given(pieces=_SOUP, kind=st.sampled_from(list(READERS)))
def test_any_text_is_read_as_the_python_line_split(pieces, kind):
    # any mix of line ends, blanks, comments and fields: the same records, or the same first short line
    _check_against_python(kind, b"".join(pieces))


@st.composite
def _mixed_records(draw, kind):
    """Records of ``kind`` written with any mix of line ends, indents, blank and comment lines, and \\r blanks.

    Returns ``(text, records)``: the records as the reader keeps them.
    """
    n = READERS[kind][1]
    lines, records = [], []
    for _ in range(draw(st.integers(1, 12))):
        u = draw(st.integers(0, 9))
        if u == 0:
            lines.append(draw(st.sampled_from([b"", b"  ", b"\t"])))
            continue
        if u == 1:
            lines.append(draw(st.sampled_from([b"# c", b"  # a comment line", b"# 1 2 3 4 5 6 7"])))
            continue
        fields = [b"q%d" % draw(st.integers(0, 3)), b"%d" % draw(st.integers(0, 5)),
                  b"d%d" % draw(st.integers(0, 9)), b"%d" % draw(st.integers(0, 3)),
                  b"%d.5" % draw(st.integers(0, 9)), b"tag"][:n]
        # \r + blank between two fields of the record (trec_eval's reading); extra fields, ignored,
        # after plain blanks (a \r + blank before one, then a \r line end and an indented record, is
        # read as two lines: docs/cli.md)
        seps = [draw(st.sampled_from([b" ", b"\t", b"  ", b" \t", b"\r ", b"\r\t"])) for _ in fields[1:]]
        extra = draw(st.integers(0, 2))
        fields += [b"x"] * extra
        seps += [draw(st.sampled_from([b" ", b"\t"])) for _ in range(extra)]
        lead = draw(st.sampled_from([b"", b"", b" ", b"\t", b"  "]))
        lines.append(lead + fields[0] + b"".join(s + f for s, f in zip(seps, fields[1:])))
        records.append(_kept(kind, fields))
    ends = [draw(st.sampled_from([b"\n", b"\r\n", b"\r"])) for _ in lines]
    forced = draw(st.integers(0, len(lines) - 1))
    ends[forced] = b"\n"  # a \n somewhere: a \r then a blank is a blank
    text = b""
    for i, (line, end) in enumerate(zip(lines, ends)):
        if text.endswith(b"\r") and not line and i != forced:
            end = b"\r"  # \r then an empty line then \n would be one \r\n line end
        text += line + end  # (the forced \n stays: \r + empty + \n is one line end, and no record is lost)
    assert b"\n" in text
    return text, records


@given(data=st.data(), kind=st.sampled_from(list(READERS)))
def test_mixed_line_ends_keep_every_record(data, kind):
    # whatever the mix, every record is read whole and once, in order
    text, records = data.draw(_mixed_records(kind))
    reader, _, kept = READERS[kind]
    assert kept(reader(text)) == records
    _check_against_python(kind, text)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.slow  # real data: the JIT pass checks it; interpreted it takes seconds
def test_mixed_line_ends_on_a_web2012_run_and_qrels(seed):
    # the seeded mixes of the fuzzer, with indented lines and \r blanks: as many records as the \n file
    rng = np.random.default_rng(seed)
    for kind, path in (("run", WEB / "run.ql.cata.txt"), ("qrels", WEB / "qrels.adhoc.txt")):
        if not path.is_file():
            pytest.skip(f"{path} not found (../shared/data absent)")
        text = path.read_bytes()
        reader, _, kept = READERS[kind]
        mutant = _indented_mix(rng, text)
        assert kept(reader(mutant)) == kept(reader(text))
        want, short = _python_read(kind, mutant)
        assert short is None and len(want) == len(reader(text))


def _indented_mix(rng, text, ends=(b"\n", b"\r\n", b"\r")):
    """``text`` with each line end drawn from ``ends``, two lines in three indented and
    some blanks between fields written as \\r + blank (text without extra fields)."""
    out = []
    for line in text.rstrip(b"\n").split(b"\n"):
        fields = line.split()
        seps = [b"\r " if rng.random() < 0.05 else b" " for _ in fields[1:]]
        lead = [b"", b" ", b"\t "][int(rng.integers(0, 3))]
        out.append(lead + fields[0] + b"".join(s + f for s, f in zip(seps, fields[1:])))
        out.append(ends[int(rng.integers(0, len(ends)))])
    return b"".join(out)


def test_duplicate_lines_are_numbered_as_the_reader_numbers_them(tmp_path):
    # the file is read again on the error path with the reader's record size (6 fields for a
    # run): a \r line end before an indented record ends the line there too
    run = b"q1 Q0 d5 1 9 t\r  q1 Q0 d6 2 8 t\nq1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d1 3 1 t\n"
    first, second = [i + 1 for i, ln in enumerate(_python_lines(run, 6)) if b" d1 " in ln]
    (tmp_path / "run").write_bytes(run)
    (tmp_path / "qrels").write_bytes(b"q1 0 d1 1\n")
    rc, _, lines = _cli([tmp_path / "qrels", tmp_path / "run"])
    assert f"(lines {first} and {second})" in _one_error_line(rc, lines, tmp_path / "run")


# ------------------------------------------------------------ 2. BOM and UTF-16
@pytest.mark.parametrize("reader, text", [(read_trec_run, RUN), (read_trec_qrels, QRELS), (read_diversity_qrels, DIV)],
                         ids=["run", "qrels", "diversity"])
def test_leading_utf8_bom_is_dropped(reader, text):
    assert _columns(reader(BOM + text)) == _columns(reader(text))
    assert _columns(reader(BOM + _crlf(text))) == _columns(reader(text))


def test_bom_on_qrels_keeps_map(tmp_path):
    # the case: the BOM joined the first query id, map fell silently
    (tmp_path / "run").write_bytes(RUN)
    (tmp_path / "qrels").write_bytes(QRELS)
    (tmp_path / "qrels.bom").write_bytes(BOM + QRELS)
    plain = _cli(["-q", "-m", "map", tmp_path / "qrels", tmp_path / "run"])
    assert plain[0] == 0 and plain[1].count("\n") == 3
    assert _cli(["-q", "-m", "map", tmp_path / "qrels.bom", tmp_path / "run"]) == plain


@pytest.mark.parametrize("reader, text", [(read_trec_run, RUN), (read_trec_qrels, QRELS), (read_diversity_qrels, DIV)],
                         ids=["run", "qrels", "diversity"])
def test_bom_inside_the_file_is_refused_with_its_line(reader, text):
    lines = text.split(b"\n")
    lines[3] = BOM + lines[3]
    with pytest.raises(ValueError, match=r"^f\.txt: line 4: a UTF-8 byte-order mark \(EF BB BF\) inside the file"):
        reader(b"\n".join(lines), name="f.txt")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("reader, text", [(read_trec_run, RUN), (read_trec_qrels, QRELS), (read_diversity_qrels, DIV)],
                         ids=["run", "qrels", "diversity"])
def test_utf16_is_refused(reader, text, encoding):
    data = text.decode().encode(encoding)  # "utf-16" writes a BOM, the others do not
    with pytest.raises(ValueError, match=r"^u\.txt: line 1: UTF-16 text \(.*\); TREC files are read as ASCII or UTF-8"):
        reader(data, name="u.txt")


def test_a_nul_byte_in_a_docno_is_still_read():
    run = read_trec_run(b"q Q0 a\x00b 1 2 t\nq Q0 c 2 1 t\n")
    assert run.docno.tolist() == ["a\x00b", "c"]


# -------------------------------------------------------------------- 3. gzip
def test_gzip_read_like_the_plain_file(tmp_path):
    for name, text, reader in (("r.gz", RUN, read_trec_run), ("q.gz", QRELS, read_trec_qrels),
                               ("d.gz", DIV, read_diversity_qrels)):
        p = tmp_path / name
        p.write_bytes(gzip.compress(_crlf(BOM + text)))
        assert _columns(reader(p)) == _columns(reader(text))
    p = tmp_path / "two_members.gz"  # `cat a.gz b.gz`
    p.write_bytes(gzip.compress(RUN[:40]) + gzip.compress(RUN[40:]))
    assert _columns(read_trec_run(p)) == _columns(read_trec_run(RUN))


def _line_where_gzip_breaks_off(data):
    """Line (1-based) of the last text zlib yields from the damaged stream ``data``."""
    text = []
    d = zlib.decompressobj(wbits=31)
    for i in range(0, len(data), 4096):
        try:
            text.append(d.copy().decompress(data[i : i + 4096]))
        except zlib.error:  # the damage is in this block: byte by byte up to it
            for j in range(i, min(i + 4096, len(data))):
                try:
                    text.append(d.decompress(data[j : j + 1]))
                except zlib.error:
                    break
            break
        d.decompress(data[i : i + 4096])
    return b"".join(text).count(b"\n") + 1


@pytest.mark.parametrize("cut", [12, 0.3, 0.7, -9, -1])
def test_truncated_gzip_names_file_and_line(tmp_path, cut):
    big = b"".join(b"q%d Q0 doc-%d %d %.6f tag\n" % (i % 7, i, i, 1.0 / (i + 1)) for i in range(3000))
    data = gzip.compress(big)
    k = cut if isinstance(cut, int) else int(cut * len(data))
    p = tmp_path / "run.gz"
    p.write_bytes(data[:k])
    line = _line_where_gzip_breaks_off(data[:k])
    with pytest.raises(ValueError, match=rf"^{p}: line {line}: truncated or corrupt gzip data \("):
        read_trec_run(p)


def test_corrupt_gzip_names_the_file(tmp_path):
    data = bytearray(gzip.compress(RUN * 50))
    data[len(data) // 2] ^= 0xFF  # a damaged deflate block or a wrong CRC
    data[-6] ^= 0xFF  # the CRC for sure
    p = tmp_path / "bad.gz"
    p.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"^{p}: line \d+: truncated or corrupt gzip data \("):
        read_trec_qrels(p)
    rc, out, lines = _cli([tmp_path / "bad.gz", tmp_path / "bad.gz"])
    assert "truncated or corrupt gzip data" in _one_error_line(rc, lines, p) and out == ""


# -------------------------------------------------- 4. every reader error says where
@pytest.mark.parametrize("reader, text, message", [
    (read_trec_run, b"q Q0 a 1 1 t\nq Q0 b 2 1,5 t\n", r"f: line 2: score field '1,5' is not a number$"),
    (read_trec_run, b"q Q0 a 1 1 t\n\nq Q0 b 2 0x1 t\n", r"f: line 3: score field '0x1' is not a number$"),
    (read_trec_run, b"q Q0 a 1 nan t\n", r"f: line 1: score field 'nan' is not a number: NaN cannot be ranked$"),
    (read_trec_run, b"q Q0 a 1 1 t\nq Q0 b 2 -NaN t\n", r"f: line 2: score field '-NaN' is not a number: NaN"),
    (read_trec_run, b"q Q0 a 1 1 t\nq Q0 b 2\n", (r"f: line 2: expected 6 fields 'qid Q0 docno rank score runid', "
                                                  r"found 4 field\(s\): 'q Q0 b 2'$")),
    (read_trec_qrels, b"q 0 a 1\nq 0 b\n", r"f: line 2: expected 4 fields 'qid iter docno rel', found 3"),
    (read_trec_qrels, b"q 0 a 1.5\n", r"f: line 1: relevance field '1\.5' is not an integer"),
    (read_trec_qrels, b"q 0 a 1\nq 0 b 2e-1\n", r"f: line 2: relevance field '2e-1' is not an integer"),
    (read_trec_qrels, b"q 0 a nan\n", r"f: line 1: relevance field 'nan' is not an integer"),
    (read_trec_qrels, b"q 0 a inf\n", r"f: line 1: relevance field 'inf' is not an integer"),
    (read_trec_qrels, b"q 0 a 0x1\n", r"f: line 1: relevance field '0x1' is not an integer"),
    (read_trec_qrels, b"q 0 a 1\nq 0 b 99999999999999999999\n",
     r"f: line 2: relevance field '99999999999999999999' is not an integer \(int64\)"),
    (read_diversity_qrels, b"q 1 a 1\nq 1.5 b 1\n", r"f: line 2: subtopic field '1\.5' is not an integer"),
    (read_diversity_qrels, b"q 1 a 1\nq 1 b one\n", r"f: line 2: judgment field 'one' is not an integer"),
    (read_diversity_qrels, b"q 1 a\n", r"f: line 1: expected 4 fields 'topic subtopic docno judgment', found 3"),
], ids=lambda v: v.decode()[:30].replace("\n", "|") if isinstance(v, bytes) else None)
def test_reader_errors_name_file_and_line(reader, text, message):
    with pytest.raises(ValueError, match="^" + message):
        reader(text, name="f")


def test_numeric_spellings_read_as_written():
    scores = ["1e0", "+1", ".5", "1.", "1E-2", "-0", "inf", "-inf", "1e5000", "0.12345678901234567891"]
    run = read_trec_run(b"".join(b"q Q0 d%d 1 %s t\n" % (i, s.encode()) for i, s in enumerate(scores)))
    assert run.score.tolist() == [float(s) for s in scores]
    grades = ["1", "+1", "-1", "1.0", "1e0", "20E-1", "2.", "-0", "0.0e5", "1000000", "-1000000",
              "9223372036854775807", "-9223372036854775808", "12345678901234567890e-1"]
    qrels = read_trec_qrels(b"".join(b"q 0 d%d %s\n" % (i, g.encode()) for i, g in enumerate(grades)))
    assert qrels.rel.tolist() == [int(Decimal(g)) for g in grades]


def test_empty_files_are_named(tmp_path):
    (tmp_path / "qrels").write_bytes(QRELS)
    (tmp_path / "empty").write_bytes(b"# only a comment\n\n")
    rc, out, lines = _cli([tmp_path / "qrels", tmp_path / "empty"])
    assert "the run holds no results" in _one_error_line(rc, lines, tmp_path / "empty") and out == ""
    rc, out, lines = _cli([tmp_path / "empty", tmp_path / "qrels"])
    assert "no relevance judgments" in _one_error_line(rc, lines, tmp_path / "empty") and out == ""


# ---------------------------------------------- 5. the CLI: one line, or --debug
def test_cli_process_exits_1_with_one_line_and_no_traceback(tmp_path):
    (tmp_path / "qrels").write_bytes(QRELS)
    data = gzip.compress(RUN)
    (tmp_path / "run.gz").write_bytes(data[: len(data) // 2])
    cmd = [sys.executable, "-m", "rankjit", "trec_eval", str(tmp_path / "qrels"), str(tmp_path / "run.gz")]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    run = dict(check=False, capture_output=True, text=True, timeout=120, env=env)
    proc = subprocess.run(cmd, **run)
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith(COMPILE_NOTICE)]
    _one_error_line(proc.returncode, lines, tmp_path / "run.gz", _line_where_gzip_breaks_off(data[: len(data) // 2]))
    assert proc.stdout == ""
    proc = subprocess.run(cmd[:4] + ["--debug"] + cmd[4:], **run)
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert "truncated or corrupt gzip data" in proc.stderr.splitlines()[-1]


def test_unexpected_exceptions_end_as_one_line(tmp_path, monkeypatch):
    from rankjit.io import _trec

    (tmp_path / "qrels").write_bytes(QRELS)
    (tmp_path / "run").write_bytes(RUN)

    def out_of_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 TiB for an array\nsecond line")

    monkeypatch.setattr(_trec, "read_trec_run", out_of_memory)
    rc, out, lines = _cli([tmp_path / "qrels", tmp_path / "run"])
    assert rc == 1 and out == "" and lines == [
        "rankjit trec_eval: error: MemoryError: Unable to allocate 8.00 TiB for an array (--debug shows the traceback)"
    ]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["trec_eval", "--debug", str(tmp_path / "qrels"), str(tmp_path / "run")]) == 1
    assert "Traceback (most recent call last)" in err.getvalue() and "MemoryError" in err.getvalue()


# =========================================================== part 2: the fuzzer
# measures rankjit computes; -q adds every query's values, so a lost or merged line shows
MEASURES = ["-q", "-m", "runid", "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret",
            "-m", "map", "-m", "gm_map", "-m", "Rprec", "-m", "recip_rank", "-m", "P.5,10,100",
            "-m", "ndcg", "-m", "ndcg_cut.10", "-m", "success.1,10"]
# trec_eval's ndcg (no cutoff) takes time quadratic in the largest grade (6 minutes for one
# grade of 10**6 in qrels.test; rankjit: 0.7 s): the huge-grade mutants leave it out
MEASURES_NO_NDCG = MEASURES[: MEASURES.index("ndcg") - 1] + MEASURES[MEASURES.index("ndcg") + 1 :]

SELF = "self"  # the mutant is itself the intended file (trec_eval's reading is the reference)


@dataclass
class Case:
    """One mutant of one file of a (qrels, run) pair.

    ``clean``: the cleanly written file the mutant means (bytes), ``SELF``, or None when
    it has no intended reading (rankjit must refuse it); ``line``: the line rankjit's
    error must name (None: the file only).
    """

    label: str
    data: bytes
    clean: object
    line: int | None = None


def _lines(text):
    return text.rstrip(b"\n").split(b"\n")


def _join(lines):
    return b"\n".join(lines) + b"\n"


def _field_index(role):
    return 4 if role == "run" else 3  # score / grade


def _with_field(line, j, value):
    fields = line.split()
    fields[j] = value
    return b" ".join(fields)


def _kind_line_ends(rng, text, role, n):
    out = [Case("crlf", _crlf(text), text), Case("cr", _cr(text), text)]
    out += [Case(f"mixed{i}", _mixed(text, int(rng.integers(1 << 30))), text) for i in range(n - 2)]
    return out


def _kind_line_ends_indented(rng, text, role, n):
    """Indented lines and \\r blanks between fields: with \\n / \\r\\n line ends (trec_eval reads
    the \\r as a blank, as rankjit does), and with \\r line ends mixed in (trec_eval joins lines)."""
    out = []
    for i in range(n):
        ends = (b"\n", b"\r\n") if i % 2 == 0 else (b"\n", b"\r\n", b"\r")
        out.append(Case(f"indented{i}{'_cr' if i % 2 else ''}", _indented_mix(rng, text, ends), text))
    return out


def _kind_bom(rng, text, role, n):
    lines = _lines(text)
    out = [Case("bom_start", BOM + text, text),
           Case("utf16", text.decode("latin-1").encode("utf-16"), None, 1),
           Case("utf16be_nobom", text.decode("latin-1").encode("utf-16-be"), None, 1)]
    for i in range(n - 3):
        k = int(rng.integers(1, len(lines)))
        out.append(Case(f"bom_line{k + 1}", _join(lines[:k] + [BOM + lines[k]] + lines[k + 1 :]), None, k + 1))
    return out


def _kind_truncate(rng, text, role, n):
    out = []
    for _ in range(n):
        k = int(rng.integers(1, len(text)))
        cut = text[:k]
        out.append(Case(f"cut{k}", cut, SELF, cut.count(b"\n") + 1))
    return out


def _kind_gzip(rng, text, role, n):
    data = gzip.compress(text)
    out = [Case("gz", data, text)]
    for _ in range(n - 1):
        k = int(rng.integers(2, len(data) - 1))
        out.append(Case(f"gz_cut{k}", data[:k], None, _line_where_gzip_breaks_off(data[:k])))
    return out


def _kind_fields(rng, text, role, n):
    lines = _lines(text)
    out = []
    for t in range(n):
        i = int(rng.integers(0, len(lines)))
        fields = lines[i].split()
        if t % 2 == 0:  # a missing field
            del fields[int(rng.integers(0, len(fields)))]
            out.append(Case(f"missing@{i + 1}", _join(lines[:i] + [b" ".join(fields)] + lines[i + 1 :]), None, i + 1))
        else:  # an extra field: trec_eval ignores it in runs, refuses it in qrels; both mean the 4/6 fields
            extra = lines[i] + b" extra" + str(t).encode()
            out.append(Case(f"extra@{i + 1}", _join(lines[:i] + [extra] + lines[i + 1 :]), text))
    return out


#: spelling -> the value it means (written plainly in the clean file), or None: no intended value
SCORE_SPELLINGS = {b"1e0": b"1.0", b"+1": b"1.0", b".5": b"0.5", b"1.": b"1.0", b"1E-2": b"0.01",
                   b"-0": b"-0.0", b"inf": b"inf", b"-inf": b"-inf", b"1e5000": b"inf",
                   b"0x1": None, b"nan": None, b"NaN": None, b"1,5": None, b"1.5.2": None, b"--1": None}
GRADE_SPELLINGS = {b"1e0": b"1", b"+1": b"1", b"1.0": b"1", b"20E-1": b"2", b"2e1": b"20", b"2.": b"2",
                   b"0x1": None, b"nan": None, b"inf": None, b"1,5": None, b"1.5": None,
                   b"99999999999999999999": None}


def _kind_numbers(rng, text, role, n):
    lines = _lines(text)
    table = SCORE_SPELLINGS if role == "run" else GRADE_SPELLINGS
    spellings = list(table)
    j = _field_index(role)
    out = []
    for t in range(n):
        i = int(rng.integers(0, len(lines)))
        s = spellings[t % len(spellings)]
        mutant = _join(lines[:i] + [_with_field(lines[i], j, s)] + lines[i + 1 :])
        meant = table[s]
        clean = None if meant is None else _join(lines[:i] + [_with_field(lines[i], j, meant)] + lines[i + 1 :])
        out.append(Case(f"{s.decode()}@{i + 1}", mutant, clean, i + 1))
    return out


def _kind_grades(rng, text, role, n, huge=10**6):
    """Huge and negative grades (qrels); in a run, huge, tiny and negative scores."""
    lines = _lines(text)
    values = [str(huge).encode(), b"-1", b"-5", str(-huge).encode(), b"1000"]
    if role == "run":
        values = [b"1e300", b"-1e300", b"-5", b"5e-324", b"123456789012345678"]
    out = []
    for t in range(n):
        i = int(rng.integers(0, len(lines)))
        out.append(Case(f"{values[t % len(values)].decode()}@{i + 1}",
                        _join(lines[:i] + [_with_field(lines[i], _field_index(role), values[t % len(values)])]
                              + lines[i + 1 :]), SELF))
    return out


def _kind_duplicates(rng, text, role, n):
    lines = _lines(text)
    out = []
    for t in range(n):
        i = int(rng.integers(0, len(lines)))
        at = i + 1 if t % 2 == 0 else len(lines)  # right after it, or at the end
        # the error names the file, the document and the query (not the line: _align.py)
        out.append(Case(f"dup{i + 1}@{at + 1}", _join(lines[:at] + [lines[i]] + lines[at:]), None))
    return out


def _kind_empty_queries(rng, text, role, n):
    lines = _lines(text)
    qids = sorted({ln.split()[0] for ln in lines})
    out = [Case("no_lines", b"# nothing\n\n", None)]
    for t in range(n - 1):
        q = qids[int(rng.integers(0, len(qids)))]
        rest = [ln for ln in lines if ln.split()[0] != q]
        if t % 2 == 0:
            out.append(Case(f"drop_q{q.decode()}", _join(rest), SELF))
        else:  # the query's lines blanked out: the same as dropping them
            blanked = [b"   " if ln.split()[0] == q else ln for ln in lines]
            out.append(Case(f"blank_q{q.decode()}", _join(blanked), _join(rest)))
    return out


def _kind_blank_lines(rng, text, role, n):
    lines = _lines(text)
    out = []
    for t in range(n):
        mutant = list(lines)
        for _ in range(int(rng.integers(1, 6))):
            k = int(rng.integers(0, len(mutant) + 1))
            mutant.insert(k, [b"", b"  ", b"\t", b" \t "][int(rng.integers(0, 4))])
        out.append(Case(f"blank{t}", _join(mutant), text))
    return out


def _kind_separators(rng, text, role, n):
    seps = [b" ", b"\t", b"  ", b" \t", b"\t\t ", b"\x0b", b"\x0c"]
    out = []
    for t in range(n):
        mutant = []
        for ln in _lines(text):
            fields = ln.split()
            mutant.append(fields[0] + b"".join(seps[int(rng.integers(0, len(seps)))] + f for f in fields[1:]))
        out.append(Case(f"seps{t}", _join(mutant), text))
    return out


def _kind_trailing_ws(rng, text, role, n):
    out = []
    tails = [b" ", b"\t", b" \t ", b"   "]
    for t in range(n):
        mutant = [ln + (tails[int(rng.integers(0, 4))] if rng.random() < 0.5 else b"") for ln in _lines(text)]
        lead = rng.random() < 0.5  # and leading blanks on a few lines
        if lead:
            mutant = [(b" \t" + ln) if rng.random() < 0.1 else ln for ln in mutant]
        out.append(Case(f"trailing{t}{'+lead' if lead else ''}", _join(mutant), text))
    return out


#: kind -> (mutant maker, mutants per file): each kind mutates the qrels and the run in turn
KINDS = {
    "line_ends": (_kind_line_ends, 8),
    "line_ends_indented": (_kind_line_ends_indented, 6),
    "bom_utf16": (_kind_bom, 8),
    "truncate": (_kind_truncate, 20),
    "gzip": (_kind_gzip, 8),
    "fields": (_kind_fields, 16),
    "numbers": (_kind_numbers, 32),
    "grades": (_kind_grades, 10),
    "duplicates": (_kind_duplicates, 8),
    "empty_queries": (_kind_empty_queries, 9),
    "blank_lines": (_kind_blank_lines, 6),
    "separators": (_kind_separators, 6),
    "trailing_ws": (_kind_trailing_ws, 6),
}
#: the suite's pair, and the TREC 2012 Web pair (mutants per kind halved: the files are 30x larger)
BASES = {
    "trec_eval": (TE_DATA / "qrels.test", TE_DATA / "results.test", 1.0),
    "web2012": (WEB / "qrels.adhoc.txt", WEB / "run.ql.cata.txt", 0.5),
}


@pytest.fixture(scope="module")
def trec_eval_bin():
    if not BUILD_TREC_EVAL.is_file():
        pytest.skip(f"{BUILD_TREC_EVAL} not found (../shared absent): no trec_eval to compare with")
    try:
        proc = subprocess.run(["bash", str(BUILD_TREC_EVAL)], check=False, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"could not build trec_eval with {BUILD_TREC_EVAL}: {exc}")
    path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if proc.returncode != 0 or not os.access(path, os.X_OK):
        pytest.skip(f"could not build trec_eval with {BUILD_TREC_EVAL} (needs cc and make): {proc.stderr.strip()}")
    return path


@pytest.fixture(scope="module")
def tally(request):
    """Outcome counts per (base, kind, outcome); shown with -v."""
    counts = collections.Counter()
    yield counts
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None and counts and request.config.getoption("verbose") > 0:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for key in sorted(counts):
                reporter.write_line(f"hostile-trec fuzz {'/'.join(key)}: {counts[key]}")


def _trec_eval(binary, qrels, run, measures=MEASURES):
    try:
        proc = subprocess.run([binary, *measures, str(qrels), str(run)], check=False, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return -1, ""
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def _answered(qrels_text, run_text):
    """The qrels lines of queries the run answers (split in Python, apart from the readers).

    rankjit evaluates the queries of the qrels that the run answers (trec_eval 9 and
    pytrec_eval do the same); this trec_eval (10.0-rc3) stops instead when a qrels
    query has no results.  Its reference output is taken on these lines.
    """
    qids = {ln.split()[0] for ln in run_text.split(b"\n") if ln.split()}
    return _join([ln for ln in _lines(qrels_text) if ln.split() and ln.split()[0] in qids])


def _reference(binary, tmp, qrels_text, run_text, role, cache, measures):
    """trec_eval's output on the intended pair (qrels cut to the run's queries when the run is the mutant)."""
    if role == "run":
        qrels_text = _answered(qrels_text, run_text)
    key = (qrels_text, run_text)
    if key not in cache:
        (tmp / "ref.qrels").write_bytes(qrels_text)
        (tmp / "ref.run").write_bytes(run_text)
        cache[key] = _trec_eval(binary, tmp / "ref.qrels", tmp / "ref.run", measures)
    return cache[key]


def _check(case, role, base, binary, tmp, cache, kind, measures=MEASURES):
    """Hold rankjit to the rules of the module docstring on one mutant: the outcome's name."""
    texts = {"qrels": base[0].read_bytes(), "run": base[1].read_bytes()}
    target = tmp / f"{role}.{kind}.{case.label}"
    target.write_bytes(case.data)
    pair = (target, base[1]) if role == "qrels" else (base[0], target)
    rc_te, out_te = _trec_eval(binary, *pair, measures)
    rc, out, lines = _cli([*measures, *pair])
    if case.clean is None:
        _one_error_line(rc, lines, target, case.line)
        return "rankjit error, trec_eval " + ("refuses" if rc_te else "accepts it")
    texts[role] = case.data if case.clean is SELF else case.clean
    rc_want, want = _reference(binary, tmp, texts["qrels"], texts["run"], role, cache, measures)
    if case.clean is SELF and rc_want != 0:  # no reading trec_eval accepts: rankjit must refuse
        _one_error_line(rc, lines, target, case.line)
        return "both refuse"
    assert rc_want == 0, f"{case.label}: the fuzzer's clean file is not valid for trec_eval"
    if rc == 0:
        assert out == want, (case.label, lines)  # read as intended
        if rc_te == 0 and out_te == out:
            return "same output"
        return "read as intended, trec_eval " + ("refuses" if rc_te else "misreads")
    _one_error_line(rc, lines, target, case.line)
    assert rc_te != 0 or out_te != want, f"{case.label}: trec_eval reads it as meant, rankjit refuses: {lines}"
    return "rankjit error, trec_eval " + ("refuses" if rc_te else "misreads")


def _fuzz(kind, base_name, binary, tmp_path, tally):
    qrels_path, run_path, scale = BASES[base_name]
    if not qrels_path.is_file():
        pytest.skip(f"{qrels_path} not found (../shared/data absent)")
    make, n = KINDS[kind]
    n = max(int(n * scale), 3 if kind in ("bom_utf16", "line_ends") else 2)
    seed = zlib.crc32(f"{kind}/{base_name}".encode())
    rng = np.random.default_rng(seed)
    cache = {}
    for role, path in (("qrels", qrels_path), ("run", run_path)):
        text = path.read_bytes()
        extra = {"huge": 10**5} if (kind == "grades" and base_name == "web2012") else {}
        cases = make(rng, text, role, n, **extra)
        assert len(cases) == n  # the fixed number of mutants per kind
        for case in cases:
            measures = MEASURES_NO_NDCG if kind == "grades" else MEASURES
            outcome = _check(case, role, (qrels_path, run_path), binary, tmp_path, cache, kind, measures)
            tally[(base_name, kind, role, outcome)] += 1


def _values(out):
    """``(query, value)`` of each line of trec_eval's output (the measure's name left out)."""
    return [(ln.split("\t")[1], float(ln.split("\t")[2])) for ln in out.splitlines()]


def test_gains_less_than_1_apart_where_trec_eval_differs(trec_eval_bin):
    # docs/cli.md: trec_eval sorts the ideal DCG's gains with (int)(g1 - g2), so 0, 0.5 and 0.9 all
    # compare equal and its ideal DCG stops at the gain 0; rankjit sorts them exactly
    qrels, run = TE_DATA / "qrels.test", TE_DATA / "results.test"
    if not qrels.is_file():
        pytest.skip(f"{qrels} not found (../shared/data absent)")
    assert {ln.split()[3] for ln in _lines(qrels.read_bytes())} == {b"0", b"1"}
    gain_map = ["-q", "-m", "ndcg.1=0.5,2=0.9", qrels, run]
    rc, out = _trec_eval(trec_eval_bin, qrels, run, gain_map[:3])
    assert rc == 0 and {v for _, v in _values(out)} == {0.0}
    # with grades 0 and 1 only, any positive gain of grade 1 gives the nDCG of gain 1: trec_eval's own ndcg
    rc, want = _trec_eval(trec_eval_bin, qrels, run, ["-q", "-m", "ndcg"])
    assert rc == 0 and len(_values(want)) > 1 and min(v for _, v in _values(want)) > 0
    rc, got, lines = _cli(gain_map)
    assert rc == 0 and not lines and _values(got) == _values(want)


@pytest.mark.slow  # up to 64 mutants per kind: seconds compiled, minutes with NUMBA_DISABLE_JIT=1
@pytest.mark.parametrize("kind", list(KINDS))
def test_fuzz_trec_eval_suite_files(kind, trec_eval_bin, tmp_path, tally):
    _fuzz(kind, "trec_eval", trec_eval_bin, tmp_path, tally)


@pytest.mark.slow  # TREC 2012 Web: 50 topics x 1000 documents per run
@pytest.mark.parametrize("kind", list(KINDS))
def test_fuzz_web2012_run(kind, trec_eval_bin, tmp_path, tally):
    _fuzz(kind, "web2012", trec_eval_bin, tmp_path, tally)
