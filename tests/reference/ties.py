"""The one tie rule of every reference in this package.

Documents are ranked by score, descending; equal scores are ordered by the tie rule:

* ``"pessimistic"``: the lower tie label first (the worse document for the measure), then input order;
* ``"optimistic"``: the higher tie label first, then input order;
* ``"stable"``: input order.

The tie label is the document's grade for list measures and preference measures, and its
number of nuggets for diversity measures.  ``ties="average"`` is the exact expectation over
every order of the tied documents, by brute force (:func:`average_rankings`).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter

DETERMINISTIC = ("pessimistic", "optimistic", "stable")


def order(scores, tie_labels, ties="pessimistic"):
    """Indices of the documents in rank order (rank 1 first) under a deterministic tie rule."""
    n = len(scores)
    if ties == "pessimistic":
        key = lambda i: (-scores[i], tie_labels[i], i)  # noqa: E731
    elif ties == "optimistic":
        key = lambda i: (-scores[i], -tie_labels[i], i)  # noqa: E731
    elif ties == "stable":
        key = lambda i: (-scores[i], i)  # noqa: E731
    else:
        raise ValueError(f"order() takes a deterministic tie rule, got {ties!r}")
    return sorted(range(n), key=key)


def ranks(scores, tie_labels, retrieved, ties, k=None):
    """Rank (1-based) of every retrieved document in rank order; ``inf`` if not retrieved or below ``k``."""
    docs = [j for j in order(scores, tie_labels, ties) if retrieved[j]]
    out = [math.inf] * len(scores)
    for r, j in enumerate(docs, start=1):
        if k is None or r <= k:
            out[j] = r
    return out


#: the brute-force "average" rule refuses more tie arrangements than this
MAX_ARRANGEMENTS = 50_000


def tie_groups(scores):
    """Groups of indices with equal scores, best score first (input order inside a group)."""
    distinct = sorted(set(float(s) for s in scores), reverse=True)  # note: -0.0 == 0.0 -> one group
    groups = []
    for v in distinct:
        groups.append([i for i, s in enumerate(scores) if s == v])
    return groups


def n_arrangements(scores):
    """Number of orders of the tied documents (product of the groups' factorials)."""
    out = 1
    for g in tie_groups(scores):
        out *= math.factorial(len(g))
    return out


def average_rankings(labels, scores):
    """(ranked label tuple, weight) pairs covering every order of tied documents.

    Each group's permutations are enumerated in full; identical label sequences are
    merged with their multiplicity as weight, so the weighted mean is exactly the
    mean over all ``prod(|group|!)`` orders.
    """
    if n_arrangements(scores) > MAX_ARRANGEMENTS:
        raise ValueError("too many tie arrangements for the brute-force reference; use smaller tie groups")
    per_group = []
    for g in tie_groups(scores):
        c = Counter()
        for perm in itertools.permutations(g):
            c[tuple(labels[i] for i in perm)] += 1
        per_group.append(list(c.items()))
    for combo in itertools.product(*per_group):
        seq = ()
        w = 1
        for part, cnt in combo:
            seq += part
            w *= cnt
        yield seq, w
