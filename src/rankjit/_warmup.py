"""Ahead-of-time compilation of the common kernel signatures (``rankjit.warmup``, ``rankjit warmup``)."""
from __future__ import annotations

import itertools
import time

import numpy as np

from rankjit._kernels import layout as Lay
from rankjit._measures import parse
from rankjit._registry import BY_NAME, EXAMPLES

LABEL_DTYPES = (np.int8, np.int32, np.int64, np.float32, np.float64)
SCORE_DTYPES = (np.float32, np.float64)
#: the measure sets warmed up: one of each list family (the registry's examples: the measure pass
#: of every group, the rank pass that sorts whole rows), nDCG@10 alone (what ``rankjit.ndcg(..., k=10)`` compiles:
#: the graded measure pass, an insertion buffer), and cutoffs deeper than an insertion buffer
#: (35 of the 40 documents of the warm-up rows: the top-d rank pass).  Without padding each set
#: runs on rows of 40 and of LONG_ROW documents: rows of more than 255 documents compile the
#: measure pass with the grade-by-grade count of the ideal DCG (rankjit._kernels.engine.Variant.packed_grades)
#: and, like every row of more than 128 (with padding too), the rank pass with a top-d selection (Variant.select)
LONG_ROW = 256
MEASURE_SETS = (
    EXAMPLES,
    # the same without the set measures, counts and IPrec, without the C/W/L walks and without Compat and
    # Accuracy: the measure pass of most mixes (rankjit._kernels.engine.Variant.sets, .cwl, .extras)
    tuple(e for e in EXAMPLES if BY_NAME[parse(e).family].code not in (Lay.SET, Lay.IPREC, Lay.JUDGMENTS, Lay.CWL,
                                                                       Lay.COMPAT, Lay.ACCURACY)),
    # with the set measures but no C/W/L walk, Compat or Accuracy: mixes of the others with a set measure or a count
    tuple(e for e in EXAMPLES if BY_NAME[parse(e).family].code not in (Lay.CWL, Lay.COMPAT, Lay.ACCURACY)),
    ("nDCG@10",),
    ("P@35", "nDCG@35", "ERR@35"),
)


#: the front ends warmed up besides the engine: each runs once on tiny inputs through its public entry point,
#: which compiles its readers, alignment and own kernels and the engine variants it ranks with (``rankjit trec_eval``:
#: the TREC readers, the default and ``all_trec`` measures, ``-q``, ``-J``, ``-c``; the drop-in front ends of
#: ``rankjit.compat`` and the ir_measures provider, when ir_measures is installed)
FRONT_ENDS = ("trec_eval", "pytrec_eval", "ranx", "ir_measures")



def _dicts(many_valued=False):
    """Warm-up qrels and run as dicts of dicts: 4 queries, rows of 60 documents (longer than the engine's
    insertion buffer and its top-d cutoffs, as real runs are), grades 0-3, judged documents outside the run,
    tied scores.  Fewer than 24 valued documents per row, or with ``many_valued`` every retrieved document
    judged (about 45 valued: the rank pass with pruning, rankjit._kernels.engine.many_valued_rows)."""
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    judged = 90 if many_valued else 50
    for q in range(4):
        docs = [f"d{d}" for d in rng.permutation(200)[:90]]
        qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs[:judged], rng.integers(0, 4, judged))}
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs[30:], rng.integers(0, 40, 60) / 8)}
    return qrels, run


def _trec_eval(argv):
    """The exit code of ``rankjit trec_eval ARGV``, run as ``rankjit.cli.main`` runs it (errors as one line).

    Through the command's own parser, not ``rankjit.cli``: the command line imports this module.
    """
    import argparse

    from rankjit._errors import run_parsed
    from rankjit.io import _cli

    parser = argparse.ArgumentParser(prog="rankjit")
    _cli.register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    return run_parsed(parser.parse_args(["trec_eval", *argv]))


def _front_end_trec_eval():
    for many_valued in (False, True):
        _trec_eval_files(*_dicts(many_valued))


def _trec_eval_files(qrels_dict, run_dict):
    import contextlib
    import io
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rankjit-warmup-") as folder:
        qrels, run = os.path.join(folder, "qrels"), os.path.join(folder, "run")
        with open(qrels, "w") as f:
            f.writelines(f"{q} 0 {d} {g}\n" for q, docs in qrels_dict.items() for d, g in docs.items())
        with open(run, "w") as f:
            f.writelines(f"{q} Q0 {d} {i} {s} warm\n" for q, docs in run_dict.items()
                         for i, (d, s) in enumerate(docs.items()))
        long_scores = os.path.join(folder, "run.long")  # 17 significant digits (Python's repr): pyarrow parses them
        with open(long_scores, "w") as f:
            f.writelines(f"{q} Q0 {d} {i} {s + 1 / 3!r} warm\n" for q, docs in run_dict.items()
                         for i, (d, s) in enumerate(docs.items()))
        try:
            import pyarrow  # noqa: F401
        except ImportError:  # without it such files cannot be read: nothing to compile
            long_scores = None
        # the default set, every measure, judged only, and the single measures scripts ask for most
        for options in ([], ["-q", "-m", "all_trec"], ["-J", "-m", "all_trec"], ["-c", "-m", "all_trec"],
                        ["-m", "map"], ["-m", "ndcg_cut.10"], ["-m", "P.10"], ["-m", "recip_rank"]):
            with contextlib.redirect_stdout(io.StringIO()):
                code = _trec_eval([*options, qrels, run])
            if code:
                raise RuntimeError(f"rankjit trec_eval {' '.join(options)} exited {code} on the warm-up files")
        if long_scores is not None:
            with contextlib.redirect_stdout(io.StringIO()):
                _trec_eval([qrels, long_scores])


def _front_end_pytrec_eval():
    from rankjit.compat import pytrec_eval

    for qrels, run in (_dicts(False), _dicts(True)):
        for judged_only in (False, True):
            evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures,
                                                       judged_docs_only_flag=judged_only)
            evaluator.evaluate(run)


def _front_end_ranx():
    from rankjit.compat import ranx

    for qrels, run in (_dicts(False), _dicts(True)):
        qrels, run = ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run)
        ranx.evaluate(qrels, run, ["ndcg@10", "map", "mrr", "precision@5", "recall@5", "r-precision", "bpref",
                                   "hits@10", "hit_rate@5", "f1@5", "rbp.95", "ndcg_burges@10", "map@100-l2"])


def _front_end_ir_measures():
    try:
        import ir_measures
    except ImportError:  # not installed: nothing of it can be called
        return
    from rankjit.integrations import ir_measures as provider

    # the provider evaluates each provider's measures with ties="pessimistic", then ranks by doc id the queries
    # whose ties mix judgments and evaluates those with ties="stable" (cwl_eval's: the run's order): a mix of
    # the providers' measures, and the measures asked for alone most often (each alone is a measure pass)
    calls = [["nDCG@10", "AP", "P@5", "R@5", "RR", "Rprec", "Judged@10", "ERR@20"],
             ["Bpref", "infAP", "NumRet", "SetF", "IPrec@0.5", "RBP(rel=1)", "nDCG(gains={0:0,1:1,2:3,3:7})@10",
              "SDCG(max_rel=3)@10"],
             ["nDCG@10"], ["AP"], ["P@10"], ["RR@10"], ["ERR@20"]]
    with provider.registered():
        for qrels, run in (_dicts(False), _dicts(True)):
            # tied scores (the queries ranked by doc id) and distinct ones (one pessimistic evaluation)
            distinct = {q: {d: s + 1e-3 * i for i, (d, s) in enumerate(docs.items())} for q, docs in run.items()}
            for scores in (run, distinct):
                for names in calls:
                    ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, scores)
                # the rows' form (named tuples, as ir_measures' readers and ir_datasets give them): read compiled,
                # the doc ids joined as bytes
                rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in scores.items() for d, s in docs.items()]
                judgments = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
                ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in calls[0]], judgments, rows)


def run_front_end(name):
    """Compile (or load from the cache) what the front end ``name`` of :data:`FRONT_ENDS` runs."""
    {"trec_eval": _front_end_trec_eval, "pytrec_eval": _front_end_pytrec_eval, "ranx": _front_end_ranx,
     "ir_measures": _front_end_ir_measures}[name]()


def _front_ends(names):
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in FRONT_ENDS]
    if unknown:
        raise ValueError(f"unknown front end {unknown[0]!r}; valid: {', '.join(FRONT_ENDS)}")
    return list(dict.fromkeys(names))


def jobs(label_dtypes=LABEL_DTYPES, score_dtypes=SCORE_DTYPES, masked=(False, True), average=False,
         ties=("pessimistic",)):
    """The warm-up jobs: one (labels dtype, scores dtype, masked, ties) tuple per engine variant.

    Each tie rule is a variant of its own (``ties``; ``average=True`` adds ``"average"``).
    """
    from rankjit._kernels.ranking import TIES_CODES

    rules = list(dict.fromkeys([*ties, *(["average"] if average else [])]))
    for rule in rules:
        if rule not in TIES_CODES:
            raise ValueError(f"unknown tie rule {rule!r}; valid: {', '.join(TIES_CODES)}")
    return [
        (np.dtype(ld).name, np.dtype(sd).name, bool(m), t)
        for ld, sd, m, t in itertools.product(label_dtypes, score_dtypes, masked, rules)
    ]


def run_job(labels_dtype, scores_dtype, masked, ties):
    """Compile (or load from the cache) the scan and the engine variant of one job."""
    from rankjit._api import evaluate

    rng = np.random.default_rng(0)
    # 40 documents: deeper than an insertion buffer, counted whatever their valued documents; LONG_ROW: the rank
    # pass with a top-d selection (rows of more than 128 documents, Variant.select), padded or not
    for width in (40, LONG_ROW):
        labels = rng.integers(0, 3, (2, width)).astype(labels_dtype)  # many valued documents per row
        scores = rng.random((2, width)).astype(scores_dtype)
        mask = np.ones(labels.shape, dtype=bool) if masked else None
        # without padding, shallow cutoffs compile the rank pass with pruning for rows of many valued
        # documents and without it for others (rankjit._kernels.engine.many_valued_rows): both
        few_valued = (labels * (rng.random(labels.shape) < 0.1)).astype(labels_dtype)
        for measures in MEASURE_SETS:
            # ties="average": not the families without an exact expectation (ERR, pFound, IPrec)
            names = [m for m in measures if ties != "average" or BY_NAME[parse(m).family].ties_average]
            for rows in (labels,) if masked else (labels, few_valued):
                evaluate(rows, scores, names, mask=mask, ties=ties, per_query=True)


def warmup(label_dtypes=LABEL_DTYPES, score_dtypes=SCORE_DTYPES, verbose=False, *, masked=(False, True),
           average=False, ties=("pessimistic",), front_ends=FRONT_ENDS):
    """Compile (or load from the on-disk cache) the engine for the common dtypes, and the front ends.

    Runs the list measures (each set of ``MEASURE_SETS``) once per (labels dtype,
    scores dtype) pair, with and without a mask, for each tie rule of ``ties`` (each rule
    is a variant of its own; ``average=True`` adds ``ties="average"``), on a tiny
    batch; then each front end of ``front_ends`` (default: all of :data:`FRONT_ENDS`:
    ``rankjit trec_eval``, ``rankjit.compat.pytrec_eval``, ``rankjit.compat.ranx`` and the
    ir_measures provider) once on tiny inputs.  Returns the seconds it took.
    ``rankjit warmup`` does the same in parallel processes with a progress bar.

    Examples
    --------
    >>> import numpy as np, rankjit
    >>> seconds = rankjit.warmup(label_dtypes=(np.int8,), score_dtypes=(np.float32,), masked=(False,),
    ...                          front_ends=())
    """
    t0 = time.perf_counter()
    names = _front_ends(front_ends)
    for job in jobs(label_dtypes, score_dtypes, masked, average, ties):
        run_job(*job)
        if verbose:
            print("compiled labels {}, scores {}, masked {}, ties {}".format(*job))
    for name in names:
        run_front_end(name)
        if verbose:
            print(f"compiled the front end {name}")
    return time.perf_counter() - t0


# ---- `rankjit warmup` --------------------------------------------------------------------

HELP = "compile the common kernels ahead of time, in parallel processes, into Numba's cache"


def register(subparsers):
    p = subparsers.add_parser(
        "warmup",
        help=HELP,
        description=(
            "Compile rankjit's engine for the common dtypes ahead of time (every list measure, with and without "
            "padding), so that the first real call loads compiled code from the cache. Set NUMBA_CACHE_DIR to "
            "fill a cache that Dask workers, CI jobs or containers then share."
        ),
    )
    p.add_argument("--labels", default="int8,int32,int64,float32,float64",
                   help="comma-separated labels dtypes (default: %(default)s)")
    p.add_argument("--scores", default="float32,float64", help="comma-separated scores dtypes (default: %(default)s)")
    p.add_argument("--ties", default="pessimistic",
                   help="comma-separated tie rules, each compiled on its own (default: %(default)s; "
                        "rankjit trec_eval ranks by 'stable')")
    p.add_argument("--average", action="store_true", help='also compile ties="average"')
    p.add_argument("--no-mask", action="store_true", help="skip the variants for padded (masked) batches")
    p.add_argument("--front-ends", default=",".join(FRONT_ENDS),
                   help="comma-separated front ends to compile too, each in a process of its own "
                        "(default: %(default)s; 'none': the engine only)")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="parallel processes (default: the number of CPUs, at most the number of jobs)")
    p.set_defaults(func=_main)


def _dtypes(text, what):
    from rankjit._errors import CommandError

    out = []
    for name in filter(None, (t.strip() for t in text.split(","))):
        try:
            out.append(np.dtype(name))
        except TypeError:
            raise CommandError(f"--{what}: unknown dtype {name!r}") from None
    if not out:
        raise CommandError(f"--{what}: no dtype given")
    return out


def _serialise_cache_writes():
    """In a warm-up worker process: one process at a time adds an entry to a cache index.

    Numba numbers a new cache entry after reading the index, so two processes adding
    entries to the same index at once can both write data file 1, and one index can then
    point at the other's code.  The workers compile the same helper kernels, so each
    entry is added under an exclusive lock on a file beside the index.  This patches
    Numba only inside the warm-up's own worker processes.
    """
    import fcntl

    from numba.core import caching

    save = caching.IndexDataCacheFile.save

    def locked_save(self, key, data):
        with open(self._index_path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                save(self, key, data)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    caching.IndexDataCacheFile.save = locked_save


def _run_group(group):
    """Worker process: the jobs of one (padding, tie rule) group one after the other, or one front end."""
    t0 = time.perf_counter()
    for job in group:
        if isinstance(job, str):
            run_front_end(job)
        else:
            run_job(*job)
    return time.perf_counter() - t0


def _main(args):
    import os
    import sys
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    from rankjit._errors import CommandError

    if args.jobs is not None and args.jobs < 1:
        raise CommandError(f"--jobs must be >= 1, got {args.jobs}")
    rules = [t.strip() for t in args.ties.split(",") if t.strip()]
    try:
        todo = jobs(_dtypes(args.labels, "labels"), _dtypes(args.scores, "scores"),
                    (False,) if args.no_mask else (False, True), args.average, rules)
    except ValueError as err:
        raise CommandError(f"--ties: {err}") from None
    try:
        front_ends = [] if args.front_ends.strip() == "none" else _front_ends(args.front_ends.split(","))
    except ValueError as err:
        raise CommandError(f"--front-ends: {err}") from None
    # one group per (masked, ties): a group compiles its variants for every dtype pair in turn; one group per
    # front end (the workers add cache entries under a lock: _serialise_cache_writes)
    groups = {}
    for job in todo:
        groups.setdefault(job[2:], []).append(job)
    for name in front_ends:
        groups[(None, name)] = [name]
    n_proc = min(args.jobs or os.cpu_count() or 1, len(groups))
    try:
        import fcntl  # noqa: F401 - the workers lock cache writes with it
    except ImportError:  # pragma: no cover - not on POSIX: one process
        n_proc = 1
    cache = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside rankjit's modules"
    print(f"rankjit warmup: {len(todo) + len(front_ends)} jobs in {len(groups)} groups on {n_proc} processes; "
          f"cache: {cache}", file=sys.stderr)
    t0 = time.perf_counter()
    bar = _progress(len(groups))
    with ProcessPoolExecutor(n_proc, mp_context=get_context("spawn"),
                             initializer=_serialise_cache_writes if n_proc > 1 else None) as pool:
        futures = {pool.submit(_run_group, g): key for key, g in groups.items()}
        for fut in as_completed(futures):
            masked, what = futures[fut]
            seconds = fut.result()
            if masked is None:
                bar(f"front end {what}: {seconds:.1f} s")
            else:
                bar(f"{'padded' if masked else 'dense'} batches, ties={what}: {seconds:.1f} s")
    print(f"rankjit warmup: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _progress(total):
    """A progress bar on stderr: tqdm when installed, else one line per step."""
    import sys

    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=total, file=sys.stderr, unit="group", desc="rankjit warmup")

        def step(text):
            bar.set_postfix_str(text)
            bar.update(1)
            if bar.n >= total:
                bar.close()

        return step
    done = [0]

    def step(text):
        done[0] += 1
        print(f"[{done[0]}/{total}] {text}", file=sys.stderr)

    return step
