"""Shared test settings.

* Hypothesis profiles: "default" for compiled kernels; "nojit" with fewer examples,
  loaded automatically when ``NUMBA_DISABLE_JIT=1`` (the kernels then run as plain
  Python and are slow).
* Tests marked ``jit`` (thread counts, compiled-only behaviour) are skipped when the
  JIT is disabled: they would test nothing.
"""
from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))  # make ``import reference`` work from any rootdir

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT") == "1"

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("default", max_examples=60, **_common)
settings.register_profile("nojit", max_examples=12, **_common)
settings.register_profile("thorough", max_examples=1500, **_common)  # HYPOTHESIS_PROFILE=thorough: bug hunting
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "nojit" if JIT_DISABLED else "default"))


def pytest_collection_modifyitems(config, items):
    if not JIT_DISABLED:
        return
    skip = pytest.mark.skip(reason="meaningless with NUMBA_DISABLE_JIT=1")
    for item in items:
        if "jit" in item.keywords:
            item.add_marker(skip)
