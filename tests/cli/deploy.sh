#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/deploy: the Kubernetes YAML parses (libyaml, through the rule
# loader's reader) and says what the README says; the DaemonSet's and the
# Slurm script's commands, run here against a fixture tree, write manifests
# that name their node and merge.
. "$AP_SRCDIR/tests/lib.sh"
DEPLOY="$AP_SRCDIR/examples/deploy"
GET="$AP_BUILDDIR/tests/cli/yaml-get"
CONTAINER=spec.template.spec.containers.0
mkdir -p "$TMP/bin"
ln -s "$AP" "$TMP/bin/aiter-probe"
export AITER_META_DIR="$AP_SRCDIR/tests/fixtures/h24-native"

# yaml FILE PATH...: the scalars at the paths, in $TMP/out.
yaml() {
	"$GET" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

case_ "daemonset.yaml"
yaml "$DEPLOY/daemonset.yaml" kind $CONTAINER.env.0.name \
	$CONTAINER.env.0.valueFrom.fieldRef.fieldPath $CONTAINER.volumeMounts.0.mountPath \
	spec.template.spec.volumes.0.hostPath.path
expect_rc 0
expect_out "DaemonSet
NODE_NAME
spec.nodeName
/var/lib/aiter-probe
/var/lib/aiter-probe"

case_ "job.yaml"
yaml "$DEPLOY/job.yaml" kind spec.template.spec.restartPolicy \
	$CONTAINER.env.0.valueFrom.fieldRef.fieldPath spec.template.spec.volumes.0.hostPath.path
expect_rc 0
expect_out "Job
Never
spec.nodeName
/var/lib/aiter-probe"

case_ "the DaemonSet's command, once, as node gpu-0042"
"$GET" "$DEPLOY/daemonset.yaml" $CONTAINER.args.0 >"$TMP/args" || fail "no args"
sed -e "s|/var/lib/aiter-probe|$TMP/node|" -e 's/sleep 3600/break/' "$TMP/args" >"$TMP/run.sh"
mkdir -p "$TMP/node"
PATH="$TMP/bin:$PATH" NODE_NAME=gpu-0042 sh "$TMP/run.sh" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
expect_out_has "mla.decode.native_h24"
probe merge --format json "$TMP/node/manifest.json"
expect_rc 0
expect_json 'j["trees"][0]["nodes"]["nodes"]' "['gpu-0042']"

case_ "the Job's command parses as sh"
"$GET" "$DEPLOY/job.yaml" $CONTAINER.args.0 >"$TMP/job.sh" && sh -n "$TMP/job.sh" || fail "not sh"
grep -qF -- '--host "$NODE_NAME"' "$TMP/job.sh" || fail "the Job does not pass --host"

# srun as Slurm runs one task on each of two nodes.
cat >"$TMP/bin/srun" <<'SH'
#!/bin/sh
[ "$1" = --ntasks-per-node=1 ] || { echo "srun: unexpected $1" >&2; exit 2; }
shift
for node in node-1 node-2; do SLURMD_NODENAME=$node "$@" || exit; done
SH
chmod +x "$TMP/bin/srun"

case_ "slurm-scan.sh"
PATH="$TMP/bin:$PATH" sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" --color=never >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
expect_out_has "2 nodes, 1 AITER tree; no capability of 36 differs across nodes"
expect_out_has "2 nodes: node-[1-2]"
[ -f "$TMP/shared/node-1.json" ] && [ -f "$TMP/shared/node-2.json" ] || fail "no node-N.json"

case_ "slurm-scan.sh: nodes that differ"
"$AP" scan --aiter-root "$AP_SRCDIR/tests/fixtures/h24-missing" --no-launch --host node-3 \
	-o "$TMP/shared/node-3.json"
PATH="$TMP/bin:$PATH" sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 1
expect_out_has "    lacking: node-3"
finish
