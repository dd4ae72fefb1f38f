"""Per-topic score matrices from TREC qrels and runs (used by ``rankjit compare`` / ``analyze``).

The files are read and aligned by :mod:`rankjit.io` (:func:`rankjit.io.align` with
``complete=True``), so the CLI follows trec_eval exactly as ``rankjit trec_eval``
does: documents ranked by score descending, ties by docno descending; negative
judgments count as 0; ideal DCG and R count the judged documents a run did not
retrieve; a document retrieved twice is an error.  The topic set is that of the
qrels, ordered numerically when the ids are numbers; a run without a topic scores
0 on it (trec_eval ``-c``).

Each run retrieves its own documents, so each run is evaluated on its own aligned
batch (``rankjit.evaluate_systems`` needs one document set shared by all systems).
The pairwise measure RPP is computed per pair of runs on the union of the two runs'
documents plus the judged relevant documents neither retrieved (:func:`pairwise_matrices`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np


def _topic_key(q):
    return (0, int(q), "") if q.isdigit() else (1, 0, q)


@dataclass
class TrecData:
    """Qrels and runs read and aligned once; ``perm`` maps aligned query order to ``topics``."""

    topics: list
    names: list
    qrels: object
    runs: list
    aligned: list
    perm: np.ndarray


def load(qrels_path, run_paths):
    """Read the qrels and runs and align every run with the qrels (trec_eval ``-c``)."""
    from rankjit.io import align, read_trec_qrels, read_trec_run

    qrels = read_trec_qrels(os.fspath(qrels_path))
    runs = [read_trec_run(os.fspath(p)) for p in run_paths]
    aligned = [align(r, qrels, complete=True) for r in runs]
    qids = aligned[0].qids if aligned else sorted(set(qrels.qid.tolist()))
    if len(qids) < 2:
        raise ValueError(f"{qrels_path}: need judgments for at least 2 topics; got {len(qids)}")
    perm = np.array(sorted(range(len(qids)), key=lambda i: _topic_key(qids[i])), dtype=np.int64)
    names = [r.runid or os.path.basename(os.fspath(p)) for r, p in zip(runs, run_paths)]
    if len(set(names)) < len(names):  # run tags not unique: name runs by file, as `rankjit eval` does
        from rankjit.io._cli import _run_names

        names = _run_names([os.fspath(p) for p in run_paths])
    return TrecData([qids[i] for i in perm], names, qrels, runs, aligned, perm)


def score_matrices(qrels_path, run_paths, measures):
    """(topics, system names, {measure: (n_runs, n_topics) matrix}) from TREC files."""
    data = load(qrels_path, run_paths)
    return data.topics, data.names, listwise_matrices(data, measures)


def listwise_matrices(data, measures):
    """{measure: (n_runs, n_topics)} per-topic values of ``rankjit.evaluate`` measures."""
    measures = list(measures)
    if not measures:
        return {}
    per_measure = {m: [] for m in measures}
    for al in data.aligned:
        res = al.evaluate(measures, per_query=True)
        for m in measures:
            per_measure[m].append(np.asarray(res[m], dtype=np.float64)[data.perm])
    return {m: np.vstack(v) for m, v in per_measure.items()}


def is_pairwise(measure):
    """Whether ``measure`` (a name such as ``"RPP(weights='inverse')@10"``) is RPP."""
    import rankjit.preference  # noqa: F401  (registers RPP)
    from rankjit._measures import parse

    return parse(measure).family == "RPP"


class _Ranked:
    """One run's ranked documents as (query, document code, rank) keys."""

    def __init__(self, keys, ranks):
        self.keys = keys
        self.ranks = ranks


def _doc_codes(data):
    """Integer code of every ranked document of every run and of every relevant judged document."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ranked_docs = [run.docno.take(al.rows).to_arrow() for run, al in zip(data.runs, data.aligned)]
    rel = np.maximum(data.qrels.rel, 0)
    qrels_docs = data.qrels.docno.to_arrow()
    vocab = pc.unique(pa.chunked_array([*ranked_docs, qrels_docs], type=pa.large_binary()))
    n_docs = len(vocab)

    def codes(arr):
        return np.asarray(pc.index_in(arr, value_set=vocab).to_numpy(zero_copy_only=False), dtype=np.int64)

    ranked = []
    for docs, al in zip(ranked_docs, data.aligned):
        n_ret = al.num_ret
        q = np.repeat(np.arange(al.n_queries, dtype=np.int64), n_ret)
        ranks = np.arange(q.shape[0], dtype=np.int64) - np.repeat(al.offsets[:-1], n_ret)
        ranked.append(_Ranked(q * n_docs + codes(docs), ranks))
    # relevant judgments: query index in the aligned (byte) order
    qids = pa.array([q.encode("utf-8", "surrogateescape") for q in data.aligned[0].qids],
                    type=pa.large_binary())  # (ids not UTF-8 come with surrogate escapes)
    jq = np.asarray(pc.index_in(data.qrels.qid.to_arrow(), value_set=qids).to_numpy(zero_copy_only=False),
                    dtype=np.int64)
    pos = rel > 0
    rel_keys = jq[pos] * n_docs + codes(qrels_docs)[pos]
    return ranked, rel_keys, rel[pos], n_docs


def _pair_batch(a, b, rel_keys, rel_labels, n_docs, n_q):
    """Ragged batch over the union of both runs' documents and the relevant judged ones."""
    keys = np.concatenate([a.keys, b.keys, rel_keys])
    uniq, inv = np.unique(keys, return_inverse=True)
    na, nb = a.keys.shape[0], b.keys.shape[0]
    rank_a = np.full(uniq.shape[0], -1, dtype=np.int64)
    rank_b = np.full(uniq.shape[0], -1, dtype=np.int64)
    rank_a[inv[:na]] = a.ranks
    rank_b[inv[na:na + nb]] = b.ranks
    labels = np.zeros(uniq.shape[0], dtype=np.int64)
    labels[inv[na + nb:]] = rel_labels
    offsets = np.searchsorted(uniq // n_docs, np.arange(n_q + 1), side="left").astype(np.int64)
    # distinct scores in each run's own order (trec_eval's); unretrieved documents are masked out
    return labels, -rank_a.astype(np.float64), -rank_b.astype(np.float64), rank_a >= 0, rank_b >= 0, offsets


def pairwise_matrices(data, measures, pairs):
    """{measure: (n_pairs, n_topics)} per-topic RPP(run i, run j) for each ``(i, j)`` in ``pairs``.

    For each pair, every query's documents are the union of what the two runs
    retrieved plus the relevant judged documents neither retrieved; a document a run
    did not retrieve is unretrieved for it (below all its ranks, as in
    :func:`rankjit.preference.rpp`), and each run keeps trec_eval's order.  Topics
    without a relevant document are NaN.
    """
    import rankjit.preference as P
    from rankjit._measures import parse, resolve

    ranked, rel_keys, rel_labels, n_docs = _doc_codes(data)
    n_q = len(data.topics)
    parsed = [(m, parse(m)) for m in measures]
    out = {m: np.empty((len(pairs), n_q)) for m in measures}
    for p, (i, j) in enumerate(pairs):
        labels, sa, sb, ma, mb, offsets = _pair_batch(ranked[i], ranked[j], rel_keys, rel_labels, n_docs, n_q)
        for name, meas in parsed:
            prm = resolve(meas, {})
            empty = prm.get("empty")
            if empty not in (None, "nan"):
                raise ValueError(f"{name}: the compare command drops topics without relevant documents; "
                                 "do not set empty=")
            v = P.rpp(labels, sa, sb, k=meas.k, weights=prm["weights"], graded=bool(prm["graded"]),
                      rel=prm["rel"], offsets=offsets, mask_a=ma, mask_b=mb, empty="nan", ties="stable")
            out[name][p] = v[data.perm]
    return out
