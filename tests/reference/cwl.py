"""Plain-Python references for ir_measures' C/W/L measures (provider ``cwl_eval``) and for Compat and Accuracy.

Each function computes the value of ONE query from its ranked labels (rank 1 first; ``None`` = unjudged document),
written from the definitions (papers below, and the classes of the ``cwl-eval`` 1.0.12 package that ir_measures 0.4.3
calls), for checking rankjit's kernels. Slow on purpose: loops, no numpy.

C/W/L framework (Moffat et al. 2013; Azzopardi, Thomas & Moffat, SIGIR 2019, "cwl_eval")
-----------------------------------------------------------------------------------------
A measure is given by its continuation probabilities C_i (probability that a user at rank i goes on to rank i+1).
The weight of rank i is W_i = prod_{j<i} C_j / sum_{k=1..N} prod_{j<k} C_j and the value ir_measures reports is the
expected utility per item EU = sum_{i=1..N} W_i g_i.  Conventions of cwl_eval as ir_measures drives it:

* horizon N = 1000 (``max_n``): the ranking is cut to its first 1000 documents and padded with gain-0 documents up to
  exactly 1000 ranks; the normaliser sum_k prod_{j<k} C_j runs over all 1000 ranks, past the end of a short run too.
  C_N (the last rank's) is never used.
* gains: g = (clip(max(grade, 0), min_rel, max_rel) - min_rel) / (max_rel - min_rel), in [0, 1]; negative grades
  become 0 first (trec_eval's convention), then grades are clipped to [min_rel, max_rel] (ir_measures only logs a
  warning for grades outside the range).  An unjudged document gets gain 0 (cwl's ``min_gain``), even when
  min_rel < 0, where a judged grade 0 gets the positive gain -min_rel / (max_rel - min_rel).  min_rel < max_rel is
  asserted by ir_measures (AssertionError).
* cost of every document is 1 (no cost file), so BPM's cost budget K is a number of documents.
* no ideal ranking and no count of relevant documents enters any of these measures: a query with no relevant
  document retrieved gets 0 (EU of an all-zero gain vector), and the judged labels are not needed.
* queries: a query of the qrels absent from the run gets 0 (ir_measures' ``Measure.DEFAULT``); a query of the run
  absent from the qrels is skipped (no value).  ir_measures groups the run's rows by *consecutive* query id, so a run
  whose rows of one query are not contiguous yields that query more than once (one value per contiguous block).
* ties: ir_measures sorts each query's rows with Python's stable ``sorted(key=score, reverse=True)``, so documents
  with equal scores keep the order in which they appear in the run (file order) -- NOT trec_eval's docno-descending
  order.  Build the ranked labels that way to reproduce ir_measures.

Design note for the engine: what each measure needs from the ranked list (rank i = 1..N, N = min(1000, ...))
-----------------------------------------------------------------------------------------------------------
All are "weighted precision" sum_i W_i g_i with a normaliser over the 1000-rank horizon.  Let g_i be the rescaled
gain (a by-grade value table, as ``label_value``) and CG_i = sum_{j<=i} g_j the cumulative gain.

* SDCG@k: fixed per-rank weights 1/log2(i+1) for i <= min(k, 1000), divided by their sum: a DCG with a per-rank
  weight table (``_graded.dcg``) and a constant normaliser (no ideal list).  Only documents with g > 0 matter.
* INSQ(T): C_i = ((i + 2T - 1) / (i + 2T))^2 depends on the rank only: fixed weights prod_{j<i} C_j over the horizon,
  normaliser a constant: again a DCG with a per-rank weight table.  Only documents with g > 0 matter.
* BPM(T, K=cutoff): C_i = 1 while CG_i < T and i < K, else 0: stopping rank n = min(first i with CG_i >= T, K, 1000),
  value CG_n / n.  Needs a stopping target on the cumulative gain (like a "gain target") plus the rank of the stop;
  zero-gain documents matter only through the rank (n = K or 1000 when T is never reached).
* INST(T): C_i = ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - CG_i: a per-rank continuation that depends on
  the rank and CG_i.  The weights prod_{j<i} C_j are a running product (cascade-like), and the normaliser sums them
  over ALL 1000 ranks, including the zero-gain ranks and the padding past the run: between two gain-carrying ranks
  CG is constant, so a kernel may step over the zero-gain ranks only with a per-rank loop or a closed form.
* NERR8@k: C_i = 1 - g_i for i < k, 0 from k on.  NERR9@k: C_i = i/(i+1) (1 - g_i) for i < k.
  NERR10(p): C_i = p (1 - g_i).  NERR11(T): C_i = ((i + 2T - 1)/(i + 2T))^2 (1 - g_i).
  A cascade of stopping probabilities g_i (``_cascade.cascade``'s prod (1 - R_j)) times a per-rank factor, but
  normalised by the sum of the running products over the horizon (NERR8/9: over ranks 1..min(k, 1000); NERR10/11:
  over all 1000 ranks, padding included), so it needs the per-rank running product at every rank, not only at
  gain-carrying ones.
* Compat(p, normalize): rank-biased overlap between the run and an ideal ranking of the relevant documents (needs
  the judged labels of the query and the run's scores: see ``compat``).
* Accuracy(cutoff, rel): pairs (relevant above non-relevant) among the top ``cutoff`` documents; needs the count
  of non-relevant documents above each relevant one (see ``accuracy``).
"""
import math

HORIZON = 1000  # cwl_eval's max_n, as ir_measures sets it


def gain(grade, min_rel, max_rel):
    """Rescaled gain of one document: (clip(max(grade, 0), min_rel, max_rel) - min_rel) / (max_rel - min_rel).

    ``grade=None`` (unjudged) gives 0.0.  Negative grades count as 0 before clipping (trec_eval's convention, applied
    by ir_measures' cwl provider).
    """
    if grade is None:
        return 0.0
    g = max(float(grade), 0.0)
    g = min(max(g, min_rel), max_rel)
    return (g - min_rel) / (max_rel - min_rel)


def _gains(ranked, min_rel, max_rel):
    """Gains of the first 1000 ranks: the ranked list cut at 1000 and padded with 0.0 up to exactly 1000."""
    gs = [gain(x, min_rel, max_rel) for x in list(ranked)[:HORIZON]]
    return gs + [0.0] * (HORIZON - len(gs))


def cwl_expected_utility(gains, continuation):
    """EU = sum_i W_i g_i, W_i = prod_{j<i} C_j / sum_k prod_{j<k} C_j over the ranks of ``gains``.

    ``continuation(i, g_i, CG_i)`` gives C_i for rank i (1-based), the gain at i and the cumulative gain up to i.
    """
    reach = []  # prod_{j<i} C_j for i = 1..N
    prod = 1.0
    cg = 0.0
    for i, g in enumerate(gains, start=1):
        reach.append(prod)
        cg += g
        prod *= continuation(i, g, cg)
    total = sum(reach)
    return sum(r * g for r, g in zip(reach, gains)) / total


def sdcg(ranked, cutoff, max_rel, min_rel=0, dcg="log2"):
    """SDCG@cutoff, scaled DCG: sum_{i<=k} g_i / log2(i+1) divided by sum_{i<=k} 1 / log2(i+1), k = min(cutoff, 1000).

    Source: Jarvelin & Kekalainen (2002) discount, normalised as a C/W/L weight distribution (cwl ``NDCGCWLMetric``:
    C_i = log(i+1)/log(i+2) for i < k, 0 after, so prod_{j<i} C_j = 1/log2(i+1)).  The normaliser is the sum of the
    discounts, not an ideal DCG: it is as if ``cutoff`` fully relevant documents existed.  No relevant document: 0.
    Only ``dcg='log2'`` exists.
    """
    if dcg != "log2":
        raise ValueError("SDCG: only dcg='log2' is defined")
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: math.log2(i + 1) / math.log2(i + 2) if i < cutoff else 0.0)


def insq(ranked, max_rel, min_rel=0, T=1.0):
    """INSQ(T): C/W/L with C_i = ((i + 2T - 1) / (i + 2T))^2, independent of the gains.

    Source: Moffat, Scholer & Thomas, ADCS 2012 ("Models and metrics: IR evaluation as a user process"); cwl
    ``INSQCWLMetric``.  Normalised over the 1000-rank horizon.  No relevant document: 0.
    """
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: ((i + 2 * T - 1) / (i + 2 * T)) ** 2)


def inst(ranked, max_rel, min_rel=0, T=1.0):
    """INST(T): C/W/L with C_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - CG_i (gain still wanted after i).

    Source: Moffat, Bailey, Scholer & Thomas, ADCS 2015 ("INST: an adaptive metric for information retrieval
    evaluation"); cwl ``INSTCWLMetric``.  Normalised over the 1000-rank horizon.  No relevant document: 0.
    For T < 0.5 the ratio can be negative and its square exceed 1 (C_1 = 16 for T = 0.1, g_1 = 1): the formula is
    applied as written, as cwl does.
    """
    gs = _gains(ranked, min_rel, max_rel)

    def cont(i, g, cg):
        x = i + T + (T - cg)
        return ((x - 1) / x) ** 2

    return cwl_expected_utility(gs, cont)


def bpm(ranked, cutoff, max_rel, min_rel=0, T=1.0):
    """BPM@cutoff (static Bejeweled Player Model): CG_n / n, n = min(first i with CG_i >= T, cutoff, 1000).

    The user reads until the cumulative gain reaches T or the cost budget K = cutoff documents is spent (C_i = 1
    while CG_i < T and i < K, else 0), every document read weighing 1/n.  Source: Zhang et al., SIGIR 2017
    ("Evaluating web search with a bejeweled player model"), static version, as cwl ``BPMCWLMetric(T, K)`` with unit
    costs.  Gain past T is not capped.  No relevant document: 0 (n = min(cutoff, 1000)).
    """
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: 1.0 if (cg < T and i < cutoff) else 0.0)


def nerr8(ranked, cutoff, max_rel, min_rel=0):
    """NERR8@cutoff (NERR Eq. 8): C/W/L with C_i = 1 - g_i for i < k, 0 for i >= k (k = cutoff).

    Source: Azzopardi, Mackenzie & Moffat, ICTIR 2021 ("ERR is not C/W/L"), Eq. 8; cwl ``NERReq8CWLMetric``.
    W is normalised over ranks 1..min(k, 1000).  No relevant document: 0.
    """
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: 1.0 - g if i < cutoff else 0.0)


def nerr9(ranked, cutoff, max_rel, min_rel=0):
    """NERR9@cutoff (NERR Eq. 9): C_i = i/(i+1) (1 - g_i) for i < k, 0 for i >= k.

    Source: Azzopardi, Mackenzie & Moffat, ICTIR 2021, Eq. 9 (the 1/i discount of RR folded into C); cwl
    ``NERReq9CWLMetric``.  No relevant document: 0.
    """
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: i / (i + 1) * (1.0 - g) if i < cutoff else 0.0)


def nerr10(ranked, max_rel, min_rel=0, p=0.9):
    """NERR10(p) (NERR Eq. 10): C_i = p (1 - g_i) at every rank (RBP patience times ERR's stopping).

    Source: Azzopardi, Mackenzie & Moffat, ICTIR 2021, Eq. 10; cwl ``NERReq10CWLMetric``.  Normalised over the
    1000-rank horizon.  No relevant document: 0.
    """
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: p * (1.0 - g))


def nerr11(ranked, max_rel, min_rel=0, T=1.0):
    """NERR11(T) (NERR Eq. 11): C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i) (INSQ's patience times ERR's stopping).

    Source: Azzopardi, Mackenzie & Moffat, ICTIR 2021, Eq. 11; cwl ``NERReq11CWLMetric``.  Normalised over the
    1000-rank horizon.  No relevant document: 0.
    """
    gs = _gains(ranked, min_rel, max_rel)
    return cwl_expected_utility(gs, lambda i, g, cg: ((i + 2 * T - 1) / (i + 2 * T)) ** 2 * (1.0 - g))


def accuracy(ranked, rel=1, cutoff=None):
    """Accuracy@cutoff: 1 - (sum over relevant d in the top k of #non-relevant above d) / (N_k R_k).

    Among the top k documents (k = cutoff, all when None or 0), R_k relevant (grade >= rel; unjudged = grade 0) and
    N_k non-relevant: the fraction of (relevant, non-relevant) pairs in which the relevant one ranks first.  Source:
    ir_measures' ``accuracy`` provider (no paper).  Returns None when R_k = 0: ir_measures then reports nothing for
    the query, as it does for a query absent from the qrels or from the run (no default 0, unlike the other
    providers).  ir_measures raises ZeroDivisionError when N_k = 0 and R_k > 0 (raised here too).
    Ties: same stable order as the cwl measures (run order among equal scores).
    """
    top = list(ranked) if not cutoff else list(ranked)[:cutoff]
    nonrel_above = 0
    pairs_wrong = 0
    n_rel = 0
    for x in top:
        if (0 if x is None else x) >= rel:
            n_rel += 1
            pairs_wrong += nonrel_above
        else:
            nonrel_above += 1
    if n_rel == 0:
        return None
    return 1.0 - pairs_wrong / (nonrel_above * n_rel)


def compat(ranked_docs, scores, qrels, p=0.95, normalize=True):
    """Compat(p, normalize): rank-biased overlap between the run and an ideal ranking (Clarke, Vtyurina & Smucker,
    TOIS 2021, "Assessing top-k preferences"; ir_measures' ``compat`` provider).

    ``ranked_docs``: the run's docnos; ``scores``: docno -> score; ``qrels``: docno -> grade (in qrels order).
    Run order: score descending, ties by docno ascending (unlike trec_eval and unlike the cwl measures; all
    retrieved documents, no 1000 cut).  Ideal: the documents with grade > 0, by grade descending, then by run score
    descending with 0.0 for an unretrieved document (so an unretrieved relevant document precedes a retrieved one of
    the same grade with a negative score), then qrels order.  With D = max(len(run), len(ideal)):
    RBO = sum_{d=1..D} p^(d-1) |run[:d] & ideal[:d]| / d  /  sum_{d=1..D} p^(d-1);
    normalize=True divides by RBO(ideal, ideal) when that is > 0.  No relevant document: 0.
    """
    run = sorted(sorted(ranked_docs), key=lambda d: scores[d], reverse=True)
    ideal = [d for d in qrels if qrels[d] > 0]
    ideal.sort(key=lambda d: scores.get(d, 0.0), reverse=True)
    ideal.sort(key=lambda d: qrels[d], reverse=True)
    depth = max(len(run), len(ideal))

    def rbo(a, b):
        seen_a, seen_b = set(), set()
        overlap = 0  # |a[:d] & b[:d]|, updated with the d-th item of each list
        num = den = 0.0
        for d in range(1, depth + 1):
            x = a[d - 1] if d <= len(a) else None
            y = b[d - 1] if d <= len(b) else None
            if x is not None:
                seen_a.add(x)
                overlap += x in seen_b
            if y is not None:
                seen_b.add(y)
                overlap += y in seen_a
            w = p ** (d - 1)
            num += w * overlap / d
            den += w
        return num / den if den > 0 else 0.0

    score = rbo(run, ideal)
    if normalize:
        best = rbo(ideal, ideal)
        if best > 0:
            score = score / best
    return score
