"""Input checking and conversion: the first tier of every public function.

Padded ``(n_queries, n_docs)`` matrices and ragged CSR batches are both brought to
one *flat* form: 1-D ``labels`` and ``scores`` plus per-query ``starts`` and
``counts`` (and an optional flat ``mask``).  For C-contiguous inputs this is a view:
nothing is copied.  A copy is made only when

* the array is not C-contiguous (``np.ascontiguousarray``),
* scores are neither float32 nor float64 (converted to float64),
* labels are bool (viewed as uint8: no copy) or of a non-numeric dtype (error).

One parallel pass over the real documents (:func:`scan`) finds NaN scores,
negative labels, non-integer labels and the largest label; the errors name the first
offending query and position.  The list-measure engine tests scores for NaN itself,
row by row as it ranks them (:func:`rankjit._kernels.scans.first_nan`), so its callers scan the labels only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from rankjit._config import CHUNK_SIZE, run_blocks, use_parallel
from rankjit._kernels import scans


@dataclass
class Batch:
    """A validated batch in flat form (internal)."""

    labels: np.ndarray  # 1-D
    scores: np.ndarray  # 1-D float32/float64
    starts: np.ndarray  # int64, n_queries
    counts: np.ndarray  # int64, n_queries (cells scanned per query)
    mask: np.ndarray  # 1-D bool, or empty when every scanned cell is real
    n_queries: int
    max_count: int
    width: int  # row width of a padded batch, 0 for a ragged one
    offsets: np.ndarray | None  # CSR offsets of a ragged batch
    max_label: float = 0.0
    integer_labels: bool = True  # every real label is a whole number
    first_fraction: int = -1

    def locate(self, flat_position: int) -> tuple[int, int]:
        """(query, position in its row) of a flat position."""
        if self.offsets is None:
            return divmod(int(flat_position), self.width)
        q = int(np.searchsorted(self.offsets, flat_position, side="right") - 1)
        return q, int(flat_position - self.offsets[q])


def _as_array(x, name):
    if isinstance(x, np.ma.MaskedArray):  # (an ndarray whose mask the kernels would not read)
        if np.ma.getmask(x) is not np.ma.nomask and np.ma.getmaskarray(x).any():
            raise TypeError(f"{name} is a numpy masked array with masked entries, and rankjit does not read numpy "
                            f"masks (the masked cells would be evaluated): pass {name}.data and mask= (True = a "
                            "real document), e.g. mask=~np.ma.getmaskarray(labels)")
        return x.data
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        try:
            a = np.asarray(x)
        except ValueError as err:
            if "inhomogeneous" not in str(err):
                raise
            raise ValueError(f"{name} holds rows of different lengths (a ragged list); pass a 2-D array padded "
                             "with lengths= or mask=, or flat arrays with offsets= (CSR row pointers)") from None
        if a.dtype == object and hasattr(x, "dtypes"):  # (pandas: nullable columns become objects)
            dtypes = x.dtypes if hasattr(x, "ndim") and x.ndim == 2 else [x.dtypes]
            raise TypeError(f"{name} is a {type(x).__name__} that numpy reads as objects (dtypes: "
                            f"{', '.join(sorted({str(t) for t in dtypes}))}): pandas nullable columns (Int64, "
                            "Float64, boolean) must be converted first, e.g. .to_numpy(dtype='float64', "
                            "na_value=...) after deciding what a missing value means")
        return a
    raise TypeError(f"{name} must be an array-like, got {type(x).__name__}")


def _check_labels_dtype(labels, name="labels"):
    if labels.dtype == np.bool_:
        return labels.view(np.uint8)
    if labels.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be integers or floats, got dtype {labels.dtype}")
    if labels.dtype == np.float16:
        return labels.astype(np.float32)
    if labels.dtype.kind == "f" and labels.dtype.itemsize > 8:
        return _exact_float64(labels, name, "is not a float64 number, and rankjit computes in float64; give labels "
                                            "that float64 holds")
    return labels


def _exact_float64(values, name, why):
    """``values`` (long double) as float64, or a ``ValueError`` at the first value float64 does not hold exactly.

    NaN and infinities convert as they are (the checks of NaN and inf come later).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        converted = values.astype(np.float64)
        lost = (converted.astype(values.dtype) != values) & ~np.isnan(values)
    if lost.any():
        at = np.unravel_index(int(np.argmax(lost)), values.shape)
        where = ", ".join(str(int(i)) for i in at)
        shown = np.format_float_scientific(values[at], unique=True)  # (str() rounds it as a float64)
        raise ValueError(f"{name}[{where}] = {shown} ({values.dtype}) {why}")
    return converted


#: integers up to this magnitude are exact in float64
_EXACT_FLOAT_INT = 2**53


def first_inexact_score(scores) -> int:
    """Flat index of the first integer score that float64 cannot hold exactly, or -1.

    float64 holds every integer up to 2**53 but only some beyond: such a score could tie
    with a distinct one once converted, a silent wrong ranking.  Only int64 / uint64
    arrays can hold one (narrower integers are always exact).
    """
    if scores.dtype.kind not in "iu" or scores.dtype.itemsize < 8 or not scores.size:
        return -1
    if scores.max() <= _EXACT_FLOAT_INT and scores.min() >= -_EXACT_FLOAT_INT:
        return -1
    converted = scores.astype(np.float64)
    above = converted >= 2.0 ** (8 * scores.dtype.itemsize - (scores.dtype.kind == "i"))  # no way back
    lost = above | (np.where(above, 0.0, converted).astype(scores.dtype) != scores)
    return int(np.argmax(lost)) if lost.any() else -1


#: why an integer score that float64 cannot hold is refused, and what to do
INEXACT_SCORE = "cannot be ranked exactly: integers beyond 2**53 lose digits in float64, so distinct scores could " \
                "tie; rescale them, or rank them yourself and pass the ranks as scores"


def _check_scores_dtype(scores):
    if scores.dtype.kind not in "iufb":
        raise TypeError(f"scores must be numeric, got dtype {scores.dtype}")
    if scores.dtype == np.float32 or scores.dtype == np.float64:
        return scores
    if scores.dtype.kind == "f" and scores.dtype.itemsize > 8:  # long double: ranked as float64 if exact
        return _exact_float64(scores, "scores", "cannot be ranked exactly: float64 does not hold it, so distinct "
                                                "scores could tie; round them to float64 yourself if such ties do "
                                                "not matter")
    bad = first_inexact_score(scores)
    if bad >= 0:
        at = np.unravel_index(bad, scores.shape)
        where = ", ".join(str(int(i)) for i in at)
        raise ValueError(f"scores[{where}] = {scores[at]} ({scores.dtype}) {INEXACT_SCORE}")
    return scores.astype(np.float64)  # documented copy: ints, bools, float16


#: The most documents one query may hold: the kernels count ranks in 32-bit integers
#: (a vectorised count runs twice as many lanes as a 64-bit one).
MAX_ROW_DOCUMENTS = 2**31 - 1


def _check_row_size(n_docs, what):
    if n_docs > MAX_ROW_DOCUMENTS:
        raise ValueError(
            f"{what} holds {n_docs} documents; rankjit ranks at most 2**31 - 1 documents per query "
            "(split the query, or keep only the documents a cutoff can reach)"
        )


def number(value, name, what="a number", *, where=""):
    """``value`` as a Python int or float, refusing booleans and non-numbers (one wording everywhere).

    Parameters
    ----------
    value : object
        The parameter as the caller gave it.
    name : str
        Its name in the messages.
    what : str
        What it must be, e.g. ``"a number in [0, 1]"``.
    where : str
        Appended to the name, e.g. ``" in 'ERR@10'"``.

    Returns
    -------
    int or float
        ``value`` unchanged for Python numbers; NumPy scalars as Python ones.

    Raises
    ------
    TypeError
        For ``True`` / ``False`` (a flag is not a count or a weight) and for anything
        that is not a real number.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}{where} must be {what}, got the boolean {bool(value)!r} (booleans are not numbers here)")
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}{where} must be {what}, got {value!r} of type {type(value).__name__}")
    return value.item() if isinstance(value, np.generic) else value


def finite_float(value, name, *, where=""):
    """``value`` (a number, see :func:`number`) as a finite float; ValueError for NaN, inf or beyond float64."""
    import reprlib

    value = number(value, name, "a finite number", where=where)
    try:
        f = float(value)
    except OverflowError:  # an int beyond float64
        f = math.inf
    if not math.isfinite(f):
        raise ValueError(f"{name}{where} must be a finite number, got {reprlib.repr(value)}")
    return f


def flag(value, name, *, where=""):
    """``value`` as a bool; anything but True / False (NumPy's included) is a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}{where} must be True or False, got {value!r}")
    return bool(value)


def ties_code(ties) -> int:
    """The kernels' code of a tie rule name (``rankjit._kernels.ranking.TIES_CODES``)."""
    from rankjit._kernels.ranking import TIES_CODES

    if not isinstance(ties, str) or ties not in TIES_CODES:
        raise ValueError(f"unknown ties={ties!r}; valid values: {', '.join(TIES_CODES)}")
    return TIES_CODES[ties]


def integer(value, name, what="an integer", *, minimum=None, where=""):
    """``value`` as a Python int (a count, a cutoff, a level), never truncated.

    Booleans and non-numbers are TypeErrors (:func:`number`), and so are numbers that are
    not integers (``1.5``, ``2.0``: ``int()`` would silently truncate them); NumPy integers
    are taken as Python ints.  Below ``minimum`` (when given) a ValueError
    (``name must be >= minimum, got value``).
    """
    x = number(value, name, what, where=where)
    if not isinstance(x, int):
        raise TypeError(f"{name}{where} must be {what}, got {x!r} (not an integer)")
    if minimum is not None and x < minimum:
        raise ValueError(f"{name}{where} must be >= {minimum}, got {x}")
    return x


def document_limit(value, name="max_docs"):
    """trec_eval's ``-M``: None (every document) or an int >= 0 (:func:`integer`), at most int64's largest."""
    if value is None:
        return None
    return min(integer(value, name, "an integer >= 0 or None", minimum=0), np.iinfo(np.int64).max)


def positive_int(k, name="k"):
    if k is None:
        return None
    k = number(k, name, "a positive integer or None")
    if not isinstance(k, int):
        raise TypeError(f"{name} must be a positive integer or None, got {k!r}")
    if k <= 0:
        raise ValueError(f"{name} must be a positive integer or None, got {k}")
    if k > 2**62:
        raise ValueError(f"{name} is too large (at most 2**62); pass None for the whole row")
    return int(k)


def as_batch(labels, scores, *, lengths=None, mask=None, offsets=None, labels_name="labels"):
    """Validate shapes and bring ``labels`` / ``scores`` to the flat form (no copy when possible)."""
    labels = _check_labels_dtype(_as_array(labels, labels_name), labels_name)
    scores = _check_scores_dtype(_as_array(scores, "scores"))
    if offsets is not None:
        if lengths is not None or mask is not None:
            raise ValueError("offsets= describes a ragged batch; do not combine it with lengths= or mask=")
        if labels.ndim != 1 or scores.ndim != 1:
            raise ValueError(
                f"with offsets=, {labels_name} and scores must be 1-D (flat), got shapes {labels.shape} and {scores.shape}"
            )
        if labels.shape != scores.shape:
            raise ValueError(f"{labels_name} and scores have different lengths: {labels.shape[0]} and {scores.shape[0]}")
        offsets = _as_array(offsets, "offsets")
        if offsets.ndim != 1 or offsets.dtype.kind not in "iu":
            raise TypeError("offsets must be a 1-D integer array (CSR row pointers, n_queries + 1)")
        if offsets.shape[0] < 2:
            raise ValueError("empty batch: offsets must hold at least 2 entries (n_queries + 1 >= 2)")
        beyond = np.flatnonzero(offsets > np.iinfo(np.int64).max) if offsets.dtype == np.uint64 else []  # would wrap
        if len(beyond):
            i = int(beyond[0])
            raise ValueError(f"offsets[{i}] = {offsets[i]} is beyond the number of documents ({labels.shape[0]})")
        offsets = offsets.astype(np.int64, copy=False)
        if offsets[0] != 0:
            raise ValueError(f"offsets[0] must be 0, got {offsets[0]}")
        if offsets[-1] != labels.shape[0]:
            raise ValueError(f"offsets[-1] must equal the number of documents ({labels.shape[0]}), got {offsets[-1]}")
        steps = np.diff(offsets)
        if (steps < 0).any():
            bad = int(np.argmax(steps < 0))
            raise ValueError(f"offsets must be non-decreasing: offsets[{bad + 1}] = {offsets[bad + 1]} < offsets[{bad}] = {offsets[bad]}")
        counts = steps
        n_q = counts.shape[0]
        longest = int(np.argmax(counts))  # n_q >= 1: offsets holds at least 2 entries
        max_count = int(counts[longest])
        _check_row_size(max_count, f"query {longest}")
        labels = np.ascontiguousarray(labels)
        scores = np.ascontiguousarray(scores)
        return Batch(labels, scores, offsets[:-1], counts, np.empty(0, np.bool_), n_q, max_count, 0, offsets)

    if labels.ndim != 2 or scores.ndim != 2:
        raise ValueError(
            f"{labels_name} and scores must be 2-D (n_queries, n_docs), got shapes {labels.shape} and {scores.shape}; "
            "for a flat (ragged) batch pass offsets="
        )
    if labels.shape != scores.shape:
        raise ValueError(f"shape mismatch: {labels_name} {labels.shape} vs scores {scores.shape}")
    n_q, width = labels.shape
    if n_q == 0:
        raise ValueError("empty batch: no queries")
    _check_row_size(width, "each row")
    labels = np.ascontiguousarray(labels)
    scores = np.ascontiguousarray(scores)
    starts = np.arange(n_q, dtype=np.int64) * width
    flat_mask = np.empty(0, np.bool_)
    if lengths is not None and mask is not None:
        raise ValueError("pass either lengths= or mask=, not both")
    if lengths is not None:
        lengths = _as_array(lengths, "lengths")
        if lengths.ndim != 1 or lengths.shape[0] != n_q:
            raise ValueError(f"lengths must be 1-D with one entry per query ({n_q}), got shape {lengths.shape}")
        if lengths.dtype.kind not in "iu":
            raise TypeError(f"lengths must be integers, got dtype {lengths.dtype}")
        bad = np.flatnonzero((lengths < 0) | (lengths > width))  # before the cast: uint64 would wrap
        if bad.size:
            q = int(bad[0])
            raise ValueError(f"lengths out of range: lengths[{q}] = {lengths[q]}, must be in [0, {width}]")
        counts = lengths.astype(np.int64)
    else:
        counts = np.full(n_q, width, dtype=np.int64)
        if mask is not None:
            mask = _as_array(mask, "mask")
            if mask.dtype != np.bool_:
                raise TypeError(f"mask must be a boolean array (True = real document), got dtype {mask.dtype}")
            if mask.shape != labels.shape:
                raise ValueError(f"mask shape {mask.shape} does not match {labels_name} {labels.shape}")
            flat_mask = np.ascontiguousarray(mask).reshape(-1)
    return Batch(labels.reshape(-1), scores.reshape(-1), starts, counts, flat_mask, n_q, width if n_q else 0, width, None)


def nan_score_error(batch: Batch, flat_position: int, scores_name=None) -> ValueError:
    """The error for a NaN score at a flat position (shared by the scan and the engine).

    ``scores_name`` names the scores when a call takes several (``"scores_stack[1], system 1"``).
    """
    q, pos = batch.locate(flat_position)
    where = "" if scores_name is None else f" ({scores_name})"
    return ValueError(
        f"NaN score in query {q} at position {pos}{where}; replace NaN scores (e.g. with -inf to rank them last) "
        "or mask those documents out"
    )


#: elements per task of the numpy scan of a dense batch (bounds its temporaries)
_DENSE_SCAN_STEP = 1 << 20


def _first(flags, offset):
    """Flat position of the first True in ``flags`` (shifted by ``offset``), or -1."""
    hit = np.flatnonzero(flags)
    return int(hit[0]) + offset if hit.size else -1


def _scan_dense(batch: Batch, check_scores: bool, parallel: bool):
    """:func:`run_scan` for a batch whose every cell is a real document, with numpy.

    numpy's vectorised reductions release the GIL and measured faster than the compiled
    scan for int8 labels (1M x 100: 3.7 vs 4.8 ms on one thread), and they need no
    compiling: a first call on a full matrix or a CSR batch compiles only the engine.
    """
    labels, scores = batch.labels, batch.scores
    n = labels.shape[0]
    n_tasks = max(1, (n + _DENSE_SCAN_STEP - 1) // _DENSE_SCAN_STEP)
    found = np.full((n_tasks, 4), -1, dtype=np.int64)  # NaN score, negative, non-integer, non-finite label
    tops = np.zeros(n_tasks, dtype=np.float64)
    integer = labels.dtype.kind in "iu"

    def scan_tasks(t_lo, t_hi):
        for t in range(t_lo, t_hi):
            lo, hi = t * _DENSE_SCAN_STEP, min(n, (t + 1) * _DENSE_SCAN_STEP)
            x = labels[lo:hi]
            if x.size == 0:  # a batch of empty rows
                continue
            if check_scores:
                s = scores[lo:hi]
                if np.isnan(s.min()):  # min propagates NaN: one pass without a temporary
                    found[t, 0] = _first(np.isnan(s), lo)
            if not integer:
                finite = np.isfinite(x)
                if not finite.all():
                    found[t, 3] = _first(~finite, lo)
                    continue  # a non-finite label is the error raised first
            low, high = x.min(), x.max()
            if low < 0:
                found[t, 1] = _first(x < 0, lo)
            if not integer:
                found[t, 2] = _first(x != np.floor(x), lo)
            tops[t] = max(float(high), 0.0)

    run_blocks(scan_tasks, n_tasks, parallel)
    return found, tops


def run_scan(batch: Batch, check_scores: bool, parallel: bool):
    """Check every real document: ``found`` (first NaN score, negative, non-integer,
    non-finite label per block of work) and ``tops`` (largest label per block)."""
    if batch.mask.shape[0] == 0 and int(batch.counts.sum()) == batch.labels.shape[0]:
        return _scan_dense(batch, check_scores, parallel)
    n_q = batch.n_queries
    n_blocks = max(1, (n_q + CHUNK_SIZE - 1) // CHUNK_SIZE)
    found = np.full((n_blocks, 4), -1, dtype=np.int64)
    tops = np.zeros(n_blocks, dtype=np.float64)
    labels, scores, starts, counts, mask = batch.labels, batch.scores, batch.starts, batch.counts, batch.mask
    with_scores = bool(check_scores)
    integer = labels.dtype.kind in "iu"  # only the kernel for the labels' kind is compiled
    zero = np.zeros(1, labels.dtype)

    def scan_blocks(b_lo, b_hi):
        lo, hi = b_lo * CHUNK_SIZE, min(n_q, b_hi * CHUNK_SIZE)
        if integer:
            nan_at, neg_at, frac_at, top, bad_at = scans.scan_int_chunk(
                lo, hi, labels, scores, starts, counts, mask, with_scores, zero
            )
        else:
            nan_at, neg_at, frac_at, top, bad_at = scans.scan_chunk(lo, hi, labels, scores, starts, counts, mask, with_scores)
        found[b_lo] = (nan_at, neg_at, frac_at, bad_at)
        tops[b_lo] = top

    run_blocks(scan_blocks, n_blocks, parallel)
    return found, tops


def scan(batch: Batch, *, labels_name="labels", allow_negative=False, check_scores=True, scores_name=None):
    """Check every real document once: NaN scores and bad labels raise; record the largest label.

    ``check_scores=False`` leaves the NaN test of the scores to the caller (the fused
    engine tests each row as it ranks it, which saves a pass over the largest input).
    ``scores_name`` names the scores in the NaN message (see :func:`nan_score_error`).
    """
    found, tops = run_scan(batch, check_scores, use_parallel(batch.n_queries))

    def first(col):
        hits = found[:, col][found[:, col] >= 0]
        return int(hits[0]) if hits.size else -1

    nan_at = first(0)
    if nan_at >= 0:
        raise nan_score_error(batch, nan_at, scores_name)
    bad_at = first(3)
    if bad_at >= 0:
        q, pos = batch.locate(bad_at)
        raise ValueError(
            f"{'NaN' if np.isnan(batch.labels[bad_at]) else 'infinite'} label in query {q} at position {pos}; "
            f"{labels_name} must be finite (mask unjudged documents out, or give them label 0)"
        )
    neg_at = first(1)
    if neg_at >= 0 and not allow_negative:
        q, pos = batch.locate(neg_at)
        raise ValueError(
            f"negative label {batch.labels[neg_at]} in query {q} at position {pos}; labels must be >= 0 "
            "(map non-relevant judgments such as trec_eval's negative grades to 0, or mask padding out)"
        )
    frac_at = first(2)
    batch.integer_labels = frac_at < 0
    batch.first_fraction = frac_at
    batch.max_label = float(tops.max()) if tops.size else 0.0
    return batch


def document_flags(batch: Batch, flags, name, labels_name="labels") -> np.ndarray:
    """A boolean array laid out as ``labels`` (2-D, or flat with ``offsets=``), flat; no copy when contiguous."""
    flags = _as_array(flags, name)
    if flags.dtype != np.bool_:
        raise TypeError(f"{name} must be a boolean array (True = {name} document), got dtype {flags.dtype}")
    shape = (batch.labels.shape[0],) if batch.offsets is not None else (batch.n_queries, batch.width)
    if flags.shape != shape:
        raise ValueError(f"{name} must have the shape of {labels_name}, {shape}, got {flags.shape}")
    return np.ascontiguousarray(flags).reshape(-1)


def _real_cells(batch: Batch) -> np.ndarray | None:
    """The flat cells that hold a real document (None: every cell does)."""
    if batch.mask.shape[0]:
        return batch.mask
    if batch.offsets is None and (batch.counts < batch.width).any():  # lengths=: cells past a row's end
        return (np.arange(batch.width) < batch.counts[:, None]).reshape(-1)
    return None


def judged_batch(batch: Batch, judged, labels_name="labels") -> Batch:
    """The batch without its unjudged documents: ``judged`` (True = judged) joins its mask.

    ``judged`` is a boolean array laid out as ``labels`` (2-D, or flat with ``offsets=``);
    no copy when the batch has no mask of its own.  An unjudged document is not relevant:
    one with a label above 0 is an error.  A condensed list: the judged documents keep
    their order and are ranked 1, 2, ... among themselves.
    """
    flat = document_flags(batch, judged, "judged", labels_name)
    unjudged_valued = ~flat & (batch.labels > 0)
    real = _real_cells(batch)
    if real is not None:
        unjudged_valued &= real
    if unjudged_valued.any():
        at = int(np.argmax(unjudged_valued))
        q, pos = batch.locate(at)
        raise ValueError(
            f"label {batch.labels[at]} in query {q} at position {pos} is marked unjudged (judged=False); an "
            f"unjudged document is not relevant: give it label 0, or mark it judged"
        )
    mask = flat if not batch.mask.shape[0] else batch.mask & flat
    return replace(batch, mask=mask)


def judgment_codes_batch(batch: Batch, judged_mask, pooled, rel) -> Batch:
    """The batch whose labels are judgment codes (uint8, ``rankjit._kernels.layout.CODE_*``): Bpref, infAP.

    3 for a judged document with ``label >= rel``, 2 for a judged one below ``rel``, 1 for
    a pooled one left unjudged (``pooled`` True, ``judged_mask`` False), 0 for the others.
    ``judged_mask``: :func:`judged_batch`'s mask (None: every document is judged).  One
    byte per document; the batch's layout and mask are kept.
    """
    from rankjit._kernels import layout as Lay

    relevant = _at_least(batch.labels, rel).view(np.uint8)
    # codes in uint8 arithmetic (no np.where: 10x faster on large batches): judged documents
    # CODE_NONRELEVANT, + 1 (CODE_RELEVANT) for the relevant ones; CODE_POOLED for a pooled one left unjudged
    assert Lay.CODE_RELEVANT == Lay.CODE_NONRELEVANT + 1 and Lay.CODE_POOLED == 1 and Lay.CODE_UNJUDGED == 0
    if judged_mask is None:
        codes = relevant + np.uint8(Lay.CODE_NONRELEVANT)
    else:
        judged = judged_mask.view(np.uint8)
        codes = judged * np.uint8(Lay.CODE_NONRELEVANT)
        codes += relevant & judged
        if pooled is not None:
            codes += document_flags(batch, pooled, "pooled").view(np.uint8) & (judged ^ np.uint8(1))
    return replace(batch, labels=codes, max_label=float(Lay.CODE_RELEVANT), integer_labels=True, first_fraction=-1)


def code_counts(batch: Batch) -> np.ndarray:
    """Per query, the real documents of each judgment code 0..3: (n_queries, 4) int64."""
    real = _real_cells(batch)
    cells = np.arange(batch.labels.shape[0]) if real is None else np.flatnonzero(real)
    if batch.offsets is None and real is None and batch.width:  # full rows: no padding
        q = cells // batch.width
    else:
        q = query_of(batch, cells)
    flat = np.bincount(q * 4 + batch.labels[cells], minlength=batch.n_queries * 4)
    return flat.reshape(batch.n_queries, 4).astype(np.int64)


def judged_flags_batch(batch: Batch, judged_mask) -> Batch:
    """The batch whose labels are the judged flags (1 judged, 0 not): Judged@k is P@k over them.

    ``judged_mask`` is :func:`judged_batch`'s mask (the batch's own mask and the judged
    documents): the flags are a uint8 view of it, no copy.
    """
    flags = judged_mask.view(np.uint8)
    return replace(batch, labels=flags, max_label=1.0, integer_labels=True, first_fraction=-1)


def judged_grades_batch(batch: Batch, judged_mask, pooled=None) -> Batch:
    """The batch whose labels tell unjudged documents from judged ones: ``label + 1`` judged, 0 unjudged; with
    ``pooled`` (a pool given, for infAP), ``label + 2`` judged, 1 pooled but unjudged, 0 outside the pool.

    ``judged_mask`` is :func:`judged_batch`'s mask.  Read by the measures that give grade 0
    a value (``rankjit._measures.values_grade_zero``), the judged flags' and the judgment
    codes' measures, all rewritten by ``on_judged_grades`` with ``judged_lo`` 1 (2 with
    ``pooled``), so that a judged document of grade 0 keeps it and an unjudged one gets none.
    Integer labels become the narrowest unsigned dtype that holds the largest shifted grade
    (uint8 while it stays at most 255, as :func:`engine_batch` wants them), others float64;
    the batch's layout and mask are kept.
    """
    labels = batch.labels
    lo = 1 if pooled is None else 2
    # (label + lo) * judged, in the narrowest unsigned dtype that holds the largest shifted grade (no
    # np.where: 10x faster on large batches); an unjudged real document has label 0, so it gets 0
    with np.errstate(invalid="ignore", over="ignore"):  # padding cells may hold anything; never read
        if batch.integer_labels and batch.max_label < 2**62:
            shifted = labels.astype(np.min_scalar_type(int(batch.max_label) + lo))
            shifted += lo
        else:  # (labels >= 0: a judged one is >= lo, all a binary measure with rel <= 0 reads)
            shifted = labels.astype(np.float64) + float(lo)
        shifted *= judged_mask
        if pooled is not None:  # + 1 for a pooled document left unjudged
            shifted += document_flags(batch, pooled, "pooled").view(np.uint8) & (judged_mask.view(np.uint8) ^ np.uint8(1))
    return replace(batch, labels=shifted, max_label=batch.max_label + lo)


def _at_least(labels, threshold):
    """``labels >= threshold``, compared in the labels' own integer dtype when they are integers (5x faster)."""
    if labels.dtype.kind in "iu" and math.isfinite(threshold):
        bound = math.ceil(threshold)
        info = np.iinfo(labels.dtype)
        if bound <= info.min:
            return np.ones(labels.shape, dtype=bool)
        if bound > info.max:
            return np.zeros(labels.shape, dtype=bool)
        return labels >= labels.dtype.type(bound)
    return labels >= threshold


def engine_batch(batch: Batch) -> Batch:
    """The batch with its labels in the engine's dtype, after :func:`scan` refused negative labels.

    Integer grades 0..255 (of any integer, bool or float dtype) become ``uint8``: a view
    for int8 labels, otherwise a copy of one byte per document.  The engine is then
    compiled for few label dtypes (uint8, and int64 / float32 / float64 for wider or
    fractional labels): ``np.array`` of Python grades (int64) reuses the code compiled for
    int8 labels, and the ranking reads 1 byte per label instead of 8.  Other labels are
    kept as they are.  The values do not change, so neither does any result.
    """
    labels = batch.labels
    if labels.dtype == np.uint8 or not batch.integer_labels or batch.max_label > 255:
        return batch
    if labels.dtype == np.int8:
        narrow = labels.view(np.uint8)  # no label is negative: the same values
    else:
        with np.errstate(invalid="ignore"):  # padding cells may hold anything; they are never read as labels
            narrow = labels.astype(np.uint8)
    return replace(batch, labels=narrow)


def require_integer_grades(batch: Batch, what: str):
    """Raise when some real label is not a whole number (grades are required by ``what``)."""
    if not batch.integer_labels:
        q, pos = batch.locate(batch.first_fraction)
        raise ValueError(
            f"{what} needs integer grades, but query {q} has label {batch.labels[batch.first_fraction]} at position {pos}"
        )



def _real_positions(batch: Batch, pos):
    """The flat positions among ``pos`` that hold a real document (not padding, not masked out)."""
    if batch.offsets is None and pos.size and (batch.counts < batch.width).any():
        pos = pos[pos % batch.width < batch.counts[pos // batch.width]]
    if batch.mask.shape[0]:
        pos = pos[batch.mask[pos]]
    return pos


def query_of(batch: Batch, pos):
    """Query index of each flat position (int64)."""
    if batch.offsets is None:
        return pos // max(batch.width, 1)
    return np.searchsorted(batch.offsets, pos, side="right") - 1


def count_at_least(batch: Batch, rel) -> np.ndarray:
    """Per query, the number of real documents with ``label >= rel`` (int64).

    Used to check counts given from outside the row (``n_relevant``) against it.
    """
    labels = batch.labels
    if labels.dtype.kind in "iu":
        # label >= rel  <=>  label >= ceil(rel), compared exactly in the labels' own dtype
        info = np.iinfo(labels.dtype)
        c = math.ceil(rel)
        if c > info.max:
            return np.zeros(batch.n_queries, np.int64)
        hit = labels >= labels.dtype.type(max(c, info.min))
    else:
        hit = labels >= rel
    pos = _real_positions(batch, np.flatnonzero(hit))
    return np.bincount(query_of(batch, pos), minlength=batch.n_queries).astype(np.int64)


def grade_counts(batch: Batch, n_grades: int) -> np.ndarray:
    """Per query and grade ``1 .. n_grades - 1``, the real documents of that grade: (n_queries, n_grades) int64.

    Integer labels only, all below ``n_grades``; column 0 is left at 0 (unjudged
    documents of a run carry label 0, so grade 0 is not comparable with judged counts).
    """
    pos = _real_positions(batch, np.flatnonzero(batch.labels >= 1))
    q = query_of(batch, pos)
    g = batch.labels[pos].astype(np.int64)
    flat = np.bincount(q * n_grades + g, minlength=batch.n_queries * n_grades)
    return flat.reshape(batch.n_queries, n_grades).astype(np.int64)
