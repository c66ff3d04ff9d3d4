"""Issue 12, library: fork while a cuentry lock is held, reset() racing with use, control characters."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry import Table, optional, required
from cuentry.catalog import catalog
from cuentry.driver import Driver
from cuentry.errors import CuentryError, ResolutionError, UsageError

# --- fork while another thread holds a cuentry lock ------------------------------------------

_FORK_SCRIPT = textwrap.dedent(r"""
    import os, sys, threading, time
    import cuentry.catalog as C
    import cuentry.driver as D
    from cuentry import Table, required, out

    scenario, lib = sys.argv[1], sys.argv[2]
    os.environ["CUENTRY_DRIVER"] = lib
    holding, release = threading.Event(), threading.Event()
    drv = D.Driver.load(lib)

    if scenario == "table":             # a table resolving: its lock is held while the source loads
        def slow_source():
            holding.set(); release.wait(); return drv
        t = Table("t", [required("cuDriverGetVersion", 2020)], stream="legacy", source=slow_source)
        threading.Thread(target=t.resolve, daemon=True).start()
    elif scenario == "default-driver":  # the default driver loading
        real = D.load_driver
        def slow_load(*a, **k):
            holding.set(); release.wait(); return real(*a, **k)
        D.load_driver = slow_load
        threading.Thread(target=D.default_driver, daemon=True).start()
    elif scenario == "catalog":         # the catalog loading
        def hold():
            with C._LOCK:
                holding.set(); release.wait()
        threading.Thread(target=hold, daemon=True).start()
    holding.wait()

    pid = os.fork()
    if pid == 0:
        try:
            if scenario == "table":
                t.reset(source=drv)
                v = out("int"); t.cuDriverGetVersion(v); ok = v[0] == 13000
            elif scenario == "default-driver":
                D.load_driver = real
                ok = D.default_driver().driver_version == 13000
            else:
                C._CATALOG = None
                ok = len(C.catalog()) > 0
        except BaseException as exc:
            print("child:", type(exc).__name__, exc, flush=True); ok = False
        os._exit(0 if ok else 1)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("child exit", os.waitstatus_to_exitcode(status)); sys.exit(os.waitstatus_to_exitcode(status))
        time.sleep(0.02)
    os.kill(pid, 9); os.waitpid(pid, 0)
    print("child deadlocked"); sys.exit(3)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
@pytest.mark.parametrize("scenario", ["table", "default-driver", "catalog"])
def test_fork_while_a_lock_is_held_does_not_deadlock_the_child(fake: dict[str, str], scenario: str) -> None:
    r = subprocess.run([sys.executable, "-c", _FORK_SCRIPT, scenario, fake["full"]], capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


# --- reset() racing with use ---------------------------------------------------------------------


def test_reset_racing_with_use_raises_nothing(driver: Driver) -> None:
    """Each thread hammers one way in (an early-captured entry, a fresh read, available, reason)
    while another resets: the old code gave KeyError and RecursionError within a second."""
    from cuentry import out

    t = Table("race", [required("cuDriverGetVersion", 2020), optional("cuMulticastCreate", 12010)],
              stream="legacy", source=driver)
    lazy = t.cuDriverGetVersion  # captured before resolution: always goes through the table
    errors: list[BaseException] = []
    stop = time.monotonic() + 0.5

    def use(kind: int) -> None:
        v = out("int")
        while time.monotonic() < stop:
            try:
                if kind == 0:
                    lazy(v)
                elif kind == 1:
                    t.reason("cuDriverGetVersion")
                elif kind == 2:
                    t.cuDriverGetVersion(v)
                elif kind == 3:
                    t.available("cuMulticastCreate")
                else:
                    assert t.report()["entries"][0]["status"] in ("resolved", "unresolved")
            except BaseException as exc:
                errors.append(exc)
                return

    def reset() -> None:
        while time.monotonic() < stop:
            t.reset()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        ts = [threading.Thread(target=use, args=(i % 5,)) for i in range(10)] + [threading.Thread(target=reset)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, repr(errors[:3])


# --- control characters -----------------------------------------------------------------------------

CONTROL = st.characters(categories=["Cc"])


def _names_with_control() -> st.SearchStrategy[str]:
    base = st.sampled_from(["cuInit", "cuMemAlloc", "cuDriverGetVersion", "PFN_cuMemAlloc_v3020", ""])
    return st.tuples(base, CONTROL, st.integers(0, 20)).map(lambda t: t[0][: t[2]] + t[1] + t[0][t[2]:])


@pytest.mark.parametrize("name", ["cuInit\n", "cuInit\x00", "\tcuInit", "cuMemAlloc\r", "cuInit\x1b[31m"])
def test_driver_query_refuses_control_characters(driver: Driver, name: str) -> None:
    with pytest.raises(UsageError, match="not a C identifier"):
        driver.query(name, 2000, 1)
    with pytest.raises(ResolutionError) as ei:
        driver.resolve(name, 2000, "legacy")
    assert ei.value.diagnostic.classification.value == "invalid_symbol"
    assert ei.value.diagnostic.access == "-"  # refused before asking the driver


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_names_with_control())
def test_every_entry_point_refuses_control_characters(driver: Driver, name: str) -> None:
    def refused(fn: Any, *a: Any, **k: Any) -> None:
        with pytest.raises(CuentryError):
            fn(*a, **k)

    refused(driver.query, name, 3020, 1)
    refused(driver.resolve, name, 3020, "legacy")
    refused(driver.call, name, 3020)
    refused(required, name, 3020)
    refused(optional, name, 3020)
    refused(catalog().abis, name)
    refused(catalog().parse_pfn, name)
    refused(lambda: Table("t", [required(name, 3020)], stream="legacy", source=driver))


def test_pfn_names_are_not_silently_stripped() -> None:
    with pytest.raises(UsageError):
        catalog().parse_pfn(" PFN_cuMemAlloc_v3020\n")
    assert catalog().parse_pfn("PFN_cuMemAlloc_v3020").version == 3020


@pytest.mark.parametrize("name", ["cuInit\n", "cuInit\x00", "\tcuInit", "cuMemAlloc\r"])
def test_runtime_path_refuses_control_characters(fake: dict[str, str], fake_version: Any, name: str) -> None:
    from cuentry.driver import Runtime

    with Runtime.load(fake["full"]) as rt:
        with pytest.raises(ResolutionError) as ei:
            rt.resolve(name, 2000, "legacy")
        assert ei.value.diagnostic.access == "-"
