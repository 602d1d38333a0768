"""Command line interface: ``bnexplore list``, ``bnexplore run NAME`` and ``bnexplore report``.

Examples
--------
::

    bnexplore list
    bnexplore run demo_sampling --size reduced --out demo.csv --n-jobs 2
    bnexplore run demo_sampling --size full --scheduler tcp://10.0.0.5:8786
    bnexplore run demo_sampling --size full --random-states 5-39   # some replicates
    bnexplore run demo_sampling --size full --where n_nodes=10,20   # some settings
    bnexplore report                  # regenerate docs/reproduction/README.md
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

__all__ = ["main", "build_parser", "parse_seeds", "parse_where"]


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``bnexplore`` command."""
    parser = argparse.ArgumentParser(
        prog="bnexplore",
        description="Run the experiments of the papers reproduced by bnexplore.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sub.add_parser("list", help="list registered experiments with their descriptions",
                   description="List registered experiments with their descriptions "
                               "and numbers of trials.")

    run = sub.add_parser(
        "run", help="run a registered experiment",
        description="Run a registered experiment. Each finished trial is appended to "
                    "the results file at once; rerunning the same command skips the "
                    "finished trials, so an interrupted run resumes where it stopped.")
    run.add_argument("name", metavar="NAME", help="experiment name (see 'bnexplore list')")
    run.add_argument("--size", choices=("reduced", "full"), default="reduced",
                     help="reduced grid (quick, default) or the paper's full grid")
    run.add_argument("--out", metavar="FILE", default=None,
                     help="results file, .csv or .parquet (default: NAME_SIZE.csv)")
    run.add_argument("--n-jobs", metavar="N", type=int, default=1,
                     help="local worker processes (-1: all cores; default 1)")
    run.add_argument("--scheduler", metavar="ADDRESS", default=None,
                     help="Dask scheduler address, e.g. tcp://host:8786; runs on Dask "
                          "instead of locally")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.add_argument("--no-resume", action="store_true",
                     help="start afresh, overwriting FILE, instead of skipping finished "
                          "trials")
    run.add_argument("--retry-errors", action="store_true",
                     help="rerun trials whose earlier run recorded an error")
    run.add_argument("--where", metavar="KEY=V1,V2", action="append", default=None,
                     type=parse_where,
                     help="run only the settings whose grid parameter KEY has one of these "
                          "values (repeatable, e.g. --where n_attributes=5,10); trials and "
                          "results file as without --where")
    run.add_argument("--random-states", "--seeds", dest="random_states", metavar="SPEC",
                     default=None, type=parse_seeds,
                     help="run only these of the experiment's random states (its "
                          "replicates, the random_state column), e.g. '5-39' or "
                          "'5,7,10-12' (every trial of these at once; finished trials are "
                          "saved as they finish); trials and results file as without "
                          "--random-states.  --seeds is the same option under its name "
                          "before 0.2.0")
    run.add_argument("--numba-threads", metavar="N", type=int, default=1,
                     help="numba threads of each worker process (--n-jobs other than 1, "
                          "or Dask; default 1: one per worker)")

    rep = sub.add_parser(
        "report", help="regenerate docs/reproduction/README.md",
        description="Collect the per-paper reproduction files (docs/reproduction/<paper>.md), "
                    "the registered experiments and the state of their results files into "
                    "the reproduction index.")
    rep.add_argument("--docs", metavar="DIR", default="docs/reproduction",
                     help="folder of the per-paper files (default docs/reproduction)")
    rep.add_argument("--results", metavar="DIR", default=None,
                     help="folder of the results files (default DOCS/results)")
    rep.add_argument("--out", metavar="FILE", default=None,
                     help="output file (default DOCS/README.md); '-' prints it")
    return parser


def parse_seeds(spec: str) -> list[int]:
    """Random states (ints) from ``"5-39"``, ``"3"`` or ``"5,7,10-12"`` (ranges include
    both ends): the value of ``--random-states``.

    Examples
    --------
    >>> parse_seeds("5,7,10-12")
    [5, 7, 10, 11, 12]
    """
    seeds: list[int] = []
    try:
        for part in spec.split(","):
            lo, _, hi = part.strip().partition("-")
            if hi and int(hi) < int(lo):
                raise ValueError(part)
            seeds += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"random states {spec!r}: write non-negative integers and increasing ranges such "
            f"as '5-39' or '5,7,10-12'") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"random states {spec!r} name no random state")
    return list(dict.fromkeys(seeds))


def parse_where(spec: str) -> tuple[str, list[str]]:
    """``"key=v1,v2"`` -> ``("key", ["v1", "v2"])``.

    Examples
    --------
    >>> parse_where("n_attributes=5,10")
    ('n_attributes', ['5', '10'])
    """
    key, eq, values = spec.partition("=")
    vals = [v.strip() for v in values.split(",") if v.strip()]
    if not eq or not key.strip() or not vals:
        raise argparse.ArgumentTypeError(f"--where {spec!r}: write KEY=VALUE[,VALUE...], "
                                         f"e.g. n_attributes=5,10")
    return key.strip(), vals


def _cmd_report(args: argparse.Namespace) -> int:
    from bnexplore import report

    try:
        if args.out == "-":
            print(report.build_report(args.docs, args.results))
            return 0
        path = report.write_report(args.docs, args.out, args.results)
    except ValueError as exc:
        print(f"bnexplore report: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def _cmd_list() -> int:
    from bnexplore import experiments

    names = experiments.names()
    if not names:
        print("no experiments registered")
        return 0
    width = max(len(n) for n in names)
    for name in names:
        exp = experiments.get(name)
        sizes = f"reduced {exp.n_trials('reduced')} trials, full {exp.n_trials('full')}"
        print(f"{name:<{width}}  {exp.description}  ({sizes})")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from bnexplore import experiments

    if args.n_jobs == 0:
        print("bnexplore run: error: --n-jobs must be a non-zero integer", file=sys.stderr)
        return 2
    try:
        experiments.get(args.name)
    except KeyError as exc:
        print(f"bnexplore run: error: {exc.args[0]}", file=sys.stderr)
        return 2
    out = args.out or f"{args.name}_{args.size}.csv"
    backend = "dask" if args.scheduler else "local"
    if args.numba_threads < 1:
        print("bnexplore run: error: --numba-threads must be a positive integer", file=sys.stderr)
        return 2
    try:
        df = experiments.run_named(
            args.name, size=args.size, out=out, backend=backend, n_jobs=args.n_jobs,
            scheduler=args.scheduler, progress=not args.no_progress, resume=not args.no_resume,
            retry_errors=args.retry_errors, random_states=args.random_states,
            where=dict(args.where) if args.where else None, numba_threads=args.numba_threads)
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished trials are saved in {out}; rerun the same command "
              f"to resume", file=sys.stderr)
        return 130
    except (ValueError, ConnectionError) as exc:
        print(f"bnexplore run: error: {exc}", file=sys.stderr)
        return 2
    n_err = int(df["error"].notna().sum()) if "error" in df.columns else 0
    n_trials = df["trial_id"].nunique() if "trial_id" in df.columns else 0
    print(f"{args.name} ({args.size}): {n_trials} trials, {len(df)} rows in {out}"
          + (f"; {n_err} rows with errors (see the 'error' column)" if n_err else ""))
    return 1 if n_err else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bnexplore`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 when some trials failed, 2 on a usage error, 130 when
        interrupted.
    """
    args = build_parser().parse_args(argv)
    if args.command == "list":
        return _cmd_list()
    if args.command == "report":
        return _cmd_report(args)
    return _cmd_run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
