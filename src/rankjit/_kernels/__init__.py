"""The compiled tier: every Numba kernel of the core, and nothing that validates.

Public functions (``rankjit.metrics``, ``rankjit.evaluate``, ``rankjit.diversity``,
``rankjit.preference``) check and convert their inputs once (:mod:`rankjit._validation`),
resolve the measures into a plan (:mod:`rankjit._measures`, :mod:`rankjit._registry`) and
call the kernels here, which trust their arguments.  Every kernel is compiled through
:mod:`rankjit._config` (the one place for Numba options), lazily, at its first call.

* :mod:`.layout` -- the measure codes and the columns of a plan row (plain Python: the
  registry reads it without importing Numba).
* :mod:`.ranking` -- ranking a row under each tie rule (top-k insertion, counting ranks,
  merge sort) and the tie-rule codes.
* :mod:`.engine` -- the list-measure engine: a rank pass and a measure pass over blocks
  of queries, compiled per :class:`.engine.Variant`.
* :mod:`.binary`, :mod:`.graded`, :mod:`.cascade`, :mod:`.values` -- the measure
  primitives the engine inlines (hits and precision sums; gains with any discount and
  their ideal; cascades such as ERR and pFound; label-to-gain mapping).
* :mod:`.scans` -- the input check's scans (NaN scores, bad labels, the largest label).
* :mod:`.diversity`, :mod:`.rpp`, :mod:`.lexi` -- intent-aware measures, recall-paired
  preference and lexicographic precision / recall.
* :mod:`.nrt` -- borrowed views and stack arrays that keep reference counting out of
  hot loops.
* :mod:`.strings` -- byte strings (ids as one buffer and offsets): their hash and comparison,
  shared by the readers and the front ends' joins.
* :mod:`.frontends` -- the drop-in front ends' own loops (``rankjit.compat.pytrec_eval``,
  ``rankjit.compat.ranx``, the ir_measures provider): splitting, joining and ordering
  their inputs.

The readers' and the statistics' kernels live beside their callers, in
``rankjit.io._kernels`` (and ``rankjit.io._trec_prefs_kernels``) and ``rankjit.stats._kernels``
(``tests/test_kernel_homes.py`` holds every compiled function to these homes).
"""
