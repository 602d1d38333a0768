"""Run every engine benchmark script in turn and keep their output in benchmarks/RESULTS.txt.

The two app-level benchmarks start servers and browsers, take long, and keep their own
outputs (README tables, ``first_start_*.txt``): run them by hand.

Run: python benchmarks/run_all.py
"""
from __future__ import annotations

import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
#: app-level benchmarks (servers, browsers): run by hand
BY_HAND = {"bench_load.py", "bench_first_start.py"}


def main() -> int:
    lines = [f"# bnexplore benchmarks, {time.strftime('%Y-%m-%d %H:%M')}",
             f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}", ""]
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        if script.name in BY_HAND:
            continue
        print(f"== {script.name}", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=HERE.parent)
        out = proc.stdout.strip()
        print(out, flush=True)
        if proc.returncode:
            status = 1
            print(proc.stderr[-2000:], file=sys.stderr)
        lines += [f"== {script.name} ({time.perf_counter() - t0:.0f} s, exit {proc.returncode})", out, ""]
    (HERE / "RESULTS.txt").write_text("\n".join(lines) + "\n")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
