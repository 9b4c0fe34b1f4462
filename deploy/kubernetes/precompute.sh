#!/usr/bin/env bash
# Sharded `morello-db precompute` on Kubernetes: for every pending stage, an Indexed Job of
# SHARDS pods (shard-job.yaml), then a Job that merges their files into the database
# (merge-job.yaml), which records the stage as done. The database lives on a volume every pod
# mounts (CLAIM: a ReadWriteMany PersistentVolumeClaim); IMAGE is an image with morello-db on
# its PATH (deploy/Dockerfile builds one). Rerun after an interruption: merged stages are skipped.
#
#   IMAGE=registry.example/morello-db:latest CLAIM=morello-data TARGET=avx2 MATMUL=512 SHARDS=16 \
#       deploy/kubernetes/precompute.sh
#
# Optional: DB (file name on the volume; <target>.<space>.morellodb), DTYPE (f32), SPACE (fast),
# JOBS (threads per pod, 1), KUBECTL (kubectl).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${IMAGE:?set IMAGE}" "${CLAIM:?set CLAIM}" "${TARGET:?set TARGET}" "${MATMUL:?set MATMUL}" "${SHARDS:?set SHARDS}"
DTYPE=${DTYPE:-f32} SPACE=${SPACE:-fast} JOBS=${JOBS:-1} KUBECTL=${KUBECTL:-kubectl}
tag=".$SPACE"
[ "$SPACE" = full ] && tag=""
DB=${DB:-$TARGET$tag.morellodb}

# The manifest `$1` with its fields filled in for stage `$2`, job number `$3`.
render() {
    sed -e "s|@STAGE@|$2|g" -e "s|@JOB@|$3|g" -e "s|@SHARDS@|$SHARDS|g" -e "s|@IMAGE@|$IMAGE|g" \
        -e "s|@CLAIM@|$CLAIM|g" -e "s|@TARGET@|$TARGET|g" -e "s|@MATMUL@|$MATMUL|g" -e "s|@DTYPE@|$DTYPE|g" \
        -e "s|@SPACE@|$SPACE|g" -e "s|@TAG@|$tag|g" -e "s|@DB@|$DB|g" -e "s|@JOBS@|$JOBS|g" "$here/$1"
}

# Runs the Job rendered from `$1` for stage `$2` (job number `$3`) to completion, then deletes it.
run_job() {
    local name
    name=$(render "$1" "$2" "$3" | "$KUBECTL" create -f - -o name)
    "$KUBECTL" wait --for=condition=complete --timeout=-1s "$name"
    "$KUBECTL" delete "$name" --wait=false
}

# The pending stages, asked of morello-db in a pod that mounts the volume.
stages_pod=morello-stages-$$
"$KUBECTL" run "$stages_pod" --image="$IMAGE" --restart=Never --rm -i --quiet --overrides="$(cat <<JSON
{"spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "$CLAIM"}}],
  "containers": [{"name": "stages", "image": "$IMAGE", "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    "command": ["morello-db", "stages", "--target", "$TARGET", "--matmul", "$MATMUL", "--dtype", "$DTYPE",
                "--space", "$SPACE", "--db", "/data/$DB"]}]}}
JSON
)" >"${TMPDIR:-/tmp}/$stages_pod"
mapfile -t pending <"${TMPDIR:-/tmp}/$stages_pod"
rm -f "${TMPDIR:-/tmp}/$stages_pod"
[ ${#pending[@]} -gt 0 ] || { echo "every stage is done in $DB"; exit 0; }
number=0
for stage in "${pending[@]}"; do
    number=$((number + 1))
    run_job shard-job.yaml "$stage" "$number-$$"
    run_job merge-job.yaml "$stage" "$number-$$"
    echo "[$number/${#pending[@]}] $stage: $SHARDS shards merged into $DB"
done
