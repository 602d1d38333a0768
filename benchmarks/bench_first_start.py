"""First start: time from `panel serve apps/` to each app's first plot, cold and warm.

A fresh install has an empty numba cache, so every kernel an app needs compiles on its
first call. This script copies the package and the apps into a temporary folder (no
``__pycache__``, so no cached kernels next to the sources), points ``NUMBA_CACHE_DIR``
at a new empty folder (numba then writes and reads its cache only there), and for each
app

* starts ``panel serve apps/`` and opens ``/apps?app=NAME`` in headless Chromium, timing
  from the server's start to the first Bokeh canvas on the page (**cold**: empty cache,
  a new cache per app, so no app profits from another's compilation);
  The server's warm-up process is killed with the server (it must not compile on
  during the next figure);
* then fills one cache with every kernel (``python -m bnexplore.warmup``, what a
  server's warm-up leaves behind) and starts each app twice with it, timed the same
  way (**warm**: a later start; the first of the two also fills bnexplore's results
  cache, ``BNX_CACHE_DIR``, which only the Compare app uses, so its second figure is
  the later start).

Python's bytecode of the copied modules is written on a first start and read on later
ones, as on a user's machine, even where the calling shell sets
``PYTHONDONTWRITEBYTECODE``.

The load average before and after each figure is printed with it: the machine is
shared, and a figure taken at load 12 on two cores is about six times the idle one;
the server's CPU seconds depend much less on the load.

``--root DIR`` keeps the copy and the warm cache in ``DIR``: a later run with the same
folder measures warm starts only (``--repeat`` times), and ``--profile`` samples the warm
servers' stacks (``_sampler.py``) and prints where the busy seconds went up to the first
plot.

``--kernels`` instead times, in one cold process, the first call of each heavy public
function the apps use and lists the kernels (and type specialisations) whose
compilation took longest, from numba's compile events.

Run: python benchmarks/bench_first_start.py [--apps order_averaging,forests] [--kernels]
                                            [--no-warm] [--timeout 900]
                                            [--root DIR [--repeat 3] [--profile]]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPS = ["clustering", "compare", "forests", "ismb_trace", "mixture_weights",
        "order_averaging", "structure"]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]


def fresh_copy(root: Path) -> Path:
    """The package and the apps copied into ``root/pkg`` without any ``__pycache__``."""
    dst = root / "pkg"
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc")
    shutil.copytree(REPO / "bnexplore", dst / "bnexplore", ignore=ignore)
    shutil.copytree(REPO / "apps", dst / "apps", ignore=ignore)
    return dst


def _env(cache: Path, pkg: Path) -> dict:
    # numba's kernels and bnexplore's results (bnexplore.cache) both cached next to each
    # other, so a new cache folder is a fresh install and a reused one a later start
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONUNBUFFERED="1", BOKEH_BROWSER="none",
               PYTHONPATH=str(pkg), BNX_CACHE_DIR=str(cache / "bnexplore-results"))
    # Python writes the bytecode of the copy's modules on a first start and reads it on
    # later ones, as on a user's machine (a sandbox may switch that off for its shell)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc), NaN elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def time_first_plot(browser, pkg: Path, cache: Path, app: str, timeout: float,
                    profile: Path | None = None) -> tuple[float, float, float]:
    """Seconds to the server's first answer and to the app's first canvas, and the
    server's CPU seconds by then (a figure that depends less on the machine's load).

    With ``profile``, the server runs under ``benchmarks/_sampler.py``, which writes
    every thread's stacks to that file (see :func:`_sampler.summarise`)."""
    port = _free_port()
    cmd = [sys.executable, "-m", "panel", "serve", "apps/", "--port", str(port),
           "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}"]
    if profile is not None:
        cmd[1:1] = [str(Path(__file__).resolve().parent / "_sampler.py"), str(profile)]
    log = open(pkg.parent / f"serve-{app}.log", "a")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=pkg, env=_env(cache, pkg), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"panel serve exited ({proc.returncode}); see {log.name}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/apps", timeout=5):
                    break
            except OSError:
                time.sleep(0.1)
        t_server = time.perf_counter() - t0
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = ctx.new_page()
            page.goto(f"http://127.0.0.1:{port}/apps?app={app}", wait_until="domcontentloaded",
                      timeout=timeout * 1000)
            # Bokeh draws in canvases inside shadow roots: Playwright locators pierce them
            page.locator("canvas").first.wait_for(state="attached", timeout=timeout * 1000)
            t_plot = time.perf_counter() - t0
            cpu = _cpu_seconds(proc.pid)
        finally:
            ctx.close()
        return t_server, t_plot, cpu
    finally:
        _stop_children(proc.pid)    # the warm-up process: it must not go on compiling
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _stop_children(pid: int) -> None:
    """Kill the child processes of ``pid`` (Linux /proc; elsewhere nothing)."""
    import signal

    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                os.kill(int(stat.parent.name), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            continue


def _sync_copy(pkg: Path) -> None:
    """Bring the copy up to date, file by file (unchanged files keep their time stamps,
    so numba's cache of their kernels stays valid)."""
    import filecmp

    for sub in ("bnexplore", "apps"):
        for src in (REPO / sub).rglob("*"):
            if "__pycache__" in src.parts or src.is_dir() or src.suffix in (".nbi", ".nbc", ".pyc"):
                continue
            dst = pkg / src.relative_to(REPO)
            if not dst.exists() or not filecmp.cmp(src, dst, shallow=False):
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


def _load() -> float:
    return os.getloadavg()[0]


def _fresh_pkg(pkg: Path) -> None:
    for sub in ("bnexplore", "apps"):   # no __pycache__ left
        shutil.rmtree(pkg / sub, ignore_errors=True)
        shutil.copytree(REPO / sub, pkg / sub, ignore=shutil.ignore_patterns(
            "__pycache__", "*.nbi", "*.nbc", "*.pyc"))


def _fill_cache(pkg: Path, cache: Path) -> None:
    """Every kernel cached, as a server whose warm-up has finished leaves it."""
    t0, load = time.perf_counter(), _load()
    subprocess.run([sys.executable, "-m", "bnexplore.warmup"], cwd=pkg, env=_env(cache, pkg),
                   stdout=subprocess.DEVNULL, check=True)
    print(f"  (every kernel cached by python -m bnexplore.warmup in "
          f"{time.perf_counter() - t0:.0f} s, load {load:.1f}-{_load():.1f})", flush=True)


def bench_apps(apps: list[str], warm: bool, timeout: float, root: Path | None = None,
               repeat: int = 2, profile: bool = False) -> None:
    """Cold and warm first plots of ``apps``.

    Cold: each app with a new, empty numba cache. Warm: one cache that holds every
    kernel (``python -m bnexplore.warmup``, what a server's warm-up leaves), each app
    started ``repeat`` times (its first start there fills bnexplore's results cache:
    the second is a later start of that app). With ``root`` (a folder kept between
    runs) the cold starts are skipped once that cache exists. ``profile`` samples the
    warm servers' stacks (``_sampler``) and prints where their CPU went up to the plot.
    """
    from playwright.sync_api import sync_playwright

    keep = root is not None
    with contextlib.ExitStack() as stack:
        if root is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bnx-first-start-")))
        root.mkdir(parents=True, exist_ok=True)
        p = stack.enter_context(sync_playwright())
        pkg = root / "pkg"
        warm_cache = root / "numba-cache-warm"
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            if not (keep and warm_cache.exists()):
                for app in apps:
                    cache = root / f"numba-cache-{app}"
                    shutil.rmtree(cache, ignore_errors=True)
                    cache.mkdir()
                    _fresh_pkg(pkg)
                    try:
                        load = _load()
                        srv, cold, cpu = time_first_plot(browser, pkg, cache, app, timeout)
                        print(f"first start {app}: cold {cold:.1f} s (server up {srv:.1f} s, "
                              f"server CPU {cpu:.1f} s, load {load:.1f}-{_load():.1f})", flush=True)
                    except Exception as exc:  # noqa: BLE001 - report and go on
                        print(f"first start {app}: cold FAILED ({type(exc).__name__}: "
                              f"{str(exc)[:200]})", flush=True)
                    shutil.rmtree(cache, ignore_errors=True)
            if not warm:
                return
            if warm_cache.exists():
                # the copy brought up to date, and the warm-up run for it: its stamp names
                # the sources, so after any edit of bnexplore a server would run the
                # warm-up again beside the measured start (seconds when all is cached)
                _sync_copy(pkg)
                _fill_cache(pkg, warm_cache)
            else:
                _fresh_pkg(pkg)
                warm_cache.mkdir()
                _fill_cache(pkg, warm_cache)
            for app in apps:
                line = f"later start {app}:"
                for i in range(repeat):
                    prof = root / f"stacks-{app}-{i}.txt" if profile else None
                    try:
                        load = _load()
                        srv, hot, cpu = time_first_plot(browser, pkg, warm_cache, app, timeout, prof)
                        line += (f"{',' if i else ''} warm {hot:.1f} s (server up {srv:.1f} s, "
                                 f"server CPU {cpu:.1f} s, load {load:.1f}-{_load():.1f})")
                    except Exception as exc:  # noqa: BLE001
                        line += f", warm FAILED ({type(exc).__name__}: {str(exc)[:200]})"
                        continue
                    if prof is not None:
                        sys.path.insert(0, str(Path(__file__).resolve().parent))
                        from _sampler import summarise
                        print(f"--- {app} warm start {i}: CPU up to the first plot "
                              f"({prof})\n{summarise(str(prof), until=hot)}", flush=True)
                print(line, flush=True)
        finally:
            browser.close()


# --------------------------------------------------------------------------- kernels
_KERNEL_SCRIPT = textwrap.dedent(r'''
    import collections, threading, time
    import numba
    from numba.core import event

    events = []          # (CPU seconds of the compiling thread, exclusive, name, signature)
    stack = threading.local()

    class Timer(event.Listener):
        def on_start(self, ev):
            st = getattr(stack, "s", None) or []
            stack.s = st
            st.append([time.thread_time(), 0.0])
        def on_end(self, ev):
            t0, inner = stack.s.pop()
            dt = time.thread_time() - t0
            if stack.s:
                stack.s[-1][1] += dt
            d = ev.data.get("dispatcher")
            name = getattr(getattr(d, "py_func", None), "__qualname__", str(d))
            mod = getattr(getattr(d, "py_func", None), "__module__", "")
            events.append((dt - inner, f"{mod}.{name}", str(ev.data.get("args"))))

    event.register("numba:compile", Timer())

    import bnexplore as bx
    from bnexplore.classifiers import (AMA, AODE, BMAAODE, MAPLMD, MAPLMG, SFAN, ISMB,
                                       GreedyThickThin, NaiveAveraging, NaiveBayes)

    vote = bx.datasets.load("vote", missing="state")
    X, y = vote.drop(columns=vote.attrs["target"]), vote[vote.attrs["target"]]
    asia = bx.networks.load("asia").sample(1000, random_state=0)
    calls = [
        ("import bnexplore", None),
        ("LocalScore.score (asia, BDeu)", lambda: bx.scores.LocalScore(asia, prior="BDeu").score("dysp", ["bronc", "either"])),
        ("greedy_thick_thin (asia)", lambda: bx.search.greedy_thick_thin(asia, order=None)),
        ("OrderedAveraging.arc_posteriors (vote, k=2)", lambda: bx.averaging.OrderedAveraging(vote, order=list(vote.columns), max_parents=2).arc_posteriors()),
        ("AMA (order from GTT) fit, M* n=4, predict (vote)", lambda: AMA(max_parents=2, n=None, order="gtt").fit(X, y).averagings_[0].summary_network(4).predict_proba(X, "__class__")),
        ("NaiveAveraging fit+predict (vote)", lambda: NaiveAveraging().fit(X, y).predict_proba(X)),
        ("GreedyThickThin fit+predict (vote)", lambda: GreedyThickThin().fit(X, y).predict_proba(X)),
        ("NaiveBayes fit+predict (vote)", lambda: NaiveBayes().fit(X, y).predict_proba(X)),
        ("AODE fit+predict (vote)", lambda: AODE().fit(X, y).predict_proba(X)),
        ("BMAAODE fit+predict (vote)", lambda: BMAAODE().fit(X, y).predict_proba(X)),
        ("MAPLMD fit+predict (vote)", lambda: MAPLMD().fit(X, y).predict_proba(X)),
        ("MAPLMG fit+predict (vote)", lambda: MAPLMG().fit(X, y).predict_proba(X)),
        ("SFAN fit+predict (vote)", lambda: SFAN().fit(X, y).predict_proba(X)),
        ("SFAN bma fit+predict (vote)", lambda: SFAN(averaging="bma").fit(X, y).predict_proba(X)),
        ("clustering.hierarchy+greedy_search (asia)", lambda: (bx.clustering.hierarchy(asia), bx.clustering.greedy_search(asia))),
        ("ISMB fit+predict (vote, 5 rows)", lambda: ISMB().fit(X, y).predict_proba(X.iloc[:5])),
    ]
    t_all = time.perf_counter()
    for what, fn in calls:
        n0, t0, c0 = len(events), time.perf_counter(), time.process_time()
        if fn is not None:
            fn()
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        comp = sum(e[0] for e in events[n0:])
        print(f"first call {what}: {dt:.1f} s wall, {cpu:.1f} s CPU (compiling {comp:.1f} s CPU, "
              f"{len(events) - n0} compilations)", flush=True)
    print(f"first calls in all: {time.perf_counter() - t_all:.1f} s wall, compiling "
          f"{sum(e[0] for e in events):.1f} s CPU, {len(events)} compilations", flush=True)
    per = collections.defaultdict(lambda: [0.0, 0])
    for dt, name, sig in events:
        per[name][0] += dt
        per[name][1] += 1
    print("kernels by compile time (CPU seconds, number of type specialisations):")
    for name, (dt, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f"  {dt:6.1f} s  x{n}  {name}")
    multi = [(n, name) for name, (dt, n) in per.items() if n > 1]
    for n, name in sorted(multi, reverse=True):
        sigs = [s for _, nm, s in events if nm == name]
        print(f"  {name}: {n} signatures: " + " | ".join(s[:160] for s in sigs))
''')


def bench_kernels() -> None:
    with tempfile.TemporaryDirectory(prefix="bnx-first-start-") as tmp:
        root = Path(tmp)
        pkg = fresh_copy(root)
        cache = root / "numba-cache"
        cache.mkdir()
        subprocess.run([sys.executable, "-c", _KERNEL_SCRIPT], cwd=pkg, env=_env(cache, pkg),
                       check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--kernels", action="store_true", help="first calls and compile times only")
    ap.add_argument("--no-warm", action="store_true")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per page")
    ap.add_argument("--root", type=Path, default=None,
                    help="keep the copy and the caches in this folder; an app whose cache "
                         "is filled there is measured warm only")
    ap.add_argument("--repeat", type=int, default=2, help="warm starts per app")
    ap.add_argument("--profile", action="store_true",
                    help="sample the warm servers' stacks and print where the time went")
    args = ap.parse_args()
    if args.kernels:
        bench_kernels()
        return 0
    if not os.path.exists(CHROMIUM):
        print(f"first start: skipped ({CHROMIUM} not found)")
        return 0
    bench_apps([a for a in args.apps.split(",") if a], not args.no_warm, args.timeout,
               root=args.root, repeat=args.repeat, profile=args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
