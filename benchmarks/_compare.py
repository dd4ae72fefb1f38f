"""What the three ``bench_compat_*.py`` benchmarks share: data, timing, interleaving and medians (not a test).

* :func:`synthetic`: the synthetic qrels and run dicts (``n_docs`` retrieved per query, 30
  judgments per query, 20 of them on retrieved documents, grades -1..3).
* :func:`timed`: one call's wall-clock and process CPU time.
* :func:`interleaved`: the order of the libraries in each repeat (every order in turn, so
  that none always runs first, or just after another).
* :func:`medians` and :func:`ratio`: medians of (wall, CPU) pairs, and the ratio of two.
* :func:`parser` and :func:`datasets`: the options they share and the data sets they read.
* :class:`ReadFloor`: the reads any evaluator of dicts of dicts written in Python must
  make, and nothing else (the benchmarks' ``floor`` lines).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import statistics
import time
from pathlib import Path

import numpy as np

#: the shared data folder (holds web2012/ and trec_eval/)
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def synthetic(n_queries, n_docs, seed=0, distinct=False):
    """(qrels, run) dicts: ``n_docs`` retrieved per query, 20 of them judged plus 10 judged unretrieved.

    Scores have 3 decimals, so some tie (``distinct=True``: uniform random, no ties);
    grades are drawn from -1, 0, 0, 0, 1, 1, 2, 3.
    """
    rng = np.random.default_rng(seed)
    doc_num = rng.permutation(10 * n_queries * n_docs)[: n_queries * (n_docs + 10)].reshape(n_queries, n_docs + 10)
    if distinct:
        scores = rng.random((n_queries, n_docs)).tolist()
    else:
        scores = np.round(rng.normal(size=(n_queries, n_docs)) * 10, 3).tolist()
    grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=(n_queries, 30)).tolist()
    run, qrels = {}, {}
    for q in range(n_queries):
        docs = [f"clueweb-{d:09d}" for d in doc_num[q].tolist()]
        qid = str(1000 + q)
        run[qid] = dict(zip(docs[:n_docs], scores[q]))
        judged = [docs[i] for i in rng.choice(n_docs, 20, replace=False).tolist()] + docs[n_docs:]
        qrels[qid] = dict(zip(judged, grades[q]))
    return qrels, run


def timed(fn):
    """``((wall-clock s, process CPU s), fn())``, after a garbage collection."""
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - w, time.process_time() - c), out


def interleaved(names, repeat):
    """The order in which ``names`` run in repeat number ``repeat``, from a Williams design: over
    ``n`` repeats for ``n`` names (``2n`` when ``n`` is odd), each name runs just after each other
    one equally often, and in each place equally often (what ran just before changes a library's
    time: memory it freed is faulted in again, caches are cold).  Two names alternate.

    >>> [interleaved("abc", r) for r in range(6)]
    [['a', 'b', 'c'], ['b', 'c', 'a'], ['c', 'a', 'b'], ['c', 'b', 'a'], ['a', 'c', 'b'], ['b', 'a', 'c']]
    """
    names = list(names)
    n = len(names)
    first = [0]  # 0, 1, n - 1, 2, n - 2, ...: each difference between neighbours once (mod n)
    lo, hi = 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(i + r) % n for i in first] for r in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    return [names[i] for i in rows[repeat % len(rows)]]


@contextlib.contextmanager
def paused_gc():
    """The cyclic garbage collector paused in the block (if it runs)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class ReadFloor:
    """The reads an evaluator of ``{query: {document: value}}`` dicts must make, and nothing else.

    ``ReadFloor(qrels)`` reads every grade and keeps the ids of the relevant documents
    (grade >= ``relevance_level``: every measure needs their ranks); ``.evaluate(run,
    keys)`` reads every score, joins the run with the qrels and builds ``{query: {key:
    0.0}}``.  The join takes one of two ways (``join``): ``"judged"``, one ``dict.get`` per
    relevant document in the run's dict of its query (its score, hence its rank: few
    lookups, in large dicts), or ``"run"``, one per retrieved document in the qrels' dict of
    its query (many lookups, in small dicts).  :func:`fastest_join` picks the faster on the
    data.  Each read uses the fastest C-level iteration we know (``np.fromiter`` over
    ``chain`` / ``map``), a block of about :attr:`BLOCK_DOCS` documents at a time (the
    block's scores, then its lookups while its dicts are in the processor's cache), with the
    cyclic garbage collector paused (as rankjit's front ends read); no measure is computed.  So an evaluator that reads the caller's
    dicts from Python (rankjit's run-time dependencies are NumPy and Numba alone) cannot
    take less time: a peer's time over the floor's is the largest ratio such a front end
    can reach.  The run must hold the qrels' queries in their order (as the benchmarks'
    data sets do).
    """

    BLOCK_DOCS = 4096

    def __init__(self, qrels, relevance_level=1, join="judged"):
        with paused_gc():
            self._read(qrels, relevance_level, join)

    def _read(self, qrels, relevance_level, join):
        dicts = list(qrels.values())
        self.join = join
        grades = np.fromiter(itertools.chain.from_iterable(map(dict.values, dicts)), dtype=np.int64)
        if join == "run":
            self.dicts = dicts
        else:
            relevant = grades >= relevance_level
            self.ids = list(itertools.compress(itertools.chain.from_iterable(dicts), relevant.tobytes()))
            seen = np.zeros(relevant.shape[0] + 1, dtype=np.int64)  # relevant documents before each judgment
            np.cumsum(relevant, out=seen[1:])
            bounds = np.zeros(len(dicts) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts)), out=bounds[1:])
            self.starts = seen[bounds].tolist()  # query i's relevant documents: ids[starts[i]:starts[i + 1]]
            self.per_query = np.diff(seen[bounds]).tolist()
        self.qids = list(qrels)

    def evaluate(self, run, keys):
        with paused_gc():
            return self._evaluate(run, keys)

    def _evaluate(self, run, keys):
        qids = list(run)
        dicts = list(run.values())
        if qids != self.qids:
            raise NotImplementedError("the read floor needs the qrels' queries, in their order")
        chain = itertools.chain.from_iterable
        # a block of queries at a time (about BLOCK_DOCS documents): its scores, then its lookups while its dicts
        # are still in the processor's cache (as rankjit's readers do)
        b = 0
        while b < len(dicts):
            e, n = b, 0
            while e < len(dicts) and n < self.BLOCK_DOCS:
                n += len(dicts[e])
                e += 1
            block = dicts[b:e]
            np.fromiter(chain(map(dict.values, block)), dtype=np.float64, count=n)
            if self.join == "run":  # each retrieved document's grade (-1: not judged)
                getters = map(dict.get.__get__, self.dicts[b:e])
                np.fromiter(chain(map(map, getters, block, itertools.repeat(itertools.repeat(-1)))), dtype=np.int64,
                            count=n)
            else:  # each relevant document's score (0.0: not retrieved)
                lo, hi = self.starts[b], self.starts[e]
                per_doc = chain(map(itertools.repeat, block, self.per_query[b:e]))
                np.fromiter(map(dict.get, per_doc, self.ids[lo:hi], itertools.repeat(0.0)),
                            dtype=np.float64, count=hi - lo)
            b = e
        return dict(zip(qids, map(dict.fromkeys, itertools.repeat(keys), itertools.repeat(0.0))))


class CompiledReadFloor:
    """The same reads as :class:`ReadFloor`, made by rankjit's compiled passes over the dicts, and nothing else.

    ``CompiledReadFloor(qrels)`` reads every grade and the address of every judged document
    id in one compiled pass (``rankjit.io._dicts.int64_values_and_keys``, which reads the
    caller's dicts through CPython's C API) and keeps the addresses of the relevant ones;
    ``.evaluate(run, keys)`` reads every score and looks each relevant document up in its
    query's dict in one compiled pass (``rankjit.io._dicts.scores_and_lookups``), then builds
    ``{query: {key: 0.0}}``.  No copy, no check, no coding of the grades, no measure: a peer's
    time over this floor's is the largest ratio a front end built on these passes can reach.
    The qrels are held (the addresses are borrowed from their dicts); the run must hold the
    qrels' queries in their order.
    """

    def __init__(self, qrels, relevance_level=1):
        from rankjit.io._dicts import int64_values_and_keys

        with paused_gc():
            self.dicts = list(qrels.values())
            lens = np.fromiter(map(len, self.dicts), dtype=np.int64, count=len(self.dicts))
            grades, addresses = int64_values_and_keys(self.dicts, lens)
            if addresses is None:
                raise NotImplementedError("the compiled floor needs int grades and str ids, and the JIT")
            relevant = grades >= relevance_level
            self.looked_up = addresses[relevant]
            seen = np.zeros(relevant.shape[0] + 1, dtype=np.int64)
            np.cumsum(relevant, out=seen[1:])
            bounds = np.zeros(len(self.dicts) + 1, dtype=np.int64)
            np.cumsum(lens, out=bounds[1:])
            self.j_off = seen[bounds]
            self.qids = list(qrels)

    def evaluate(self, run, keys):
        from rankjit.io._dicts import scores_and_lookups

        with paused_gc():
            qids = list(run)
            if qids != self.qids:
                raise NotImplementedError("the compiled floor needs the qrels' queries, in their order")
            dicts = list(run.values())
            offsets = np.zeros(len(dicts) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts)), out=offsets[1:])
            if scores_and_lookups(dicts, offsets, self.looked_up, self.j_off) is None:
                raise NotImplementedError("the compiled floor needs float scores")
            return dict(zip(qids, map(dict.fromkeys, itertools.repeat(keys), itertools.repeat(0.0))))


def fastest_join(qrels, run, repeats=3):
    """The faster :class:`ReadFloor` join on these dicts (``"judged"`` or ``"run"``): the smaller median time."""
    best = {}
    for join in ("judged", "run"):
        best[join] = statistics.median(
            timed(lambda j=join: ReadFloor(qrels, join=j).evaluate(run, ()))[0][0] for _ in range(repeats))
    return min(best, key=best.get)


def medians(times):
    """``(median wall-clock, median CPU)`` of a list of ``(wall, CPU)`` pairs."""
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def ratio(base, ours):
    """``(wall ratio, CPU ratio)``: the medians of ``base`` over those of ``ours`` (lists of (wall, CPU))."""
    (bw, bc), (ow, oc) = medians(base), medians(ours)
    return bw / ow, bc / oc


def parser(doc, repeats):
    """An argument parser with the options every benchmark takes: --queries, --docs, --repeats, --data, --only."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="the shared data folder (holds web2012/)")
    ap.add_argument("--only", choices=["web2012", "synthetic"], help="one data set")
    return ap


def datasets(args, web2012):
    """``[(name, qrels, run)]``: Web 2012 (``web2012(args.data)``, when found) and the synthetic data, per --only."""
    out = []
    if args.only in (None, "web2012"):
        if (Path(args.data) / "web2012").is_dir():
            out.append(("web2012", *web2012(args.data)))
        else:
            print(f"web2012/ not found in {args.data}: skipped")
    if args.only in (None, "synthetic"):
        t = time.perf_counter()
        out.append((f"synthetic {args.queries}x{args.docs}", *synthetic(args.queries, args.docs)))
        print(f"generated the synthetic data in {time.perf_counter() - t:.1f} s", flush=True)
    return out
