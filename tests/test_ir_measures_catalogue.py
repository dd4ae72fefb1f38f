"""Every measure in ir_measures' catalogue is a rankjit measure, and its numbers are checked somewhere.

ir_measures keeps one registry of measure names (``ir_measures.measures.registry``: the
names, their aliases such as ``MAP`` or ``α_nDCG``).  Each must parse in
:func:`rankjit.evaluate`'s grammar and name the same family as ir_measures' measure, and each
family must be among the names whose values are held to ir_measures per query:
``tests/test_ir_measures_names.py`` (list measures) and ``tests/test_diversity_ir_measures.py``
(diversity measures).  A measure added to ir_measures' catalogue fails here until rankjit
computes it.
"""
from __future__ import annotations

import pytest

ir_measures = pytest.importorskip("ir_measures")

from rankjit import _measures  # noqa: E402

def _catalogue():
    return sorted(ir_measures.measures.registry)


def test_every_ir_measures_name_parses_to_its_family():
    missing, other = [], []
    for name in _catalogue():
        measure = ir_measures.measures.registry[name]
        try:
            parsed = _measures.parse(name)
        except ValueError as e:
            missing.append(f"{name}: {e}")
            continue
        # the family's ir_measures name: an alias such as MAP, BPref or α_nDCG names its measure's NAME; a name
        # that ir_measures defines with preset parameters (NumRelRet: NumRet(rel=1), SetRelP: SetP(relative=True))
        # may be a family of its own in rankjit, under the same name
        ours = _measures.EXTERNAL[parsed.family].ir_measures if parsed.external else \
            _measures.BY_NAME[parsed.family].ir_measures
        if ours != measure.NAME and not (measure.params and ours == name):
            other.append(f"{name}: rankjit {parsed.family} ({ours!r}), ir_measures {measure.NAME!r}")
    assert not missing, missing
    assert not other, other


def test_every_ir_measures_family_is_held_to_ir_measures_somewhere():
    import test_diversity_ir_measures as diversity_test  # the value tests' own lists of names
    import test_ir_measures_names as names_test

    checked = {ir_measures.parse_measure(n).NAME for n in names_test.NAMES}
    checked |= {m.NAME for m in diversity_test.default_measures()}
    unchecked = sorted({ir_measures.measures.registry[n].NAME for n in _catalogue()} - checked)
    assert not unchecked, unchecked
