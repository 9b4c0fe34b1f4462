#!/usr/bin/env bash
# Sharded `morello-db precompute` on Slurm: for every pending stage, a job array of SHARDS
# tasks (shard.sbatch), then `morello-db merge` into DB, which records the stage as done.
# Run it where `sbatch` works and DB is on a file system the compute nodes share; rerun it
# after an interruption and it goes on from the first stage not merged.
#
#   TARGET=avx2 MATMUL=512 SHARDS=16 DB=/shared/morello/avx2.fast.morellodb deploy/slurm/precompute.sh
#
# Optional: DTYPE (f32), SPACE (fast), MORELLO_DB (morello-db on PATH), SBATCH_OPTIONS
# (e.g. "--partition=cpu --cpus-per-task=8"), SHARD_DIR (a directory beside DB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${TARGET:?set TARGET (avx2, avx512 or portable)}" "${MATMUL:?set MATMUL, the largest dimension}"
: "${SHARDS:?set SHARDS, the array tasks per stage}" "${DB:?set DB, the database file}"
export TARGET MATMUL SHARDS DB
export DTYPE=${DTYPE:-f32} SPACE=${SPACE:-fast}
MORELLO_DB=$(command -v "${MORELLO_DB:-morello-db}") || { echo "morello-db not found; set MORELLO_DB" >&2; exit 1; }
export MORELLO_DB
export SHARD_DIR=${SHARD_DIR:-$DB.shards}
mkdir -p "$SHARD_DIR"
family=(--target "$TARGET" --matmul "$MATMUL" --dtype "$DTYPE" --space "$SPACE")
mapfile -t pending < <("$MORELLO_DB" stages "${family[@]}" --db "$DB")
[ ${#pending[@]} -gt 0 ] || { echo "every stage is done in $DB"; exit 0; }
for stage in "${pending[@]}"; do
    rm -f "$SHARD_DIR"/shard*.morellodb
    # shellcheck disable=SC2086 # SBATCH_OPTIONS is a list of options
    STAGE=$stage sbatch --wait --array="0-$((SHARDS - 1))" --export=ALL ${SBATCH_OPTIONS:-} "$here/shard.sbatch"
    "$MORELLO_DB" merge --target "$TARGET" --space "$SPACE" --db "$DB" "$SHARD_DIR"/shard*.morellodb
    echo "$stage: $SHARDS shards merged into $DB"
done
rm -rf "$SHARD_DIR"
