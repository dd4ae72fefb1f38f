"""Drop-in front ends: other evaluation libraries' APIs on rankjit's engine.

Each submodule offers one library's API, with its signatures, names and outputs, so
that porting an evaluation script is a change of its import line (``docs/migrating.md``):

* :mod:`rankjit.compat.pytrec_eval` -- pytrec_eval's ``RelevanceEvaluator``,
  ``supported_measures``, ``supported_nicknames``, ``parse_qrel``, ``parse_run`` and
  ``compute_aggregated_measure``: ``import rankjit.compat.pytrec_eval as pytrec_eval``.
* :mod:`rankjit.compat.ranx` -- ranx's ``Qrels``, ``Run``, ``evaluate`` and ``compare``
  (with its ``Report``): ``from rankjit.compat.ranx import Qrels, Run, evaluate, compare``.

The ir_measures (and PyTerrier) front end is a provider instead:
:mod:`rankjit.integrations.ir_measures`.

Importing this package imports nothing else; a submodule imports NumPy and Numba, and its
kernels compile (or load from Numba's cache) on first use.
"""
