#!/usr/bin/env python3
"""Sharded `morello-db precompute` on Ray.

Fills a Morello synthesis database with a family of Matmuls, one stage at a time: every
pending stage is cut into N shards, each solved by a Ray task running `morello-db precompute
--shard I/N` against a copy of the database so far; the driver then merges the N shard files
into the database (`morello-db merge`), which records the stage as done. Stop it at any point
and rerun it: stages already merged are skipped.

The database travels to the tasks, and their answers back, through Ray's object store, so
workers need no shared file system -- only `morello-db` on their PATH (or at --morello-db).

    python3 deploy/ray/precompute.py --target avx2 --matmul 512 --shards 16 --db avx2.fast.morellodb
    python3 deploy/ray/precompute.py ... --address auto      # an existing cluster
    python3 deploy/ray/precompute.py ... --local-mode        # every task in this process
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import ray


def database_name(stem, target, space):
    """A file name `morello-db` accepts for a database of `space` (see `morello-db --help`)."""
    tag = "" if space == "full" else f".{space}"
    return f"{stem}.{target}{tag}.morellodb"


def family_options(args):
    """The options naming the target, family and search space, common to every command."""
    return ["--target", args.target, "--matmul", str(args.matmul), "--dtype", args.dtype, "--space", args.space]


@ray.remote
def solve_shard(morello_db, options, base, stage, index, count, jobs, target, space):
    """Solves shard `index`/`count` of `stage`, reading the database whose bytes are `base`
    (None: empty); returns the shard file's bytes and `morello-db`'s report."""
    with tempfile.TemporaryDirectory(prefix="morello-shard-") as work:
        base_path = os.path.join(work, database_name("base", target, space))
        out_path = os.path.join(work, database_name(f"shard{index}", target, space))
        if base is not None:
            with open(base_path, "wb") as f:
                f.write(base)
        command = [morello_db, "precompute", *options, "--db", base_path, "--shard", f"{index}/{count}",
                   "--stage", stage, "--out", out_path, "--jobs", str(jobs)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"shard {index}/{count} of `{stage}` failed:\n{done.stderr}")
        with open(out_path, "rb") as f:
            return f.read(), done.stderr.strip().splitlines()[-1:]


def run(command):
    """Runs a `morello-db` command, returning its standard output; exits on failure."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True, help="avx2, avx512 or portable")
    parser.add_argument("--matmul", required=True, type=int, help="the family's largest dimension (a power of two)")
    parser.add_argument("--dtype", default="f32")
    parser.add_argument("--space", default="fast", help="fast (the default of build scripts), full, ...")
    parser.add_argument("--shards", type=int, default=4, help="tasks per stage")
    parser.add_argument("--jobs", type=int, default=1, help="threads (and Ray CPUs) per task")
    parser.add_argument("--db", required=True, help="the database to fill, named for its target and space")
    parser.add_argument("--morello-db", default="morello-db", help="the morello-db binary on every worker")
    parser.add_argument("--address", default=None, help="a Ray cluster's address (default: start one here)")
    parser.add_argument("--local-mode", action="store_true", help="run every task in this process")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of the cluster started here")
    args = parser.parse_args()
    if args.shards < 1 or args.jobs < 1:
        sys.exit("--shards and --jobs must be at least 1")

    options = family_options(args)
    pending = [line for line in run([args.morello_db, "stages", *options, "--db", args.db]).splitlines() if line]
    if not pending:
        print(f"every stage is done in {args.db}")
        return
    init = {"address": args.address} if args.address else {"num_cpus": args.num_cpus}
    if args.local_mode:
        init = {"local_mode": True}
    ray.init(**init, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    task = solve_shard.options(num_cpus=args.jobs)
    with tempfile.TemporaryDirectory(prefix="morello-merge-") as work:
        for number, stage in enumerate(pending, 1):
            started = time.monotonic()
            base = None
            if os.path.exists(args.db):
                with open(args.db, "rb") as f:
                    base = f.read()
            base_ref = ray.put(base)
            refs = [task.remote(args.morello_db, options, base_ref, stage, index, args.shards, args.jobs,
                                args.target, args.space) for index in range(args.shards)]
            files = []
            for index, (data, _report) in enumerate(ray.get(refs)):
                path = os.path.join(work, database_name(f"shard{index}", args.target, args.space))
                with open(path, "wb") as f:
                    f.write(data)
                files.append(path)
            run([args.morello_db, "merge", "--target", args.target, "--space", args.space, "--db", args.db, *files])
            for path in files:
                os.remove(path)
            print(f"[{number}/{len(pending)}] {stage}: {args.shards} shards merged in "
                  f"{time.monotonic() - started:.1f} s", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
