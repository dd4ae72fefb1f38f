"""Per-topic score matrices from TREC qrels and runs (used by the CLI).

The files are read with :mod:`rankjit.io` (imported when needed) and each run is
evaluated with :func:`rankjit.evaluate`, following trec_eval's conventions:
documents ranked by score descending, ties by docno descending; duplicates of a
document keep the first line; negative judgments count as 0; ideal DCG and R count
the judged documents a run did not retrieve.  The topic set is that of the qrels;
a run without a topic scores 0 on it (trec_eval ``-c``).
"""
from __future__ import annotations

import os

import numpy as np


class MissingDependency(ValueError):
    """A part of rankjit the command needs is not installed or not written yet."""


def _io():
    try:
        import rankjit.io as rio
    except ModuleNotFoundError as exc:
        raise MissingDependency("reading TREC files needs rankjit.io, which is not available "
                                f"in this installation ({exc})") from None
    read_qrels = getattr(rio, "read_trec_qrels", None) or getattr(rio, "read_qrels", None)
    read_run = getattr(rio, "read_trec_run", None) or getattr(rio, "read_run", None)
    if read_qrels is None or read_run is None:
        raise MissingDependency("rankjit.io lacks the TREC readers (read_trec_qrels / read_trec_run)")
    return read_qrels, read_run


def _evaluate():
    import rankjit

    fn = getattr(rankjit, "evaluate", None)
    if fn is None:
        raise MissingDependency("computing measures needs rankjit.evaluate, which is not available")
    return fn


def _topic_key(q):
    return (0, int(q), "") if q.isdigit() else (1, 0, q)


def load_qrels(path):
    """{qid: {docno: grade}} with negative grades set to 0."""
    read_qrels, _ = _io()
    qrels = read_qrels(os.fspath(path))
    out: dict = {}
    for q, d, r in zip(qrels.qid.tolist(), qrels.docno.tolist(), np.asarray(qrels.rel).tolist()):
        out.setdefault(q, {})[d] = max(int(r), 0)
    return out


def load_run(path):
    """(name, {qid: [(docno, score), ...]}) with duplicate documents dropped (first kept)."""
    _, read_run = _io()
    run = read_run(os.fspath(path))
    out: dict = {}
    seen: dict = {}
    for q, d, s in zip(run.qid.tolist(), run.docno.tolist(), np.asarray(run.score).tolist()):
        ds = seen.setdefault(q, set())
        if d in ds:
            continue
        ds.add(d)
        out.setdefault(q, []).append((d, float(s)))
    name = getattr(run, "runid", None) or os.path.basename(os.fspath(path))
    return name, out


def run_arrays(qrels, run, topics):
    """Padded (labels, scores, lengths) of one run in trec_eval order (score desc, docno desc)."""
    rows = []
    for q in topics:
        docs = sorted(run.get(q, []), key=lambda x: (x[1], x[0]), reverse=True)
        judged = qrels.get(q, {})
        rows.append(([judged.get(d, 0) for d, _ in docs], [s for _, s in docs]))
    width = max(1, max(len(r[0]) for r in rows))
    labels = np.zeros((len(topics), width), dtype=np.int64)
    scores = np.full((len(topics), width), -np.inf)
    lengths = np.zeros(len(topics), dtype=np.int64)
    for i, (lab, sc) in enumerate(rows):
        labels[i, : len(lab)] = lab
        scores[i, : len(sc)] = sc
        lengths[i] = len(lab)
    scores[~(np.arange(width)[None, :] < lengths[:, None])] = 0.0  # padding
    return labels, scores, lengths


def ideal_counts(qrels, topics):
    """(n_topics, max_grade + 1) judged documents per grade."""
    G = max((g for q in topics for g in qrels.get(q, {}).values()), default=0)
    out = np.zeros((len(topics), G + 1), dtype=np.int64)
    for i, q in enumerate(topics):
        for g in qrels.get(q, {}).values():
            out[i, g] += 1
    return out


def score_matrices(qrels_path, run_paths, measures):
    """(topics, system names, {measure: (n_runs, n_topics) matrix}) from TREC files."""
    evaluate = _evaluate()
    qrels = load_qrels(qrels_path)
    topics = sorted(qrels, key=_topic_key)
    if len(topics) < 2:
        raise ValueError(f"{qrels_path}: need judgments for at least 2 topics; got {len(topics)}")
    counts = ideal_counts(qrels, topics)
    names, per_measure = [], {m: [] for m in measures}
    for path in run_paths:
        name, run = load_run(path)
        names.append(name)
        labels, scores, lengths = run_arrays(qrels, run, topics)
        res = evaluate(labels, scores, list(measures), lengths=lengths, ties="stable",
                       ideal_counts=counts, per_query=True)
        for m in measures:
            per_measure[m].append(np.asarray(res[m], dtype=np.float64))
    if len(set(names)) < len(names):  # run tags not unique: name runs by file
        names = [os.path.basename(os.fspath(p)) for p in run_paths]
        if len(set(names)) < len(names):
            names = [os.fspath(p) for p in run_paths]
    return topics, names, {m: np.vstack(v) for m, v in per_measure.items()}
