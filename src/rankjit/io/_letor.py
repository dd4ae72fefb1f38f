"""LETOR / SVMlight ranking files (``label qid:Q f:v ... # comment``) and score files.

Only the label and the query id are read.  Files without a ``qid:`` field (LightGBM's
examples) take their query boundaries from a ``.query`` file of group sizes, one per
line.  Scores come from a separate file with one number per line (e.g. a model's
predictions), in the same row order.
"""
from __future__ import annotations

import os

import numpy as np

from rankjit.io import _kernels as K
from rankjit.io._frames import RaggedBatch
from rankjit.io._trec import _QUOTE_MAX, _line_number, _parse_numbers, _read_bytes, _source_name, _strings, _tokenize

__all__ = ["read_letor", "read_scores", "read_group_sizes"]


def read_scores(source, *, name=None):
    """Read a score file: one number per line (blank lines skipped).

    Examples
    --------
    >>> read_scores(b"0.5\\n-1.25\\n").tolist()
    [0.5, -1.25]
    """
    name = name or _source_name(source)
    buf = _read_bytes(source, name)
    n, starts, lens = _tokenize(buf, name, (0,), 1, 1, "one score per line")
    return _parse_numbers(buf, starts[0], lens[0], name, "score", "f")


def read_group_sizes(source, *, name=None):
    """Read a LightGBM ``.query`` file (documents per query, one count per line).

    Examples
    --------
    >>> read_group_sizes(b"2\\n3\\n").tolist()
    [2, 3]
    """
    name = name or _source_name(source)
    buf = _read_bytes(source, name)
    n, starts, lens = _tokenize(buf, name, (0,), 1, 1, "one group size per line")
    sizes = _parse_numbers(buf, starts[0], lens[0], name, "group size", "i")
    if n and sizes.min() <= 0:
        bad = int(np.flatnonzero(sizes <= 0)[0])
        raise ValueError(f"{name}: group size {int(sizes[bad])} (entry {bad + 1}) must be positive")
    return sizes


#: float64 holds every integer up to this one exactly
_FLOAT_EXACT = 2.0**53


def _labels(buf, starts, lens, name):
    """The label fields: int64 when all are plain integers, else float64.

    A label must be a number >= 0, finite, and exact: an integer of at most 18 digits,
    or (float64 labels) at most 2**53.  Else a ``ValueError`` names the file and line.
    """
    labels, ok = K.parse_ints(buf, starts, lens)
    if ok.all():
        bad = labels < 0
    else:
        labels = _parse_numbers(buf, starts, lens, name, "label", "f")  # (non-numbers and NaN refused)
        bad = (labels < 0) | ~(np.abs(labels) <= _FLOAT_EXACT)
    if bad.any():
        i = int(np.argmax(bad))  # the first in file order
        if np.isinf(labels[i]):
            why = "is infinite (labels must be finite)"
        elif labels[i] < 0:
            why = "is negative (labels are relevance grades >= 0)"
        else:
            why = ("is beyond 2**53, where float64 cannot hold every integer (labels must be integers of at most "
                   "18 digits, or numbers up to 2**53)")
        text = bytes(buf[starts[i] : starts[i] + min(lens[i], _QUOTE_MAX)]).decode("utf-8", "replace")
        raise ValueError(f"{name}: line {_line_number(buf, int(starts[i]))}: label field {text!r} {why}")
    return labels


def read_letor(source, *, scores=None, query_file=None, name=None):
    """Read a LETOR / SVMlight file into a ragged batch.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        Rows ``label qid:Q f:v ...``; features and trailing ``# ...`` comments are
        ignored.  Without ``qid:`` fields, give ``query_file``.
    scores : path, bytes or array-like, optional
        One score per row (a score file, or an array).  Without it scores are zeros
        (useful to inspect labels only).
    query_file : path or bytes, optional
        Group sizes (LightGBM ``.query`` format); overrides any ``qid:`` fields.
    name : str, optional

    Returns
    -------
    RaggedBatch
        Query ids are the ``qid:`` values as ``str`` (or 0, 1, ... with ``query_file``);
        bytes that are not UTF-8 are kept as surrogate escapes, as the TREC readers keep them.

    Raises
    ------
    ValueError
        On a malformed line, a label that is not a number, negative, infinite or beyond
        2**53 (unless a plain integer of at most 18 digits), a missing ``qid:`` without
        ``query_file``, a query whose rows are not contiguous, or when row counts disagree;
        the file and the line are named.

    Examples
    --------
    >>> b = read_letor(b"2 qid:1 1:0.5\\n0 qid:1 1:0.1\\n1 qid:7 1:0.3\\n", scores=[0.2, 0.9, 0.1])
    >>> b.qids.tolist(), b.offsets.tolist(), b.labels.tolist()
    (['1', '7'], [0, 2, 3], [2, 0, 1])
    """
    name = name or _source_name(source)
    buf = _read_bytes(source, name)
    n, starts, lens = _tokenize(buf, name, (0, 1), 1, -1, "'label qid:Q feature:value ...'")
    labels = _labels(buf, np.ascontiguousarray(starts[0]), np.ascontiguousarray(lens[0]), name)
    if query_file is not None:
        sizes = read_group_sizes(query_file)
        if int(sizes.sum()) != n:
            raise ValueError(
                f"{_source_name(query_file)}: group sizes add up to {int(sizes.sum())} rows, "
                f"but {name} has {n}"
            )
        offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        qids = np.arange(sizes.shape[0]).astype(str).astype(object)
    else:
        if n:
            q_s, q_l = starts[1], lens[1]  # (q_s = -1: no second field)
            is_qid = (q_s >= 0) & (q_l >= 4)
            head = np.where(is_qid, q_s, 0)
            for j, c in enumerate(b"qid:"):
                is_qid &= buf[np.minimum(head + j, buf.shape[0] - 1)] == c
            if not is_qid.all():
                bad = int(np.flatnonzero(~is_qid)[0])
                raise ValueError(
                    f"{name}: line {_line_number(buf, int(starts[0, bad]))}: expected 'qid:<id>' as the second "
                    "field (or pass query_file= with group sizes)"
                )
            ids = _strings(buf, q_s + 4, q_l - 4)  # bytes as written: ids that are not UTF-8 are kept
            run_starts = ids.run_starts()  # (then n)
            # one str per run of rows; bytes that are not UTF-8 as surrogate escapes (lossless)
            firsts = [ids[int(r)] for r in run_starts[:-1]]
            if len(set(firsts)) != len(firsts):
                seen = set()
                for i, qid in enumerate(firsts):  # error path only: one item per query run
                    if qid in seen:
                        break
                    seen.add(qid)
                line = _line_number(buf, int(starts[0, int(run_starts[i])]))
                raise ValueError(
                    f"{name}: line {line}: rows of query {qid!r} are not contiguous; sort the file by qid first"
                )
            offsets = run_starts.astype(np.int64)
            qids = np.empty(len(firsts), dtype=object)
            qids[:] = firsts
        else:
            offsets = np.zeros(1, dtype=np.int64)
            qids = np.zeros(0, dtype=object)
    if scores is None:
        score_arr = np.zeros(n, dtype=np.float64)
    elif isinstance(scores, (str, os.PathLike, bytes)):
        score_arr = read_scores(scores)
    else:
        score_arr = np.asarray(scores, dtype=np.float64)
    if score_arr.shape != (n,):
        raise ValueError(f"{name} has {n} rows but {score_arr.shape[0]} scores were given")
    return RaggedBatch(qids, offsets, labels, score_arr)

