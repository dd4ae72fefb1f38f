"""``rankjit trec_eval -R prefs / qrels_prefs / qrels_jg`` (``rankjit.io._trec_prefs``) against the real trec_eval.

Expected values come from trec_eval's own test outputs (``out.test.prefs``,
``out.test.qrels_prefs``, ``out.test.qrels_jg``, each with both judgment files that
produce it) and from the real trec_eval 10.0 run on the same files: random preference
files (several judgment groups and sub-groups, levels below 0, ties, repeated lines,
documents the run lacks), random qrels read as preferences, random qrels with judgment
groups (``-J``, ``-l``, ``-M``, ``-c``), runs with tied scores and unjudged documents.
Where trec_eval fails (a measure of another format, inconsistent preferences, duplicate
documents) rankjit stops with one error line, tested here message by message; where it
reads memory it never wrote, the value is derived by hand from the documented rule.
"""
from __future__ import annotations

import random
import re
import subprocess

import pytest
from test_hostile_trec import trec_eval_bin  # noqa: F401 (the fixture: the real trec_eval, built once)
from test_rbp_reference import TE_DATA, needs_te_data

from rankjit.cli import main


def _rankjit(args, capsys):
    rc = main(["trec_eval", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


def _trec_eval(binary, args):
    proc = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout.splitlines()


def _same_as_trec_eval(binary, args, capsys, min_lines=3):
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    want_rc, want = _trec_eval(binary, args)
    assert want_rc == 0
    assert len(want) >= min_lines and got == want
    return got


# ---- trec_eval's own test outputs -------------------------------------------------------


@needs_te_data
@pytest.mark.parametrize("out_name, args", [
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"]),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test", "prefs.results.test"]),
    ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123", "results.test"]),
], ids=lambda x: x if isinstance(x, str) else x[-2])
def test_trec_eval_suite_outputs(out_name, args, capsys):
    rc, got, err = _rankjit([TE_DATA / a if (TE_DATA / a).is_file() else a for a in args], capsys)
    assert rc == 0, err
    want = (TE_DATA / out_name).read_text().splitlines()
    assert len(want) > 50 and got == want  # every line: per query, summary, runid, num_q


@needs_te_data
@pytest.mark.parametrize("args", [
    ["-m", "prefs", "-R", "prefs", "prefs.test", "prefs.results.test"],  # the nickname 'prefs'
    ["-q", "-m", "prefs_pair_imp", "-m", "runid", "-m", "prefs_num_prefs_poss", "-M", "20", "-R", "prefs",
     "prefs.test", "prefs.results.test"],
    ["-n", "-q", "-m", "all_prefs", "-M", "50", "-R", "qrels_prefs", "qrels.rel_level", "results.test"],
    ["-q", "-m", "all_prefs", "-R", "qrels_prefs", "qrels.123", "results.test"],  # 3 judgment groups
    ["-q", "-m", "P_avgjg.3,7,2000", "-m", "Rprec_mult_avgjg.0.5,1.5,3", "-m", "map_avgjg", "-J", "-l2", "-M300",
     "-R", "qrels_jg", "qrels.123", "results.test"],
    ["-c", "-q", "-m", "qrels_jg", "-R", "qrels_jg", "qrels.123", "results.trunc"],
    ["-q", "-m", "Rprec_mult_avgjg.0.123456789,123456789", "-R", "qrels_jg", "qrels.123", "results.test"],  # names: 8 chars
    ["-c", "-q", "-m", "all_prefs", "-R", "qrels_prefs", "qrels.test", "results.trunc"],
], ids=lambda a: " ".join(a))
def test_suite_files_with_options(trec_eval_bin, args, capsys):  # noqa: F811 (the fixture)
    _same_as_trec_eval(trec_eval_bin, [TE_DATA / a if (TE_DATA / a).is_file() else a for a in args], capsys)


# ---- random files against the real trec_eval ---------------------------------------------

_DOCS = ["d1", "d2", "d10", "d11", "D3", "d-4", "d20", "d5", "e1", "e10", "e2", "E7", "d9", "d99", "f"]
_SCORES = [3.0, 2.5, 2.5, 2.0, 1.0, 1.0, 0.5, 0.0, -1.0]


def _run_lines(rng, qids, judged, absent=()):
    """A run: per query judged and unjudged documents, scores with ties; queries ``absent`` left out."""
    lines = []
    for qid in qids + ["zz-only-in-run"]:
        if qid in absent:
            continue
        pool = sorted(judged.get(qid, ())) + [f"u{j}" for j in range(rng.randint(0, 6))]
        for doc in rng.sample(pool, rng.randint(1, len(pool)) if pool else 0):
            lines.append(f"{qid} Q0 {doc} 0 {rng.choice(_SCORES)} run{rng.randint(1, 2)}")
    rng.shuffle(lines)
    return lines


def _level_map(rng):
    """A map of hidden grades to levels, increasing (ties allowed), signs kept: preferences stay consistent."""
    kind = rng.randrange(3)
    if kind == 0:
        return lambda h: h
    if kind == 1:
        scale = rng.choice([0.5, 2.0, 10.0])
        return lambda h: h * scale
    return lambda h: -1.0 if h < 0 else (0.0 if h == 0 else float(-(-h // 2)))  # ceil(h / 2): merges levels


def _ec_reads_past_pool(rows):
    """Whether trec_eval's Rnonrel recount of a one-sub-group JG could read past its rank pool.

    (The JG's last EC, the lowest level, shorter than its number of relevant rows: only with
    levels below 0; the random files avoid it, test_rnonrel_reads_on_into_the_next_group covers it.)
    """
    levels = [lv for _, lv in rows]
    low = min(levels)
    return low < 0 and sum(lv > 0 for lv in levels) > sum(lv == low for lv in levels)


def random_prefs(rng, n_queries=6, qrels_format=False):
    """Preference lines (``qid jg jsg docno level``, or ``qid jg docno level``), the judged docs per query."""
    lines, judged = [], {}
    for qi in range(n_queries):
        qid = f"q{rng.choice(['', '0', '1'])}{qi}"
        docs = rng.sample(_DOCS, rng.randint(1, 9))
        judged[qid] = set(docs)
        for jg in rng.sample(["u1", "u2", "u10", "A", "0"], rng.randint(1, 3)):
            hidden = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3, 4]) for d in docs}
            n_jsg = 1 if qrels_format else rng.choice([1, 1, 2, 3])
            while True:
                group = []
                for jsg in rng.sample(["s1", "s2", "s10"], n_jsg):
                    f = _level_map(rng)
                    subset = rng.sample(docs, rng.randint(1, len(docs)))
                    group += [(jsg, d, f(hidden[d])) for d in subset]
                if n_jsg > 1 or not _ec_reads_past_pool([(d, lv) for _, d, lv in group]):
                    break
                hidden = {d: max(h, 0) for d, h in hidden.items()}
            if rng.random() < 0.3:
                group += rng.sample(group, rng.randint(1, len(group)))  # repeated lines
            for jsg, d, lv in group:
                level = f"{lv:g}" if rng.random() < 0.7 else f"{lv:.2f}"
                lines.append(f"{qid} {jg} {d} {level}" if qrels_format else f"{qid}\t{jg} {jsg}  {d} {level}")
    rng.shuffle(lines)
    return lines, judged


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rel_format", ["prefs", "qrels_prefs"])
def test_random_preferences_as_trec_eval(trec_eval_bin, tmp_path, seed, rel_format, capsys):  # noqa: F811
    rng = random.Random(seed * 7 + (rel_format == "prefs"))
    lines, judged = random_prefs(rng, qrels_format=rel_format == "qrels_prefs")
    qids = sorted(judged)
    options = [[], ["-M", str(rng.randint(0, 4))], ["-c"]][seed % 3]
    absent = set(rng.sample(qids, 2)) if "-c" in options else set()  # (without -c trec_eval refuses them)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("\n".join(lines) + "\n")
    run.write_text("\n".join(_run_lines(rng, qids, judged, absent)) + "\n")
    got = _same_as_trec_eval(trec_eval_bin, ["-q", "-m", "all_prefs", *options, "-R", rel_format, prefs, run], capsys)
    assert len(got) == 14 * len(qids) + 16


@pytest.mark.parametrize("seed", range(6))
def test_pair_counts_as_a_sorted_list(trec_eval_bin, tmp_path, seed, capsys):  # noqa: F811
    # queries with several JGs count the pairs in a dense matrix (trec_eval's) or, when it would be
    # large, in a sorted list of the preferences: that one (dense_max=-1) on the random files
    from rankjit.io import _trec_prefs as P
    from rankjit.io import read_trec_run

    rng = random.Random(100 + seed)
    lines, judged = random_prefs(rng, n_queries=8)
    qids = sorted(judged)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("\n".join(lines) + "\n")
    run.write_text("\n".join(_run_lines(rng, qids, judged)) + "\n")
    rc, want = _trec_eval(trec_eval_bin, ["-q", "-m", "all_prefs", "-R", "prefs", prefs, run])
    assert rc == 0
    got_qids, values = P.prefs_values(P.read_trec_prefs(prefs), read_trec_run(run), dense_max=-1)
    got = [f"{name:<22}\t{q}\t" + (str(int(values[name][i])) if name.startswith("prefs_num") else
                                    f"{values[name][i]:6.4f}") for i, q in enumerate(got_qids) for name in values]
    assert got == [ln for ln in want if "\tall\t" not in ln]


def random_jg_qrels(rng, n_queries=6):
    lines, judged = [], {}
    for qi in range(n_queries):
        qid = f"{rng.choice(['', '3', '30'])}{qi}"
        docs = rng.sample(_DOCS, rng.randint(1, 12))
        judged[qid] = set(docs)
        for jg in rng.sample(["0", "1", "2", "10", "x"], rng.randint(1, 4)):
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                lines.append(f"{qid} {jg} {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
    rng.shuffle(lines)
    return lines, judged


@pytest.mark.parametrize("seed", range(12))
def test_random_judgment_groups_as_trec_eval(trec_eval_bin, tmp_path, seed, capsys):  # noqa: F811
    rng = random.Random(seed)
    lines, judged = random_jg_qrels(rng)
    qids = sorted(judged)
    options = [[], ["-J"], ["-l2"], ["-M", "3"], ["-c"], ["-J", "-l0", "-M5"]][seed % 6]
    absent = set(rng.sample(qids, 2)) if "-c" in options else set()
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("\n".join(lines) + "\n")
    run.write_text("\n".join(_run_lines(rng, qids, judged, absent)) + "\n")
    measures = ["-m", "qrels_jg"] if seed % 2 else ["-m", "P_avgjg.1,2,4,30", "-m", "Rprec_mult_avgjg.0.3,1,2.5",
                                                    "-m", "map_avgjg"]
    _same_as_trec_eval(trec_eval_bin, ["-q", *measures, *options, "-R", "qrels_jg", qrels, run], capsys)


def test_queries_the_run_lacks_are_left_out(trec_eval_bin, tmp_path, capsys):  # noqa: F811
    # trec_eval refuses judged queries the run lacks (without -c); rankjit leaves them out, as with qrels:
    # the output of trec_eval on the judgments of the other queries
    rng = random.Random(5)
    lines, judged = random_prefs(rng)
    qids = sorted(judged)
    gone = qids[1]
    prefs, kept, run = tmp_path / "prefs", tmp_path / "kept", tmp_path / "run"
    prefs.write_text("\n".join(lines) + "\n")
    kept.write_text("\n".join(ln for ln in lines if ln.split()[0] != gone) + "\n")
    run.write_text("\n".join(_run_lines(rng, qids, judged, {gone})) + "\n")
    assert _trec_eval(trec_eval_bin, ["-m", "all_prefs", "-R", "prefs", prefs, run])[0] != 0
    rc, got, err = _rankjit(["-q", "-m", "all_prefs", "-R", "prefs", prefs, run], capsys)
    assert rc == 0, err
    assert got == _trec_eval(trec_eval_bin, ["-q", "-m", "all_prefs", "-R", "prefs", kept, run])[1]


# ---- trec_eval's corners -------------------------------------------------------------------


def test_pair_counts_wrap_at_65536(trec_eval_bin, tmp_path, capsys):  # noqa: F811
    # 256 x 256 repeated lines: trec_eval's unsigned short count of the pair (a, b) is 65536 = 0, so
    # prefs_pair finds no pair (0), while prefs_simp counts the 65536 preferences, all fulfilled (1)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("q u s a 2\n" * 256 + "q u s b 1\n" * 256)
    run.write_text("q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    got = _same_as_trec_eval(trec_eval_bin, ["-q", "-m", "all_prefs", "-R", "prefs", prefs, run], capsys)
    assert "prefs_pair            \tq\t0.0000" in got and "prefs_simp            \tq\t1.0000" in got
    assert "prefs_num_prefs_poss  \tq\t65536" in got
    from rankjit.io import _trec_prefs as P
    from rankjit.io import read_trec_run

    _, values = P.prefs_values(P.read_trec_prefs(prefs), read_trec_run(run), dense_max=-1)  # the sorted list
    te = {ln.split("\t")[0].strip(): ln.split("\t")[2] for ln in got if "\tq\t" in ln}  # (= trec_eval's lines)
    assert {m: f"{values[m][0]:6.4f}" for m in P.PREFS_MEASURES[3:]} == {m: te[m] for m in P.PREFS_MEASURES[3:]}


def test_rnonrel_reads_on_into_the_next_group(trec_eval_bin, tmp_path, capsys):  # noqa: F811
    # group u1: R = 2 relevant rows, N = 3 non-relevant ones; its last EC (level -1) holds one row,
    # and trec_eval takes "the first R non-relevant" from there on: the row of c, then the first
    # row of group u2 (its pool of EC ranks runs on); with _ret too (every row of u1 retrieved)
    # Query r: the last EC (level -1) is long enough but holds unretrieved rows among its first R:
    # the _ret recount stops at the first of them.
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("q u1 s a 1\nq u1 s b 1\nq u1 s c -1\nq u1 s d 0\nq u1 s e 0\n"
                     "q u2 s e 3\nq u2 s a 2\nq u2 s d 0\n"
                     "r u s a 1\nr u s b 1\nr u s d 0\nr u s e 0\nr u s c -1\nr u s f -1\nr u s g -1\n")
    run.write_text("q Q0 a 1 5 t\nq Q0 b 2 4 t\nq Q0 c 3 3 t\nq Q0 d 4 2 t\nq Q0 e 5 1 t\n"
                   "r Q0 a 1 5 t\nr Q0 b 2 4 t\nr Q0 c 3 3 t\nr Q0 d 4 2 t\nr Q0 e 5 1 t\n")
    _same_as_trec_eval(trec_eval_bin, ["-q", "-m", "all_prefs", "-R", "prefs", prefs, run], capsys)


def test_unretrieved_documents_by_docno(trec_eval_bin, tmp_path, capsys):  # noqa: F811
    # Unretrieved judged documents take the docid ranks after the retrieved ones in docno order
    # (ascending): in a preference array's Rnonrel recount, which non-relevant documents are left
    # out follows from it (here z3 and z4: prefs_avgjg_Rnonrel 1, where the other order gives 0)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("q u s a 2\nq u s z1 0\nq u s z2 0\nq u t b 1\nq u t z3 0\nq u t z4 0\n")
    run.write_text("q Q0 a 1 1 t\nq Q0 x 2 0 t\n")
    got = _same_as_trec_eval(trec_eval_bin, ["-q", "-m", "all_prefs", "-R", "prefs", prefs, run], capsys)
    assert "prefs_avgjg_Rnonrel   \tq\t1.0000" in got


@pytest.mark.parametrize("rel_format, line", [("qrels_jg", "q2 0 ceci_nest_pas_un_docno 1"),
                                              ("prefs", "q2 u s ceci_nest_pas_un_docno 1\nq2 u s b 0")])
def test_complete_ranks_trec_evals_stand_in_document(trec_eval_bin, tmp_path, rel_format, line, capsys):  # noqa: F811
    # -c: a query the run lacks is ranked as one document, 'ceci_nest_pas_un_docno' (trec_eval.c),
    # which a judgment file may name
    rel, run = tmp_path / "rel", tmp_path / "run"
    rel.write_text(("q1 0 a 1\n" if rel_format == "qrels_jg" else "q1 u s a 1\nq1 u s b 0\n") + line + "\n")
    run.write_text("q1 Q0 a 1 1 t\n")
    measures = ["-m", "qrels_jg"] if rel_format == "qrels_jg" else ["-m", "all_prefs"]
    got = _same_as_trec_eval(trec_eval_bin, ["-c", "-q", *measures, "-R", rel_format, rel, run], capsys)
    assert any(ln.split("\t")[1:] in (["q2", "1.0000"], ["q2", "1"]) for ln in got)


def test_rnonrel_past_the_pool_is_cut(trec_eval_bin, tmp_path, capsys):  # noqa: F811
    # The last EC (c, level -1) is shorter than R = 2 and nothing follows it: trec_eval reads a
    # rank it never wrote; rankjit takes the EC as it is.  Docid ranks: a 0, c 1 (retrieved),
    # b 2, d 3, e 4; ECs [a, b] (1), [d, e] (0), [c] (-1).  Recount: pairs of [a, b] x [d, e]:
    # fulfilled (a<b', a retrieved) 0-3, 0-4, not 2-3, 2-4; every row x [c]: only a (0 < 1).
    # 3 fulfilled of 4 + 5 pairs: 3/9.  The other lines are trec_eval's.
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("q u s a 1\nq u s b 1\nq u s c -1\nq u s d 0\nq u s e 0\n")
    run.write_text("q Q0 a 1 3 t\nq Q0 c 2 2 t\n")
    args = ["-q", "-m", "all_prefs", "-R", "prefs", prefs, run]
    rc, got, err = _rankjit(args, capsys)
    assert rc == 0, err
    assert "prefs_avgjg_Rnonrel   \tq\t0.3333" in got
    want = _trec_eval(trec_eval_bin, args)[1]
    assert [ln for ln in got if "Rnonrel " not in ln] == [ln for ln in want if "Rnonrel " not in ln]


# ---- errors: one line each ------------------------------------------------------------------


def _error(args, capsys):
    rc, out, err = _rankjit(args, capsys)
    assert rc == 1 and out == [] and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("rel_format, text, options, message", [
    ("prefs", "q u s a 2\nq u s b 1\nq u s a 1\n", [],
     r"prefs: query 'q', judgment group 'u': document 'a' has two different rel_levels in one judgment sub-group "
     r"\(trec_eval refuses it\)$"),
    ("qrels_prefs", "q 0 a 2\nq 0 b 1\nq 0 a 1\n", [],
     r"prefs: query 'q', judgment group '0': document 'a' has two different rel_levels"),
    ("prefs", "q u s a 2\nq u s b 0\nq u t a 0\nq u t c 1\n", [],
     r"prefs: query 'q', judgment group 'u': document 'a' has rel_level 0 in one judgment sub-group and above 0 "
     r"in another \(trec_eval refuses it\)$"),
    ("prefs", "q u s a 2\nq u s b 1\nq u t b 2\nq u t c 1\nq u r c 2\nq u r a 1\n", [],
     r"prefs: query 'q', judgment group 'u': inconsistent preferences: '[abc]' and '[abc]' are each preferred "
     r"to the other through the sub-groups \(trec_eval aborts\)$"),
    ("prefs", "q u s a 2\nq u s b 1\n", ["-R", "prefs"], None),  # (the run's duplicate below)
])
def test_inconsistent_preferences(trec_eval_bin, tmp_path, rel_format, text, options, message, capsys):  # noqa: F811
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(text)
    run.write_text("q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 c 3 1 t\n" + ("q Q0 b 4 0 t\n" if message is None else ""))
    args = ["-m", "all_prefs", "-R", rel_format, prefs, run]
    assert _trec_eval(trec_eval_bin, args)[0] != 0  # trec_eval: Can't calculate measure, or abort()
    if message is None:
        message = r"run: document 'b' is retrieved twice for query 'q' \(lines 2 and 4\) \(trec_eval refuses"
    assert re.search(message, _error(args, capsys))


def test_duplicates_beyond_M_are_not_seen(trec_eval_bin, tmp_path, capsys):  # noqa: F811
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("q u s a 2\nq u s b 1\n")
    run.write_text("q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 b 4 0 t\n")
    _same_as_trec_eval(trec_eval_bin, ["-q", "-M2", "-m", "all_prefs", "-R", "prefs", prefs, run], capsys)


@pytest.mark.parametrize("rel_format, text, measures, message", [
    ("prefs", "q u s a 2\nq u s b\n", ["-m", "prefs"],
     r"^rankjit trec_eval: error: .*prefs: line 2: expected 5 fields 'qid jg jsg docno rel_level', found 4 "
     r"field\(s\): 'q u s b'$"),
    ("prefs", "q u s a 2\nq u s b 1 x\n", ["-m", "prefs"], r"prefs: line 2: expected 5 fields .* found 6 field"),
    ("prefs", "# c\nq u s a high\n", ["-m", "prefs"], r"prefs: line 2: rel_level field 'high' is not a number$"),
    ("qrels_prefs", "q 0 a 1\nq 0 b\n", ["-m", "prefs"],
     r"prefs: line 2: expected 4 fields 'qid jg docno rel_level', found 3 field\(s\): 'q 0 b'$"),
    ("qrels_jg", "q 0 a 1\nq 0 b 1.5\n", ["-m", "qrels_jg"],
     r"prefs: line 2: relevance field '1.5' is not an integer \(int64\)$"),
    ("qrels_jg", "q 0 a 1\nq 1 a 0\nq 0 b 1\nq 0 a 2\n", ["-m", "qrels_jg"],
     r"prefs: document 'a' is judged twice for query 'q' in judgment group '0' \(lines 1 and 4\) \(trec_eval "
     r"refuses duplicate judgments\)$"),
    ("prefs", "# only a comment\n\n", ["-m", "prefs"],
     r"prefs: no preferences \(the file is empty or all blank or comment lines\)$"),
    ("qrels_jg", "", ["-m", "qrels_jg"], r"prefs: no relevance judgments \(the file is empty"),
    ("prefs", "x u s a 2\n", ["-m", "prefs"], r"error: no query has both results and relevance judgments$"),
])
def test_malformed_files(tmp_path, rel_format, text, measures, message, capsys):
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(text)
    run.write_text("q Q0 a 1 3 t\n")
    assert re.search(message, _error([*measures, "-R", rel_format, prefs, run], capsys))


@needs_te_data
@pytest.mark.parametrize("args, message", [
    (["-m", "map", "-R", "prefs", "prefs.test"],
     r"^rankjit trec_eval: error: -R prefs: measure map needs -R qrels; trec_eval stops there \(Can't calculate "
     r"measure\); -R prefs gives runid, num_q and its own measures \(-m all_prefs: every prefs measure\)$"),
    (["-R", "qrels_jg", "qrels.123"],
     r"-R qrels_jg: measure num_ret \(no -m given: trec_eval's default set 'official'\) needs -R qrels; .*"
     r"\(-m qrels_jg: its three measures\)$"),
    (["-m", "prefs_simp", "qrels.test"], r"-R qrels: measure prefs_simp needs -R prefs or -R qrels_prefs; "),
    (["-m", "P_avgjg", "-R", "qrels_prefs", "qrels.test"], r"-R qrels_prefs: measure P_avgjg needs -R qrels_jg; "),
    (["-m", "prefs", "-R", "qrels_jg", "qrels.123"], r"-R qrels_jg: measure prefs_num_prefs_poss needs -R prefs or "),
    (["-R", "pref", "prefs.test"],
     r"-R pref: unknown relevance format \(trec_eval's: qrels, prefs, qrels_prefs, qrels_jg\)$"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else None)
def test_measures_of_another_format(trec_eval_bin, args, message, capsys):  # noqa: F811
    files = [TE_DATA / a if (TE_DATA / a).is_file() else a for a in args] + [TE_DATA / "results.test"]
    assert _trec_eval(trec_eval_bin, files)[0] != 0  # trec_eval: Can't calculate measure, or Illegal rel_format
    assert re.search(message, _error(files, capsys))


@needs_te_data
def test_runid_and_num_q_go_with_any_format(trec_eval_bin, capsys):  # noqa: F811
    for rel_format, rel in [("prefs", "prefs.test"), ("qrels_jg", "qrels.123"), ("qrels_prefs", "qrels.test")]:
        files = [TE_DATA / rel, TE_DATA / ("prefs.results.test" if rel_format == "prefs" else "results.test")]
        got = _same_as_trec_eval(trec_eval_bin, ["-m", "num_q", "-m", "runid", "-R", rel_format, *files], capsys, 2)
        assert got[0].startswith("runid")
