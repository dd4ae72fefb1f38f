"""A first call on an empty cache compiles the measure pass in a helper process (``rankjit._compile_helper``).

Each scenario runs in a fresh interpreter with its own empty ``NUMBA_CACHE_DIR`` and a
listener on Numba's compile events, which records what compiles in that process; bounded
by a timeout.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from _compile_events import _CPUS, LISTENER, TIMEOUT, two_cpus

pytestmark = pytest.mark.jit  # nothing compiles with NUMBA_DISABLE_JIT=1

#: prints {"compiled": [names compiled in this process], "values": [...]} after PRELUDE and the CALL
SCRIPT = LISTENER.replace("{", "{{").replace("}", "}}") + """
import numpy as np
import rankjit
from rankjit import _compile_helper
{prelude}
rng = np.random.default_rng(0)
labels = ((rng.random((60, 100)) < 0.3) * rng.integers(1, 5, (60, 100))).astype(np.int8)
scores = rng.random((60, 100)).astype(np.float32)
values = {call}
print(json.dumps({{"compiled": compiled, "values": {{k: v.tolist() for k, v in values.items()}}}}))
"""


#: measure sets and the pass the helper compiles for them (rankjit._compile_helper.helper_pass)
THREE_GROUPS = ["nDCG@10", "AP", "ERR@20"]  # a measure pass of three groups: the helper takes the rank pass
ONE_GROUP = ["nDCG@10"]  # a measure pass of one group, a rank pass that ranks: the helper takes the measure pass


EVALUATE = "rankjit.evaluate(labels, scores, {measures!r}, per_query=True)"
SYSTEMS = "rankjit.evaluate_systems(labels, np.stack([scores, scores[:, ::-1].copy()]), {measures!r})"


def _run(tmp_path, prelude="", measures=THREE_GROUPS, call=EVALUATE, **env):
    full_env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), **env)
    full_env.pop("NUMBA_DISABLE_JIT", None)
    full_env.pop("RANKJIT_COMPILE_HELPER", None)
    full_env.update(env)
    code = textwrap.dedent(SCRIPT).format(prelude=prelude, call=call.format(measures=list(measures)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    notices = [line for line in proc.stderr.splitlines() if line.startswith("rankjit: compiling ")]
    return out, notices


def _passes(names):
    return ({n for n in names if n.startswith("rank_blocks.")}, {n for n in names if n.startswith("measure_blocks.")})


@pytest.fixture(scope="module")
def without_helper(tmp_path_factory):
    """What this process compiles, and the values, with the helper turned off: per measure set."""
    return {tuple(m): _run(tmp_path_factory.mktemp("no-helper"), measures=m, RANKJIT_COMPILE_HELPER="0")
            for m in (THREE_GROUPS, ONE_GROUP)}


def test_without_the_helper_this_process_compiles_both_passes(without_helper):
    for out, notices in without_helper.values():
        rank, measure = _passes(out["compiled"])
        assert len(rank) == 1 and len(measure) == 1, out["compiled"]
        assert not any("in a helper process" in line for line in notices)


@two_cpus
@pytest.mark.parametrize("measures, there", [(THREE_GROUPS, "rank_blocks"), (ONE_GROUP, "measure_blocks")])
def test_one_pass_compiles_in_a_helper_process_and_loads_from_the_cache(tmp_path, without_helper, measures, there):
    out, notices = _run(tmp_path, measures=measures)
    rank, measure = _passes(out["compiled"])
    here = {"rank_blocks": measure, "measure_blocks": rank}[there]
    away = {"rank_blocks": rank, "measure_blocks": measure}[there]
    assert len(here) == 1 and not away, out["compiled"]  # the helper's pass was loaded from the cache
    # the notice of the helper's compile comes from this process, and says where it compiles
    (helper_line,) = [line for line in notices if "in a helper process" in line]
    assert there in helper_line and str(tmp_path / "cache") in helper_line
    assert any(next(iter(here)).split(".")[0] in line and "in a helper process" not in line for line in notices)
    # the same compiled code: the same values, bitwise
    assert out["values"] == without_helper[tuple(measures)][0]["values"]
    # the helper's pass's primitives compiled there too, not here
    primitives = {"rank_blocks": ("count_ranks", "before", "_merge_sort", "top_insertion"),
                  "measure_blocks": ("grade_histogram", "ideal_dcg_hist", "count_relevant")}[there]
    assert not any(n.split(".")[0] in primitives for n in out["compiled"]), out["compiled"]


@two_cpus
def test_several_systems_compile_their_passes_at_once_too(tmp_path):
    out, notices = _run(tmp_path / "helper", call=SYSTEMS)
    rank, measure = _passes(out["compiled"])
    assert len(measure) == 1 and not rank, out["compiled"]  # three groups: the helper took the rank pass
    assert any("in a helper process" in line and "rank_blocks" in line for line in notices)
    alone, _ = _run(tmp_path / "alone", call=SYSTEMS, RANKJIT_COMPILE_HELPER="0")
    assert out["values"] == alone["values"]


def test_the_helper_takes_the_smaller_pass():
    from rankjit import _compile_helper
    from rankjit._kernels import engine

    base = dict(ties=0, masked=False, deep=False, full=False, binary=False, graded=False, cascade=False,
                ideal_other=False, packed_grades=False, sets=False, cwl=False, extras=False, signs=False, prune=False,
                select=True)
    assert _compile_helper.helper_pass(engine.Variant(**dict(base, graded=True))) == "measure"
    assert _compile_helper.helper_pass(engine.Variant(**dict(base, binary=True, graded=True))) == "rank"
    assert _compile_helper.helper_pass(engine.Variant(**dict(base, binary=True, ranked=True))) == "rank"


@two_cpus
@pytest.mark.parametrize("helper, wait", [
    ("import sys; sys.exit(1)", None),  # the helper fails
    ("import time; time.sleep(600)", 0.5),  # the helper hangs: killed after WAIT_SECONDS
])
def test_a_helper_that_fails_or_hangs_leaves_the_measure_pass_to_this_process(tmp_path, without_helper, helper, wait):
    prelude = f"_compile_helper._HELPER = {helper!r}"
    if wait is not None:
        prelude += f"; _compile_helper.WAIT_SECONDS = {wait}"
    out, notices = _run(tmp_path, prelude)
    rank, measure = _passes(out["compiled"])
    assert len(rank) == 1 and len(measure) == 1, out["compiled"]
    # said twice: the helper's start, then this process's own compile
    assert sum("rank_blocks" in line for line in notices) == 2, notices
    assert out["values"] == without_helper[tuple(THREE_GROUPS)][0]["values"]


@two_cpus
def test_this_process_waits_for_a_slow_helper_and_loads_its_pass(tmp_path, without_helper):
    # a helper that starts 5 s late: this process compiles its own pass long before, then must wait for the
    # helper's (not compile it too) and load it from the cache
    prelude = '_compile_helper._HELPER = "import time; time.sleep(5)\\n" + _compile_helper._HELPER'
    out, notices = _run(tmp_path, prelude)
    rank, measure = _passes(out["compiled"])
    assert len(measure) == 1 and not rank, out["compiled"]
    assert sum("rank_blocks" in line for line in notices) == 1, notices
    assert out["values"] == without_helper[tuple(THREE_GROUPS)][0]["values"]


@two_cpus
def test_silencing_the_logger_silences_the_helpers_notice(tmp_path):
    prelude = "import logging; logging.getLogger('rankjit').setLevel(logging.ERROR)"
    out, notices = _run(tmp_path, prelude)
    assert not notices
    assert not _passes(out["compiled"])[0]  # the helper ran (the rank pass)


def test_no_helper_when_the_passes_are_compiled_or_cached(tmp_path):
    import numpy as np

    from rankjit import _compile_helper

    started = []
    real = _compile_helper._start

    def start(*args):
        started.append(args)
        return real(*args)

    # passes this process has compiled or loaded: nothing to do
    import rankjit

    labels = np.array([[2, 0, 1, 0]], dtype=np.int8)
    scores = np.array([[0.9, 0.8, 0.1, 0.3]], dtype=np.float32)
    first = rankjit.ndcg(labels, scores, k=3)
    _compile_helper._start = start
    try:
        again = rankjit.ndcg(labels, scores, k=3)
    finally:
        _compile_helper._start = real
    assert not started
    assert again.tolist() == first.tolist()
    # a warm disk cache in a fresh process: no helper, nothing compiled, not a word
    cache = tmp_path / "warm"
    _run(cache)
    out, notices = _run(cache)
    assert out["compiled"] == [] and notices == []


def test_the_switch_and_the_conditions(monkeypatch):
    from rankjit import _compile_helper

    monkeypatch.setenv("RANKJIT_COMPILE_HELPER", "0")
    assert not _compile_helper.enabled()
    monkeypatch.setenv("RANKJIT_COMPILE_HELPER", "1")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not _compile_helper.enabled()
    monkeypatch.delattr(sys, "frozen")
    assert _compile_helper.enabled() == (_CPUS >= 2)

    class NoCache:  # a dispatcher whose cache cannot be read: the helper's work could not be shared
        overloads = {}
        _cache = None

    assert not _compile_helper.needs_compile(NoCache(), ())
