"""The runtime never hangs or aborts the caller's process: fork, threads, Numba settings.

Each scenario runs in a fresh interpreter bounded by a timeout, so that an abort (GNU
OpenMP after fork, the workqueue layer's "Concurrent access has been detected") or a
hang fails the test instead of killing or stalling the test run.  Every scenario checks
that the results are bitwise those of the parent's (or the serial) computation.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.jit  # the threading layer and fork hazards exist only with compiled kernels

TIMEOUT = 600  # seconds; a compile on an empty cache included

# a batch large enough for the parallel drivers (>= 2048 queries); the child scripts print
# "OK" only when every comparison holds
PRELUDE = textwrap.dedent(
    """
    import os, sys, threading
    import numpy as np
    import rankjit
    rng = np.random.default_rng(7)
    L = rng.integers(0, 4, (6000, 40)).astype(np.int8)
    S = rng.random((6000, 40)).astype(np.float32)
    S[:, 5] = S[:, 6]  # ties, so that the tie rules are exercised too
    MEASURES = ["nDCG@10", "AP", "P@5", "ERR@20", "RR"]
    def run():
        return rankjit.evaluate(L, S, MEASURES, per_query=True)
    def same(a, b):
        return all(np.array_equal(a[k], b[k]) for k in MEASURES)
    """
)


def _run(code, env=None):
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True, text=True, env=full_env,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.stdout.strip().splitlines()[-1] == "OK", proc.stdout + proc.stderr
    return proc


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available on this platform")


@needs_fork
def test_fork_pool_after_a_parallel_call():
    # the parent runs the parallel drivers first (this starts the threading layer, GNU
    # OpenMP where present); a 'fork' Pool's workers then evaluate the same batch
    _run(
        """
        import multiprocessing as mp
        import numba
        ref = run()
        def child(_):
            return run()
        with mp.get_context("fork").Pool(2) as pool:
            outs = pool.map(child, range(4))
        assert all(same(o, ref) for o in outs)
        # the parent itself still runs in parallel after forking
        assert same(run(), ref)
        print("OK")
        """
    )


@needs_fork
def test_forked_child_runs_serial_twin_and_every_entry_point():
    # a raw fork: the child checks that the launch guard switched to the serial twins and
    # that diversity and preference kernels (other parallel drivers) run as well
    _run(
        """
        from rankjit import _config
        nug = (rng.random((6000, 40, 3)) < 0.2).astype(np.int8)
        ref = run()
        ref_div = rankjit.alpha_ndcg(nug, S, k=10)
        ref_rpp = rankjit.rpp(L, S, S[:, ::-1].copy())
        pid = os.fork()
        if pid == 0:
            ok = (_config._forked_after_parallel and not _config.use_parallel(10**6) and same(run(), ref)
                  and np.array_equal(rankjit.alpha_ndcg(nug, S, k=10), ref_div)
                  and np.array_equal(rankjit.rpp(L, S, S[:, ::-1].copy()), ref_rpp, equal_nan=True))
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        print("OK")
        """
    )


@needs_fork
def test_fork_while_another_thread_is_inside_a_parallel_kernel():
    # the launch lock is held by a thread of the parent at the moment of the fork: the
    # child must not inherit it locked (it would wait forever)
    _run(
        """
        ref = run()
        stop = threading.Event()
        def busy():
            while not stop.is_set():
                run()
        t = threading.Thread(target=busy)
        t.start()
        pids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                os._exit(0 if same(run(), ref) else 3)
            pids.append(pid)
        statuses = [os.waitpid(p, 0)[1] for p in pids]
        stop.set()
        t.join()
        assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses), statuses
        print("OK")
        """
    )


def test_four_threads_under_the_workqueue_layer():
    # the workqueue layer aborts the process on concurrent parallel launches: the list
    # measures do not use it (Python threads), and the parallel kernels of the diversity
    # measures take turns; every thread gets the single-thread answer
    _run(
        """
        import numba
        nug = (rng.random((6000, 40, 3)) < 0.2).astype(np.int8)
        ref = run()
        ref_div = rankjit.alpha_ndcg(nug, S, k=10)
        results = [None] * 4
        div = [None] * 4
        def work(i):
            for _ in range(3):
                results[i] = run()
                div[i] = rankjit.alpha_ndcg(nug, S, k=10)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert numba.threading_layer() == "workqueue"
        assert all(same(r, ref) for r in results)
        assert all(np.array_equal(d, ref_div) for d in div)
        numba.set_num_threads(1)
        assert same(run(), ref) and np.array_equal(rankjit.alpha_ndcg(nug, S, k=10), ref_div)  # serial paths
        print("OK")
        """,
        env={"NUMBA_THREADING_LAYER": "workqueue"},
    )


def test_list_measures_start_no_threading_layer():
    # the list measures run on Python threads: a 'fork' after them is safe even for the
    # caller's own Numba parallel code, because no OpenMP pool was started
    _run(
        """
        from numba.np.ufunc import parallel as numba_parallel
        run()
        rankjit.ndcg(L, S, k=10)
        assert not numba_parallel._is_initialized
        print("OK")
        """
    )


def test_the_callers_numba_settings_stay_untouched():
    _run(
        """
        import numba
        numba.set_num_threads(1)
        layer_before = numba.config.THREADING_LAYER
        run()
        assert numba.get_num_threads() == 1
        assert numba.config.THREADING_LAYER == layer_before
        print("OK")
        """
    )


def test_serial_twin_has_its_own_cache_entry(tmp_path):
    # the twin is the same function without parallel=True; it must not load (or overwrite)
    # the parallel kernel's cached code, and it must give the same answer
    code = """
        from rankjit._kernels.diversity import nugget_counts_parallel as kernel
        nug = (rng.random((200_000, 4)) < 0.3).astype(np.int8)
        nug[123, 2] = -1  # flagged as bad
        outs = []
        for fn in (kernel, kernel.serial):
            out = np.empty(nug.shape[0], np.int64)
            fn(nug, out)
            outs.append(out)
        assert np.array_equal(outs[0], outs[1]) and outs[0][123] == -1
        assert kernel.serial.py_func.__qualname__ != kernel.py_func.__qualname__
        assert kernel.targetoptions.get("parallel") and not kernel.serial.targetoptions.get("parallel")
        print("OK")
        """
    _run(code, env={"NUMBA_CACHE_DIR": str(tmp_path)})
    _run(code, env={"NUMBA_CACHE_DIR": str(tmp_path)})  # both loaded from the cache this time
    names = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    assert any("nugget_counts_parallel.serial_twin" in n for n in names), names
    assert any("nugget_counts_parallel-" in n for n in names), names


@needs_fork
def test_fork_while_another_thread_holds_the_compiler_lock(tmp_path):
    # a thread of the parent holds Numba's compiler lock (as while compiling a kernel) when the main
    # thread forks: the child has the lock held and not the thread, so a compile there would wait
    # forever.  The child's first call that needs a compile (an empty cache of its own) must end with
    # rankjit's error instead; its rankjit._compile_helper lock is free again too.
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(
            """
            import os, threading, time
            import numpy as np
            import rankjit
            from numba.core.compiler_lock import global_compiler_lock
            from rankjit import _compile_helper, _config
            held, release = threading.Event(), threading.Event()
            def hold():
                with global_compiler_lock:
                    held.set()
                    release.wait()
            t = threading.Thread(target=hold)
            t.start()
            held.wait()
            with _compile_helper._lock:  # (a compile_passes of another thread also holds this one)
                pid = os.fork()
            if pid == 0:
                assert _compile_helper._lock.acquire(timeout=5), "the helper lock stayed held in the child"
                _compile_helper._lock.release()
                try:
                    rankjit.evaluate(np.array([[0, 1, 2]]), np.array([[0.5, 0.2, 0.9]]), ["RR", "nDCG@2"])
                except RuntimeError as err:
                    os._exit(0 if str(err) == _config.FORKED_DURING_COMPILE else 3)
                os._exit(4)
            for _ in range(600):  # the child is given 60 s, then killed (a hang must fail, not stall, the test)
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                status = None
            release.set()
            t.join()
            print("child exit", "hung" if status is None else os.waitstatus_to_exitcode(status))
            """)],
        capture_output=True, text=True, timeout=120,
        env=dict({k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}, NUMBA_CACHE_DIR=str(tmp_path),
                 RANKJIT_COMPILE_HELPER="0"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "child exit 0", proc.stdout + proc.stderr
