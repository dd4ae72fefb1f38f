"""What the tests that run scenarios in fresh interpreters share: their timeout, the two-CPU condition of
the helper processes, and the script head that records what compiles in that interpreter."""
import os

import pytest

TIMEOUT = 900

try:
    _CPUS = len(os.sched_getaffinity(0))
except AttributeError:  # pragma: no cover - not on Linux
    _CPUS = os.cpu_count() or 1
two_cpus = pytest.mark.skipif(_CPUS < 2, reason="the helper process is started only when two CPUs may be used")

#: the head of a scenario script: ``compiled`` lists the qualified names of the functions Numba compiles in
#: that interpreter (nested compiles too), in order, and ``modules`` their modules
LISTENER = """
import json
from numba.core import event

compiled = []
modules = []


class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f.__qualname__)
        modules.append(f.__module__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Listener())
"""
