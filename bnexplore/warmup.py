"""Compile the numba kernels before they are needed (first start of a fresh install).

Every kernel of bnexplore is ``@numba.njit(cache=True)``: its first call in a process
compiles it (seconds, up to a minute for the order-averaging kernels on a busy small
machine) unless numba's on-disk cache already holds it, in which case the call only
loads it (milliseconds). On a fresh install the cache is empty, so the first user of
each method waits for its compilation.

:func:`warm_up` calls every public method the apps use once, on a tiny generated data
set (60 rows, six variables of two to four states), so that each kernel is compiled
with exactly the argument types a real call gives and written to the cache.
``python -m bnexplore.warmup`` does that from a shell (e.g. after installing).
:func:`start_warm_up` does it once per process in the background, in a separate
process at a lower priority (:func:`spawn_child`: it dies with the server, runs once per
cache folder and imports the server's bnexplore): numba compiles one kernel at a time per process (a
process-wide lock), so a warm-up thread in the server would make a view wait for
kernels it does not use; with a process, a view that needs a kernel the warm-up has not
cached yet compiles it at once, and every later view loads from the cache what the
warm-up wrote. When that process is done, the server loads every kernel from the
cache (milliseconds each). A complete warm-up leaves a stamp next to numba's cache
(:func:`stamp_path`); a later start that finds it (:func:`is_warm`) starts no process
and loads nothing ahead: each view loads only the kernels it calls. :func:`status` tells a page whether kernels are being
compiled for the first time (``"compiling"``: a cache miss was seen), only loaded
(``"loading"``), or ready (``"ready"``). Results do not depend on the warm-up.

Examples
--------
>>> from bnexplore import warmup
>>> seconds = warmup.warm_up(steps=["scores"])
>>> sorted(seconds)
['scores']
>>> warmup.status() in ("not started", "loading", "compiling", "ready")
True
"""
from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:   # imported where used: a later start's check (is_warm) needs neither
    import pandas as pd

__all__ = ["warm_up", "start_warm_up", "status", "watch", "wait", "is_warm", "stamp_path",
           "STEPS"]

#: environment variable naming a file: while it exists (at most ten minutes), the
#: background warm-up holds numba's compiler lock in the "compiling" state before it
#: starts, as a long first compilation would (tests of the apps' "preparing" state).
TEST_HOLD_ENV = "BNX_WARMUP_TEST_HOLD"


def tiny_frame(seed: int = 0) -> pd.DataFrame:
    """A small data frame of categoricals (six features of 2-4 states and a binary class).

    Examples
    --------
    >>> df = tiny_frame()
    >>> df.shape, df.attrs["target"]
    ((60, 7), 'class')
    """
    import numpy as np
    import pandas as pd

    from ._validation import check_random_state

    rng = check_random_state(seed)
    n = 60
    cols = {}
    for j, r in enumerate((2, 3, 2, 4, 2, 3)):
        cols[f"x{j}"] = pd.Categorical.from_codes(rng.integers(0, r, n), [f"s{i}" for i in range(r)])
    # a class that depends on two features, so that structures have arcs to find
    y = (np.asarray(cols["x0"].codes) + np.asarray(cols["x1"].codes) + rng.integers(0, 2, n)) % 2
    cols["class"] = pd.Categorical.from_codes(y, ["no", "yes"])
    df = pd.DataFrame(cols)
    df.attrs["target"] = "class"
    return df


# --------------------------------------------------------------------------- steps
# Each step runs one family of public calls on the tiny data; together they reach every
# kernel the apps use. The order is the apps' need: the structure scores first (every
# app), order averaging (the longest compilation), averaging over all orders, then the
# others.
def _scores(df: pd.DataFrame) -> None:
    from .scores import LocalScore

    for prior in ("K2", "BDeu"):
        ls = LocalScore(df, prior=prior)
        ls.score("x0", ["x1", "x2"])


def _search(df: pd.DataFrame) -> None:
    from .search import hill_climb

    hill_climb(df)


def _app(*names: str) -> Callable[[pd.DataFrame], None]:
    """A step that asks each app (:mod:`bnexplore.apps`) to compute its first settings."""
    def step(df: pd.DataFrame) -> None:
        from .apps import app_class

        for name in names:
            app_class(name).warm(df)
    step.apps = names  # type: ignore[attr-defined]
    return step


#: the warm-up steps in the order they run: name -> function of the tiny data frame.
#: Every app says what it computes (``App.warm``).
STEPS: dict[str, Callable[[pd.DataFrame], None]] = {
    "scores": _scores,
    "search": _search,
    "structure": _app("structure"),
    "order averaging": _app("order_averaging"),
    "all orders": _app("all_orders"),
    "edge confidence": _app("edge_confidence"),
    "compare": _app("compare"),
    "forests": _app("forests"),
    "mixtures": _app("mixture_weights"),
    "clustering": _app("clustering"),
    "ismb": _app("ismb_trace"),
    "ask model": _app("ask_model"),
}


# --------------------------------------------------------------------------- state
_LOCK = threading.RLock()
_STATE = {"status": "not started", "compiled": 0, "errors": {}, "seconds": {}}
_WATCHERS: list[Callable[[str], None]] = []
_DONE = threading.Event()
_THREAD: list[threading.Thread] = []


def status() -> str:
    """State of this process's background warm-up (:func:`start_warm_up`).

    ``"not started"``; ``"loading"`` (running, every kernel so far came from the
    cache); ``"compiling"`` (running, and at least one kernel had to be compiled: a
    first start, worth telling the user); ``"ready"`` (finished).

    Examples
    --------
    >>> status() in ("not started", "loading", "compiling", "ready")
    True
    """
    return _STATE["status"]


def watch(callback: Callable[[str], None]) -> Callable[[], None]:
    """Call ``callback(new_status)`` on every change of :func:`status`; returns an unwatch.

    The callback runs in whichever thread changed the state (the warm-up's, or one
    that compiled a kernel): it must be quick and thread-safe. A watcher added after
    the warm-up is ready is never called.

    Examples
    --------
    >>> seen = []
    >>> stop = watch(seen.append)
    >>> stop()
    """
    with _LOCK:
        _WATCHERS.append(callback)

    def unwatch() -> None:
        with _LOCK:
            if callback in _WATCHERS:
                _WATCHERS.remove(callback)
    return unwatch


def wait(timeout: float | None = None) -> bool:
    """Wait for the background warm-up to finish; ``True`` if it has (or never started).

    Examples
    --------
    >>> wait(0.0) in (True, False)
    True
    """
    if not _THREAD:
        return True
    return _DONE.wait(timeout)


def _set_status(new: str) -> None:
    with _LOCK:
        if _STATE["status"] == new:
            return
        _STATE["status"] = new
        watchers = list(_WATCHERS)
        if new == "ready":
            _WATCHERS.clear()
    for cb in watchers:
        try:
            cb(new)
        except Exception:  # noqa: BLE001 - a watcher's failure is its own
            pass


def _compile_listener():
    """A numba event listener that turns ``"loading"`` into ``"compiling"``."""
    from numba.core import event

    class _Compiling(event.Listener):
        def on_start(self, ev) -> None:
            with _LOCK:
                _STATE["compiled"] += 1
                first = _STATE["status"] == "loading"
            if first:
                _set_status("compiling")

        def on_end(self, ev) -> None:
            pass

    return _Compiling()


def warm_up(steps: Iterable[str] | None = None, pause: float = 0.02) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of the given steps; seconds per step.

    Parameters
    ----------
    steps : iterable of str, optional
        Names in :data:`STEPS` (default: all, in that order).
    pause : float
        Seconds to sleep between steps, so that a thread waiting for numba's compiler
        lock (a view that needs another kernel) gets it before the next step.

    Returns
    -------
    dict
        Wall seconds of each step; a step that failed is left out (its error is kept
        in ``warm_up.errors``; the kernels then compile on their first real call).

    Examples
    --------
    >>> list(warm_up(steps=["scores"]))
    ['scores']
    """
    names = list(STEPS) if steps is None else list(steps)
    unknown = [s for s in names if s not in STEPS]
    if unknown:
        raise ValueError(f"unknown warm-up steps {unknown}: choose from {list(STEPS)}")
    df = tiny_frame()
    seconds: dict[str, float] = {}
    for i, name in enumerate(names):
        if i and pause > 0:
            time.sleep(pause)
        t0 = time.perf_counter()
        try:
            STEPS[name](df)
        except Exception as exc:  # noqa: BLE001 - a warm-up must never break its host
            warm_up.errors[name] = f"{type(exc).__name__}: {exc}"
            continue
        seconds[name] = time.perf_counter() - t0
    return seconds


warm_up.errors = {}  # type: ignore[attr-defined]


def _run(hold: str) -> None:
    if not hold and _stamp_pointed_to():
        # a later start: nothing to load ahead, and numba is not even imported here
        # (a view that needs a kernel imports it; one that reads cached results not)
        _DONE.set()
        _set_status("ready")
        return
    import atexit

    from numba.core import event

    # kernels the host process compiles itself (a view that asked first) count too
    listener = _compile_listener()
    event.register("numba:compile", listener)
    try:
        if hold:   # tests: a long first compilation, holding numba's compiler lock
            from numba.core.compiler_lock import global_compiler_lock

            _set_status("compiling")
            end = time.monotonic() + 600.0
            with global_compiler_lock:
                while os.path.exists(hold) and time.monotonic() < end:
                    time.sleep(0.05)
            _set_status("loading")
        if is_warm():
            # a later start: the kernels load from the cache when a view first calls
            # them (only those it needs), so there is nothing to do
            return
        # The kernels compile in a separate process (at a lower priority) that fills
        # numba's on-disk cache: numba compiles one kernel at a time per process, so a
        # warm-up thread here would make a view wait for kernels it does not need; a
        # view that needs a kernel before the warm-up has cached it compiles it at once.
        if _lock_busy(child_lock_path()):
            _follow_other_warm_up()        # another server's fills this cache folder
            return
        proc = spawn_child()
        atexit.register(_stop_child, proc)
        ok = True
        for line in proc.stdout:
            word = line.strip()
            if word == "compiling":
                _set_status("compiling")
            elif word == CHILD_BUSY:           # another start took the lock first
                ok = False
                _follow_other_warm_up()
            elif word.startswith("bnexplore ") and not _same_dir(word[len("bnexplore "):], _package_dir()):
                ok = False                     # cannot happen with spawn_child's path
                _stop_child(proc)
        if proc.wait() == 0 and ok:
            warm_up()        # every kernel is cached now: load them here (milliseconds each)
    except Exception:  # noqa: BLE001 - the kernels then compile on their first call
        pass
    finally:
        event.unregister("numba:compile", listener)
        _DONE.set()
        _set_status("ready")


# --------------------------------------------------------------------------- child process
# The warm-up process's lifecycle, apart from what it warms:
# * it dies with its server: on Linux the kernel sends it SIGKILL when the server thread
#   that started it ends (prctl(PR_SET_PDEATHSIG)); everywhere a watchdog thread polls
#   the parent and exits when it is gone (a parent killed with SIGKILL runs no atexit);
# * at most one runs per cache folder: it holds an exclusive lock on
#   ``<cache_dir>/warm-up/child.lock`` (released by the system when it dies); a second
#   one prints :data:`CHILD_BUSY` and exits;
# * it imports the server's bnexplore: the server passes the folder that holds its
#   package first on PYTHONPATH, and ``python -P`` adds no working folder (which may
#   hold another ``bnexplore``); the child prints the package it imported.

#: the line a warm-up child prints, and exits, when another holds the cache folder's lock
CHILD_BUSY = "busy"
#: seconds between two looks of the watchdog at the parent
WATCH_INTERVAL = 0.5
_HELD: list = []     # the child's open lock file (the lock lives as long as it is open)


def _package_dir() -> str:
    """The folder of this bnexplore package."""
    return os.path.dirname(os.path.abspath(__file__))


def child_lock_path() -> str:
    """The lock file that admits one warm-up process per cache folder.

    Examples
    --------
    >>> child_lock_path().endswith("child.lock")
    True
    """
    from .cache import cache_dir

    return str(cache_dir() / "warm-up" / "child.lock")


def spawn_child(args: Iterable[str] = (), hold: str | None = None):
    """Start the warm-up process for this server: ``python -P -m bnexplore.warmup --child``.

    The child imports this process's bnexplore (its folder first on PYTHONPATH, no
    working folder on the path), dies with this process (:func:`_die_with_parent`) and
    runs only if no other warm-up holds the cache folder's lock. Its standard output
    says, one line each: ``bnexplore <package folder>``, then :data:`CHILD_BUSY` (and it
    exits), or ``compiling`` (first cache miss) and ``ready``. ``hold`` (tests) names a
    file: while it exists the child waits, alive and holding the lock, before warming.
    On Linux the parent-death signal follows the thread that calls this: call it from a
    thread that outlives the child (``_run`` waits for it).

    Examples
    --------
    A server calls it through :func:`start_warm_up`::

        proc = spawn_child()
        for line in proc.stdout: ...
    """
    import subprocess
    import sys

    root = os.path.dirname(_package_dir())
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop(TEST_HOLD_ENV, None)
    cmd = [sys.executable, "-P", "-m", "bnexplore.warmup", "--child", "--parent", str(os.getpid()),
           "--package", _package_dir(), *args]
    if hold:
        cmd += ["--hold", hold]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=env, text=True)


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _follow_other_warm_up() -> None:
    """Wait for the warm-up process another server started on this cache folder, then
    load the kernels it cached (if it finished every step)."""
    _wait_for_lock(child_lock_path())
    if is_warm():
        warm_up()


def _stop_child(proc) -> None:
    if proc.poll() is None:
        proc.kill()


def _parent_alive(parent: int) -> bool:
    if os.name == "nt":   # no reparenting on Windows: ask whether the process still runs
        import ctypes

        k32 = ctypes.windll.kernel32
        h = k32.OpenProcess(0x00100000, False, parent)   # SYNCHRONIZE
        if not h:
            return False
        try:
            return k32.WaitForSingleObject(h, 0) == 0x102   # WAIT_TIMEOUT: still running
        finally:
            k32.CloseHandle(h)
    return os.getppid() == parent   # an orphan is adopted by init or a subreaper


def _watch_parent(parent: int, interval: float = WATCH_INTERVAL) -> threading.Thread:
    """Exit this process (at once, no cleanup) when ``parent`` is gone; a daemon thread."""
    def watch() -> None:
        while _parent_alive(parent):
            time.sleep(interval)
        os._exit(3)

    t = threading.Thread(target=watch, name="bnx-warm-up-watchdog", daemon=True)
    t.start()
    return t


def _die_with_parent(parent: int) -> None:
    """Make this process end when ``parent`` does: Linux's parent-death signal, and the
    watchdog everywhere."""
    import sys

    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)     # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
    if not _parent_alive(parent):   # it died before the signal was armed
        os._exit(3)
    _watch_parent(parent)


def _take_lock(path: str) -> bool:
    """Hold the exclusive lock on ``path`` for the rest of this process; False if taken."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fh = open(path, "a+")
    try:
        if os.name == "nt":
            import msvcrt

            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        return False
    _HELD.append(fh)
    return True


def _lock_busy(path: str) -> bool:
    """Whether a warm-up process holds the lock on ``path`` now."""
    if os.name == "nt" or not os.path.exists(path):
        return False
    import fcntl

    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return False


def _wait_for_lock(path: str, timeout: float = 3600.0) -> None:
    end = time.monotonic() + timeout
    while _lock_busy(path) and time.monotonic() < end:
        time.sleep(1.0)


def _child_setup(argv: list[str]) -> bool:
    """The child's lifecycle (``--parent PID``, ``--package DIR``, ``--hold FILE``): die
    with the parent, say which bnexplore it imported, take the cache folder's lock
    (False, after printing :data:`CHILD_BUSY`, if another warm-up holds it)."""
    def arg(name: str) -> str | None:
        return argv[argv.index(name) + 1] if name in argv[:-1] else None

    parent = arg("--parent")
    if parent is not None:
        _die_with_parent(int(parent))
    expected = arg("--package")
    if expected is not None and not _same_dir(expected, _package_dir()):
        print(f"bnexplore {_package_dir()}", flush=True)
        return False       # another bnexplore than the server's: warming it is useless
    locked = _take_lock(child_lock_path())
    print(f"bnexplore {_package_dir()}", flush=True)     # (said once the lock is decided)
    if not locked:
        print(CHILD_BUSY, flush=True)
        return False
    hold = arg("--hold")
    end = time.monotonic() + 600.0
    while hold and os.path.exists(hold) and time.monotonic() < end:
        time.sleep(0.05)
    return True


def _child_main(argv: list[str] | None = None) -> int:
    """``python -m bnexplore.warmup --child``: warm up, saying "compiling" once on the
    first cache miss and "ready" at the end (read by :func:`start_warm_up`)."""
    import sys

    if not _child_setup(list(argv or [])):
        return 0
    from numba.core import event

    try:
        os.nice(10)           # spare CPU only: the server's own work comes first
    except (AttributeError, OSError):
        pass
    said = []

    class _Say(event.Listener):
        def on_start(self, ev) -> None:
            if not said:
                said.append(True)
                print("compiling", flush=True)

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", _Say())
    warm_up.errors.clear()
    warm_up()
    if not warm_up.errors:
        _write_stamp()        # every step ran: later starts skip the warm-up
    print("ready", flush=True)
    for name, err in warm_up.errors.items():
        print(f"warm-up step {name!r} failed: {err}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- stamp
# A later start needs no warm-up: every kernel is in numba's cache and loads in
# milliseconds when a view first calls it. Spawning the warm-up process anyway costs a
# Python start, the imports and the loading of every kernel of every app (seconds of
# CPU on a 2-core machine, taken from the first view), and loading every kernel into
# the server costs as much again. So a complete warm-up leaves a stamp next to numba's
# cache files, and a start that finds it (and finds the cache still there) skips the
# warm-up. Finding numba's cache folder and the stamp's name takes numba itself (half a
# second of imports); a pointer file in bnexplore's cache folder, named by what can be
# known without numba (:func:`_pointer_key`), names the stamp, so a later start checks
# it with two file lookups.
def _sentinel():
    """A kernel of :mod:`bnexplore.scores` with an on-disk cache (every app needs that
    module): the first by name, so every process picks the same. Its cache folder (that
    of the module) holds the stamp."""
    from numba.core.registry import CPUDispatcher

    from . import scores

    kernels = sorted((name, obj) for name, obj in vars(scores).items()
                     if isinstance(obj, CPUDispatcher)
                     and hasattr(getattr(obj, "_cache", None), "cache_path"))
    return kernels[0][1]


def _stamp_key() -> str:
    """What the numba cache's validity depends on: versions and every source's stamp."""
    import numba

    try:   # numba's cache entries are per CPU model too (a cache shared by machines)
        from llvmlite import binding
        cpu = binding.get_host_cpu_name()
    except Exception:  # noqa: BLE001
        cpu = "?"
    return _sources_key(f"{numba.__version__}|{cpu}")


def _pointer_key() -> str:
    """:func:`_stamp_key` without numba: its version from the installed metadata and
    numba's cache setting instead of the CPU model (the stamp's own name has that)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        numba_version = version("numba")
    except PackageNotFoundError:
        numba_version = "-"
    return _sources_key(f"{numba_version}|{os.environ.get('NUMBA_CACHE_DIR', '')}")


def _sources_key(extra: str) -> str:
    import hashlib
    import sys

    from . import __version__

    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    h.update(f"{__version__}|{extra}|{sys.version}|{sys.executable}".encode())
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                st = os.stat(os.path.join(dirpath, fn))
                # numba reuses a cached kernel while its source's time stamp and size hold
                h.update(f"{os.path.relpath(os.path.join(dirpath, fn), root)}|"
                         f"{st.st_mtime_ns}|{st.st_size}\n".encode())
    return h.hexdigest()[:20]


def stamp_path() -> str | None:
    """The file that says "every kernel is cached" for this code, or None if unknown.

    It lies in the folder of numba's cache files of bnexplore's kernels
    (``__pycache__`` next to the sources, or under ``NUMBA_CACHE_DIR``), so removing
    that cache removes the stamp too. Its name holds a hash of bnexplore's and numba's
    versions and the time stamps of every source file, so an edit or an upgrade makes
    the next start warm up again.

    Examples
    --------
    >>> p = stamp_path()
    >>> p is None or p.endswith(".stamp")
    True
    """
    try:
        folder = _sentinel()._cache.cache_path
        return os.path.join(folder, f"bnexplore-warm-up-{_stamp_key()}.stamp")
    except Exception:  # noqa: BLE001 - no cache (NUMBA_DISABLE_JIT...), other numba versions
        return None


def is_warm() -> bool:
    """True when a complete warm-up of this code has filled numba's cache (a stamp is there).

    Examples
    --------
    >>> is_warm() in (True, False)
    True
    """
    if _stamp_pointed_to():
        return True
    path = stamp_path()
    if path is not None and os.path.exists(path) and _kernels_next_to(path):
        _write_pointer(path)
        return True
    return False


def _kernels_next_to(stamp: str) -> bool:
    """The stamp's folder still holds cached kernels of bnexplore.scores (a cache
    emptied by hand is not warm)."""
    try:
        return any(f.startswith("scores.") and f.endswith(".nbi")
                   for f in os.listdir(os.path.dirname(stamp)))
    except OSError:
        return False


def _pointer_path() -> str:
    from .cache import cache_dir

    return str(cache_dir() / "warm-up" / f"{_pointer_key()}.txt")


def _stamp_pointed_to() -> bool:
    """Whether the pointer file names a stamp that is there, next to cached kernels."""
    try:
        with open(_pointer_path(), encoding="utf-8") as fh:
            stamp = fh.read().strip()
    except (OSError, ValueError):
        return False
    return bool(stamp) and os.path.exists(stamp) and _kernels_next_to(stamp)


def _write_pointer(stamp: str) -> None:
    try:
        path = _pointer_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(stamp + "\n")
        os.replace(tmp, path)
    except OSError:
        pass


def _write_stamp() -> None:
    path = stamp_path()
    if path is None:
        return
    try:
        folder = os.path.dirname(path)
        for old in os.listdir(folder):      # stamps of other code versions
            if old.startswith("bnexplore-warm-up-") and old.endswith(".stamp"):
                try:
                    os.unlink(os.path.join(folder, old))
                except OSError:
                    pass
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} every warm-up step cached\n")
        os.replace(tmp, path)
    except OSError:
        return
    _write_pointer(path)


def start_warm_up() -> threading.Thread:
    """Run :func:`warm_up` in a daemon thread, once per process; returns that thread.

    The kernels are compiled by a separate, lower-priority process (``python -m
    bnexplore.warmup``) that fills numba's on-disk cache; this thread follows it and
    keeps :func:`status`. Later calls return the same thread. For tests, the environment variable
    ``BNX_WARMUP_TEST_HOLD`` may name a file: while it exists the warm-up first holds
    numba's compiler lock in the ``"compiling"`` state, as a long first compilation
    would.

    Examples
    --------
    A server starts it when it loads (``apps/app_hooks.py``)::

        from bnexplore import warmup
        warmup.start_warm_up()
    """
    with _LOCK:
        if _THREAD:
            return _THREAD[0]
        hold = os.environ.get(TEST_HOLD_ENV, "")
        _STATE["status"] = "loading"
        t = threading.Thread(target=_run, args=(hold,), name="bnx-warm-up", daemon=True)
        _THREAD.append(t)
    t.start()
    return t


if __name__ == "__main__":
    import sys

    if "--child" in sys.argv[1:]:
        raise SystemExit(_child_main(sys.argv[1:]))
    t0 = time.perf_counter()
    for step, sec in warm_up().items():
        print(f"{step}: {sec:.1f} s")
    for step, err in warm_up.errors.items():
        print(f"warm-up step {step!r} failed: {err}", file=sys.stderr)
    if not warm_up.errors:
        _write_stamp()
    print(f"kernels ready in {time.perf_counter() - t0:.1f} s")
