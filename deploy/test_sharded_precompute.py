#!/usr/bin/env python3
"""Sharded precompute through the engines in deploy/, checked against one process.

Each test fills a database with Matmuls up to 32 (AVX2 target, the default fast space) in
shards through one engine, then `morello-db compare --matmul 32` checks it against a database
that one `morello-db precompute` process filled: every Spec of the family answered by both at
the same cost, and every point both databases answer equal.

- Ray: deploy/ray/precompute.py on a Ray cluster started on this machine.
- Slurm: deploy/slurm/precompute.sh, with a stand-in `sbatch` that runs an array's tasks one
  after another (Slurm itself is not installable here).
- Kubernetes: the commands of the Jobs that deploy/kubernetes/precompute.sh applies, rendered
  from the manifests as that script renders them and run with the variables Kubernetes sets
  (`JOB_COMPLETION_INDEX`); the manifests must parse as Indexed Jobs.

    MORELLO_DB=target/release/morello-db python3 deploy/test_sharded_precompute.py
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
MORELLO_DB = os.path.abspath(os.environ.get("MORELLO_DB", "target/release/morello-db"))
FAMILY = ["--target", "avx2", "--matmul", "32", "--space", "fast"]


def run(command, **kwargs):
    """Runs `command`, failing the test with its output if it fails; returns its stdout."""
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{command} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


class ShardedPrecompute(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="morello-sharded-")
        cls.single = os.path.join(cls.work, "single.avx2.fast.morellodb")
        run([MORELLO_DB, "precompute", *FAMILY, "--jobs", "1", "--db", cls.single])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def assert_matches_single_process(self, db):
        out = run([MORELLO_DB, "compare", *FAMILY, "--db", self.single, db])
        self.assertIn("0 different costs", out)
        self.assertIn("all 216 Specs of the family answered by both, at the same cost", out)
        self.assertEqual(run([MORELLO_DB, "stages", *FAMILY, "--db", db]), "", "every stage is recorded as done")

    def test_ray(self):
        db = os.path.join(self.work, "ray.avx2.fast.morellodb")
        driver = [sys.executable, os.path.join(HERE, "ray", "precompute.py"), *FAMILY, "--shards", "3",
                  "--num-cpus", "2", "--db", db, "--morello-db", MORELLO_DB]
        out = run(driver)
        self.assertIn("[6/6] matmul f32 32: 3 shards merged", out)
        self.assert_matches_single_process(db)
        self.assertIn("every stage is done", run(driver), "a rerun starts nothing")

    def test_slurm(self):
        bin_dir = os.path.join(self.work, "slurm-bin")
        os.makedirs(bin_dir)
        # A stand-in for `sbatch --wait --array=0-(N-1) --export=ALL SCRIPT`: runs the array's
        # tasks one after another, as Slurm would run them on compute nodes.
        sbatch = os.path.join(bin_dir, "sbatch")
        with open(sbatch, "w") as f:
            f.write("#!/usr/bin/env bash\nset -e\nscript=${@: -1}\n"
                    "for a in \"$@\"; do case $a in --array=0-*) last=${a#--array=0-};; esac; done\n"
                    "for i in $(seq 0 \"$last\"); do SLURM_ARRAY_TASK_ID=$i bash \"$script\"; done\n")
        os.chmod(sbatch, 0o755)
        db = os.path.join(self.work, "slurm.avx2.fast.morellodb")
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TARGET="avx2", MATMUL="32", SHARDS="3",
                   DB=db, MORELLO_DB=MORELLO_DB)
        out = run(["bash", os.path.join(HERE, "slurm", "precompute.sh")], env=env)
        self.assertIn("matmul f32 32: 3 shards merged", out)
        self.assert_matches_single_process(db)

    def test_kubernetes(self):
        data = os.path.join(self.work, "kubernetes-volume")
        os.makedirs(data)
        fields = {"SHARDS": "3", "IMAGE": "morello-db:test", "CLAIM": "data", "TARGET": "avx2", "MATMUL": "32",
                  "DTYPE": "f32", "SPACE": "fast", "TAG": ".fast", "DB": "avx2.fast.morellodb", "JOBS": "1"}
        db = os.path.join(data, "avx2.fast.morellodb")
        bin_dir = os.path.join(self.work, "kubernetes-bin")
        os.makedirs(bin_dir)
        os.symlink(MORELLO_DB, os.path.join(bin_dir, "morello-db"))
        for number, stage in enumerate(run([MORELLO_DB, "stages", *FAMILY, "--db", db]).splitlines(), 1):
            shard_job, merge_job = (self.render(name, dict(fields, STAGE=stage, JOB=str(number)))
                                    for name in ("shard-job.yaml", "merge-job.yaml"))
            self.assertEqual(shard_job["spec"]["completionMode"], "Indexed")
            self.assertEqual(shard_job["spec"]["completions"], 3)
            for index in range(3):
                self.run_container(shard_job, data, bin_dir, {"JOB_COMPLETION_INDEX": str(index)})
            self.run_container(merge_job, data, bin_dir, {})
        self.assert_matches_single_process(db)

    @staticmethod
    def render(name, fields):
        """The manifest `name` with its fields filled in, as precompute.sh fills them."""
        with open(os.path.join(HERE, "kubernetes", name)) as f:
            text = f.read()
        for key, value in fields.items():
            text = text.replace(f"@{key}@", value)
        left = re.search(r"@[A-Z]+@", text)
        assert left is None, f"{name}: the field {left and left.group()} is not filled in"
        return yaml.safe_load(text)

    @staticmethod
    def run_container(job, data, bin_dir, env):
        """Runs the Job's container command as its pod would, with /data at `data`."""
        container = job["spec"]["template"]["spec"]["containers"][0]
        command = [part.replace("/data", data) for part in container["command"]]
        pod_env = {e["name"]: e["value"] for e in container.get("env", [])}
        run(command, env=dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", **pod_env, **env))


if __name__ == "__main__":
    unittest.main(verbosity=2)
