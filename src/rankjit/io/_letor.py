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
from rankjit.io._trec import _parse_numbers, _read_bytes, _source_name, _strings, _tokenize

__all__ = ["read_letor", "read_scores", "read_group_sizes"]


def read_scores(source, *, name=None):
    """Read a score file: one number per line (blank lines skipped).

    Examples
    --------
    >>> read_scores(b"0.5\\n-1.25\\n").tolist()
    [0.5, -1.25]
    """
    name = name or _source_name(source)
    buf = _read_bytes(source)
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
    buf = _read_bytes(source)
    n, starts, lens = _tokenize(buf, name, (0,), 1, 1, "one group size per line")
    sizes = _parse_numbers(buf, starts[0], lens[0], name, "group size", "i")
    if n and sizes.min() <= 0:
        bad = int(np.flatnonzero(sizes <= 0)[0])
        raise ValueError(f"{name}: group size {int(sizes[bad])} (entry {bad + 1}) must be positive")
    return sizes


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
        Query ids are the ``qid:`` values (or 0, 1, ... with ``query_file``).

    Raises
    ------
    ValueError
        On a malformed line, a missing ``qid:`` without ``query_file``, a query whose
        rows are not contiguous, or when row counts disagree.

    Examples
    --------
    >>> b = read_letor(b"2 qid:1 1:0.5\\n0 qid:1 1:0.1\\n1 qid:7 1:0.3\\n", scores=[0.2, 0.9, 0.1])
    >>> b.qids.tolist(), b.offsets.tolist(), b.labels.tolist()
    (['1', '7'], [0, 2, 3], [2, 0, 1])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    name = name or _source_name(source)
    buf = _read_bytes(source)
    n, starts, lens = _tokenize(buf, name, (0, 1), 1, -1, "'label qid:Q feature:value ...'")
    lab_s, lab_l = np.ascontiguousarray(starts[0]), np.ascontiguousarray(lens[0])
    labels, ok = K.parse_ints(buf, lab_s, lab_l)
    if not ok.all():
        labels = _parse_numbers(buf, lab_s, lab_l, name, "label", "f")
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
            present = starts[1] >= 0
            qcol = _strings(buf, np.where(present, starts[1], 0), lens[1])
            arr = qcol.to_arrow(pa.large_string())
            is_qid = pc.starts_with(arr, "qid:").to_numpy(zero_copy_only=False) & present
            if not is_qid.all():
                bad = int(np.flatnonzero(~is_qid)[0])
                line = int(np.count_nonzero(buf[: int(starts[0, bad])] == 10)) + 1
                raise ValueError(
                    f"{name}: line {line}: expected 'qid:<id>' as the second field "
                    "(or pass query_file= with group sizes)"
                )
            ids = pc.utf8_slice_codeunits(arr, 4)
            enc = ids.dictionary_encode()
            codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
            run_starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
            firsts = codes[run_starts]
            if np.unique(firsts).shape[0] != firsts.shape[0]:
                seen, dup_run = set(), None
                for i, c in enumerate(firsts.tolist()):  # error path only: one item per query run
                    if c in seen:
                        dup_run = i
                        break
                    seen.add(c)
                row = int(run_starts[dup_run])
                line = int(np.count_nonzero(buf[: int(starts[0, row])] == 10)) + 1
                raise ValueError(
                    f"{name}: line {line}: rows of query {enc.dictionary[int(firsts[dup_run])].as_py()!r} "
                    "are not contiguous; sort the file by qid first"
                )
            offsets = np.append(run_starts, n).astype(np.int64)
            qids = np.asarray(enc.dictionary.take(pa.array(firsts)).to_pylist(), dtype=object)
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

