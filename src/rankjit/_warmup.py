"""Ahead-of-time compilation of the common kernel signatures."""
from __future__ import annotations

import time

import numpy as np

LABEL_DTYPES = (np.int8, np.int32, np.int64, np.float32, np.float64)
SCORE_DTYPES = (np.float32, np.float64)


def warmup(label_dtypes=LABEL_DTYPES, score_dtypes=SCORE_DTYPES, verbose=False):
    """Compile (or load from the on-disk cache) every kernel for the common dtypes.

    Runs the serial and parallel drivers once per (labels dtype, scores dtype) pair
    on a tiny batch.  Returns the seconds it took.

    Examples
    --------
    >>> import rankjit
    >>> seconds = rankjit.warmup(label_dtypes=(np.int8,), score_dtypes=(np.float32,))
    """
    from rankjit import _api, _config, _engine, _validation
    from rankjit import _measures

    t0 = time.perf_counter()
    names = ["P@5", "R@5", "Success@5", "RR", "AP", "Rprec", "DCG@5", "nDCG@5", "ERR@5", "pFound"]
    for ld in label_dtypes:
        for sd in score_dtypes:
            labels = np.array([[0, 1, 2, 0], [1, 0, 0, 0]], dtype=ld)
            scores = np.array([[0.5, 0.2, 0.9, 0.1], [0.3, 0.3, 0.1, 0.0]], dtype=sd)
            for mask in (None, np.ones_like(labels, dtype=bool)):
                batch = _validation.as_batch(labels, scores, mask=mask)
                for parallel in (False, True):
                    _validation.run_scan(batch, True, parallel)
                _validation.scan(batch)
                parsed = [_measures.parse(n) for n in names]
                resolved = [_measures.resolve(m, {}) for m in parsed]
                plan = _measures.build_plan(parsed, resolved, batch, 0, None)
                out = np.empty((len(parsed), 2))
                args = _api.kernel_args(batch, plan, 0, batch.scores, np.zeros(0, np.int64), None, True)
                for kernel in (_engine.score_serial, _engine.score_parallel):
                    kernel(*args, np.full(1, -1, np.int64), out)
                    if verbose:
                        print(f"compiled {kernel.__name__} for labels {np.dtype(ld)}, scores {np.dtype(sd)}")
                sargs = _api.kernel_args(batch, plan, 0, batch.scores.reshape(1, -1), np.zeros(0, np.int64), None,
                                         True)
                _engine.score_systems_parallel(*sargs, np.full(1, -1, np.int64), out.reshape(1, *out.shape))
    del _config
    return time.perf_counter() - t0
