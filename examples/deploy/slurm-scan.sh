#!/bin/sh
# SPDX-License-Identifier: MIT
# Scans every node of a Slurm allocation (one task a node) into a folder of
# this allocation's own under a shared one, one manifest a node named after
# it, then merges them:
#   sbatch --nodes=64 examples/deploy/slurm-scan.sh /shared/manifests
#   salloc --nodes=64 sh examples/deploy/slurm-scan.sh /shared/manifests
# The manifests go to SHARED_FOLDER/$SLURM_JOB_ID/NODE.json, so that the
# merge reads this allocation's nodes only, never an earlier job's. Each task
# names its own node: the host name is read by the task on the node (sh -c),
# not by the shell that submits, and SLURMD_NODENAME is the name Slurm knows
# the node by, so merge's ranges read like Slurm's host lists. srun --label
# puts the task's number before each line of its output, and
# --kill-on-bad-exit=0 lets the other nodes finish when one fails.
# A node whose scan failed (NODE.failed holds its exit status) or that gave
# no manifest (a node of the allocation, by scontrol, with neither file) is
# named on stderr; the other nodes are merged all the same.
# Exit status: merge's with --fail-on-differ (0 every node alike, 1 they
# differ, 2 an error), else 3 when a node gave no manifest (the rest merged);
# extra arguments after the folder go to merge.
#SBATCH --ntasks-per-node=1
#SBATCH --job-name=aiter-probe
set -eu
dir=${1:?usage: slurm-scan.sh SHARED_FOLDER [MERGE_OPTION]...}
shift
job=${SLURM_JOB_ID:?slurm-scan.sh: not in a Slurm allocation (no SLURM_JOB_ID)}
out=$dir/$job
mkdir -p "$out"
# shellcheck disable=SC2016 # expanded by the task's shell, on its node
srun --label --kill-on-bad-exit=0 --ntasks-per-node=1 sh -c '
	node=${SLURMD_NODENAME:-$(hostname)}
	rm -f "$1/$node.failed"
	aiter-probe scan --host "$node" -o "$1/$node.json" && exit 0
	rc=$?
	echo "$rc" >"$1/$node.failed"
	exit "$rc"' scan "$out" || true

missing=0
for f in "$out"/*.failed; do
	[ -e "$f" ] || continue
	node=$(basename "$f" .failed)
	echo "slurm-scan.sh: $node: the scan failed (exit $(cat "$f")); merging the other nodes" >&2
	missing=$((missing + 1))
done
if command -v scontrol >/dev/null 2>&1 && [ -n "${SLURM_JOB_NODELIST:-}" ]; then
	for node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
		[ -e "$out/$node.json" ] || [ -e "$out/$node.failed" ] || {
			echo "slurm-scan.sh: $node: no manifest (its task did not run to the end); merging the other nodes" >&2
			missing=$((missing + 1))
		}
	done
fi
found=
for f in "$out"/*.json; do [ -e "$f" ] && found=1 && break; done
if [ -z "$found" ]; then
	echo "slurm-scan.sh: no node wrote a manifest to $out" >&2
	exit 2
fi
rc=0
aiter-probe merge --fail-on-differ "$@" -- "$out"/*.json || rc=$?
if [ "$rc" -lt 2 ] && [ "$missing" -gt 0 ]; then
	echo "slurm-scan.sh: $missing node(s) gave no manifest" >&2
	rc=3
fi
exit "$rc"
