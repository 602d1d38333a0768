"""The warm-up child's lifecycle (bnexplore.warmup.spawn_child): it dies with its server,
at most one runs per cache folder, and it imports the server's bnexplore."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bnexplore import warmup

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and fork-style processes")

ROOT = str(Path(warmup.__file__).resolve().parent.parent)


def _gone(pid: int) -> bool:
    """No such process, or a zombie nobody reaped yet (its code no longer runs)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.1)
    return _gone(pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BNX_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def hold(tmp_path):
    path = tmp_path / "hold"
    path.write_text("")
    yield str(path)
    path.unlink(missing_ok=True)


# A "server": starts the child the way the server does (or, with WATCHDOG_ONLY, a child
# that arms only the portable watchdog), prints the child's pid once it has said which
# bnexplore it imported, then sleeps until killed.
SERVER = textwrap.dedent("""
    import subprocess, sys, time
    sys.path.insert(0, {root!r})
    from bnexplore import warmup
    if {watchdog_only!r}:
        code = ("import sys, time; sys.path.insert(0, %r); from bnexplore import warmup; "
                "warmup._watch_parent(%d, interval=0.1); print('bnexplore x', flush=True); "
                "time.sleep(600)") % ({root!r}, __import__('os').getpid())
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    else:
        proc = warmup.spawn_child(hold={hold!r})
    first = proc.stdout.readline().strip()
    print(proc.pid, first, flush=True)
    time.sleep(600)
""")


def _server(hold: str, cwd: str, watchdog_only: bool = False) -> tuple[subprocess.Popen, int, str]:
    code = SERVER.format(root=ROOT, hold=hold, watchdog_only=watchdog_only)
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=cwd)
    line = server.stdout.readline().split(maxsplit=1)
    assert len(line) == 2, "the server did not start its warm-up child"
    return server, int(line[0]), line[1].strip()


@pytest.mark.parametrize("watchdog_only", [False, True], ids=["pdeathsig+watchdog", "watchdog"])
def test_child_dies_with_its_killed_server(cache, hold, tmp_path, watchdog_only):
    server, child, _ = _server(hold, str(tmp_path), watchdog_only)
    try:
        assert not _gone(child)
        time.sleep(0.5)
        assert not _gone(child)                   # held: it would live ten minutes
        server.send_signal(signal.SIGKILL)        # no atexit, no cleanup in the server
        server.wait(10)
        assert _wait_gone(child, 15.0), "the warm-up child outlived its server"
    finally:
        _kill(server.pid)
        _kill(child)


def test_one_child_per_cache_folder(cache, hold):
    first = warmup.spawn_child(hold=hold)
    second = None
    try:
        assert first.stdout.readline().startswith("bnexplore ")
        second = warmup.spawn_child(hold=hold)
        out, _ = second.communicate(timeout=60)
        assert out.split("\n")[1] == warmup.CHILD_BUSY
        assert second.returncode == 0
        assert first.poll() is None                 # the first goes on, holding the lock
        assert warmup._lock_busy(warmup.child_lock_path())
    finally:
        first.kill()
        first.wait(10)
        if second is not None and second.poll() is None:
            second.kill()
    assert not warmup._lock_busy(warmup.child_lock_path())   # released with its holder


def test_child_imports_the_servers_bnexplore_from_another_working_folder(cache, hold, tmp_path,
                                                                        monkeypatch):
    """The server's working folder holds another ``bnexplore`` package: the child (like
    the server) imports the server's."""
    work = tmp_path / "work"
    (work / "bnexplore").mkdir(parents=True)
    marker = tmp_path / "imported-the-wrong-one"
    (work / "bnexplore" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise SystemExit(7)\n")
    (work / "bnexplore" / "warmup.py").write_text("raise SystemExit(7)\n")
    monkeypatch.setenv("PYTHONPATH", "")     # nothing but the working folder would find it
    server, child, said = _server(hold, str(work))
    try:
        assert said == f"bnexplore {os.path.join(ROOT, 'bnexplore')}"
        assert not marker.exists()
        assert not _gone(child)
    finally:
        _kill(server.pid)
        _kill(child)
        server.wait(10)


def test_child_refuses_another_package_than_the_servers(cache, tmp_path):
    """``--package`` names the server's package: a child that found another one stops."""
    out = subprocess.run([sys.executable, "-P", "-m", "bnexplore.warmup", "--child",
                          "--package", str(tmp_path)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert out.returncode == 0
    assert out.stdout.splitlines() == [f"bnexplore {os.path.join(ROOT, 'bnexplore')}"]
    assert not os.path.exists(warmup.child_lock_path())       # it took no lock either


def test_a_second_server_follows_the_running_warm_up_and_starts_none(cache, hold, monkeypatch):
    import threading

    first = warmup.spawn_child(hold=hold)
    try:
        assert first.stdout.readline().startswith("bnexplore ")
        deadline = time.monotonic() + 60      # the child names its package, then locks
        while not warmup._lock_busy(warmup.child_lock_path()) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = []
        monkeypatch.setattr(warmup, "spawn_child", lambda *a, **k: started.append(1))
        monkeypatch.setattr(warmup, "is_warm", lambda: False)
        monkeypatch.setattr(warmup, "_DONE", threading.Event())
        monkeypatch.setitem(warmup._STATE, "status", "loading")
        second = threading.Thread(target=warmup._run, args=("",), daemon=True)
        second.start()
        second.join(1.5)
        assert second.is_alive() and warmup.status() == "loading"   # waits for the first
    finally:
        first.kill()
        first.wait(10)
    second.join(30)
    assert not second.is_alive() and warmup.status() == "ready"
    assert started == []
