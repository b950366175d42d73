#!/bin/sh
# SPDX-License-Identifier: MIT
# Scans every node of a Slurm allocation (one task a node) into a shared
# folder, one manifest a node named after it, then merges them:
#   sbatch --nodes=64 examples/deploy/slurm-scan.sh /shared/manifests
#   salloc --nodes=64 sh examples/deploy/slurm-scan.sh /shared/manifests
# Each task names its own node: the host name is read by the task on the
# node (sh -c), not by the shell that submits, and SLURMD_NODENAME is the name
# Slurm knows the node by, so merge's ranges read like Slurm's host lists.
# Exit status: merge's with --fail-on-differ (0 every node alike, 1 they
# differ, 2 an error); extra arguments after the folder go to merge.
#SBATCH --ntasks-per-node=1
#SBATCH --job-name=aiter-probe
set -eu
dir=${1:?usage: slurm-scan.sh SHARED_FOLDER [MERGE_OPTION]...}
shift
mkdir -p "$dir"
srun --ntasks-per-node=1 sh -c \
	'node=${SLURMD_NODENAME:-$(hostname)}; exec aiter-probe scan --host "$node" -o "$1/$node.json"' \
	scan "$dir"
exec aiter-probe merge --fail-on-differ "$@" -- "$dir"/*.json
