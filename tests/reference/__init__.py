"""Plain-Python references for every measure rankjit computes, written from the definitions, not from the kernels.

As stumpy's ``tests/naive.py``: slow, obvious code that the tests compare the kernels with.

* :mod:`reference.ties` -- the one tie rule (pessimistic, optimistic, stable, and the
  brute-force average over tied orders) that every other module ranks with;
* :mod:`reference.lists` -- the list measures of the registry (P, R, AP, nDCG, ERR, RBP,
  the set measures, IPrec, ...), re-exported here: ``import reference as ref; ref.measure(...)``;
* :mod:`reference.diversity` -- alpha-nDCG, ERR-IA, NRBP, P-IA, AP-IA, S-recall;
* :mod:`reference.preference` -- RPP and lexicographic precision / recall;
* :mod:`reference.cwl` -- cwl_eval's measures (SDCG, INSQ, INST, BPM, NERR, Compat, Accuracy).
"""
from reference.lists import *  # noqa: F401,F403 (the list references are the package's main namespace)
from reference.lists import FAMILIES, MAX_ARRANGEMENTS, average_rankings, n_arrangements, rank  # noqa: F401
