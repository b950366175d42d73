#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/deploy: the Kubernetes YAML parses (libyaml, through the rule
# loader's reader) and says what doc/deployment.md says; the job's documented
# substitution; the DaemonSet's loop (its readiness after a failed and a good
# scan, its SIGTERM), the Job's and the consumer pod's commands and the Slurm
# script (a failed node, an earlier allocation's manifests), run here against
# a fixture tree; the schemas (kubernetes-models from npm) and shellcheck
# when installed, skipped with the reason when not.
. "$AP_SRCDIR/tests/lib.sh"
DEPLOY="$AP_SRCDIR/examples/deploy"
GET="$AP_BUILDDIR/tests/cli/yaml-get"
POD=spec.template.spec
CONTAINER=$POD.containers.0
mkdir -p "$TMP/bin" "$TMP/failbin"
ln -s "$AP" "$TMP/bin/aiter-probe"
# A scan that fails while $TMP/fail exists (a tree that cannot be scanned);
# every other command is the tool's.
cat >"$TMP/failbin/aiter-probe" <<SH
#!/bin/sh
if [ "\$1" = scan ] && [ -e "$TMP/fail" ]; then
	echo "aiter-probe: no AITER here" >&2
	exit 2
fi
exec "$AP" "\$@"
SH
chmod +x "$TMP/failbin/aiter-probe"
cp -R "$AP_SRCDIR/tests/fixtures/h24-native" "$TMP/tree"
chmod -R u+w "$TMP/tree"
export AITER_META_DIR="$TMP/tree"

# yaml FILE PATH...: the scalars at the paths, in $TMP/out.
yaml() {
	"$GET" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# on_node FILE: FILE with the node's folders under $TMP.
on_node() {
	sed -e "s|/var/lib/aiter-probe|$TMP/node|g" -e "s|/run/aiter-probe|$TMP/run|g" "$1"
}

# wait_for TEST...: polls TEST for up to 20 s; 1 if it never held.
wait_for() {
	n=0
	until "$@"; do
		n=$((n + 1))
		[ "$n" -lt 200 ] || return 1
		sleep 0.1
	done
}

case_ "namespace.yaml"
yaml "$DEPLOY/namespace.yaml" kind metadata.name \
	metadata.labels.[pod-security.kubernetes.io/enforce]
expect_rc 0
expect_out "Namespace
aiter-probe
privileged"

case_ "daemonset.yaml"
yaml "$DEPLOY/daemonset.yaml" kind metadata.namespace $CONTAINER.env.0.name \
	$CONTAINER.env.0.valueFrom.fieldRef.fieldPath $CONTAINER.volumeMounts.0.mountPath \
	$POD.volumes.0.hostPath.path $POD.automountServiceAccountToken \
	$POD.securityContext.seccompProfile.type $CONTAINER.securityContext.capabilities.drop.0 \
	$CONTAINER.securityContext.allowPrivilegeEscalation \
	$CONTAINER.securityContext.readOnlyRootFilesystem \
	$CONTAINER.resources.requests.memory $CONTAINER.resources.limits.memory \
	$CONTAINER.resources.limits.cpu
expect_rc 0
expect_out "DaemonSet
aiter-probe
NODE_NAME
spec.nodeName
/var/lib/aiter-probe
/var/lib/aiter-probe
false
RuntimeDefault
ALL
false
true
64Mi
256Mi
1"

case_ "job.yaml"
yaml "$DEPLOY/job.yaml" kind spec.template.spec.restartPolicy \
	$CONTAINER.env.0.valueFrom.fieldRef.fieldPath $POD.volumes.0.hostPath.path \
	$POD.automountServiceAccountToken $POD.securityContext.seccompProfile.type \
	$CONTAINER.securityContext.capabilities.drop.0 $CONTAINER.resources.limits.[amd.com/gpu]
expect_rc 0
expect_out "Job
Never
spec.nodeName
/var/lib/aiter-probe
false
RuntimeDefault
ALL
1"

case_ "job.yaml: the documented sed names the node and leaves \$NODE_NAME alone"
cmd=$(sed -n 's/^#   \(sed .*\) job\.yaml | kubectl apply -f -$/\1/p' "$DEPLOY/job.yaml")
[ -n "$cmd" ] || fail "no documented sed command in job.yaml"
eval "$cmd" <"$DEPLOY/job.yaml" >"$TMP/job.yaml"
! grep -n 'AITER_PROBE_NODE' "$TMP/job.yaml" || fail "a placeholder is left"
grep -qF -- '--host "$NODE_NAME"' "$TMP/job.yaml" || fail "\$NODE_NAME was rewritten"
yaml "$TMP/job.yaml" metadata.name $POD.nodeSelector.[kubernetes.io/hostname] $CONTAINER.env.0.name
expect_rc 0
expect_out "aiter-probe-scan-gpu-0042
gpu-0042
NODE_NAME"

case_ "the Job's command writes manifest-launch.json, named after the node"
"$GET" "$TMP/job.yaml" $CONTAINER.args.0 >"$TMP/job.sh" || fail "no args"
on_node "$TMP/job.sh" >"$TMP/job-node.sh"
mkdir -p "$TMP/node" "$TMP/run"
PATH="$TMP/bin:$PATH" NODE_NAME=gpu-0042 sh "$TMP/job-node.sh" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
probe merge --format json "$TMP/node/manifest-launch.json"
expect_rc 0
expect_json 'j["trees"][0]["nodes"]["nodes"]' "['gpu-0042']"
[ ! -e "$TMP/node/manifest.json" ] || fail "the Job wrote the DaemonSet's manifest.json"
cp "$TMP/node/manifest-launch.json" "$TMP/launch.before"

# The DaemonSet's loop and readiness, on the node's folders under $TMP.
"$GET" "$DEPLOY/daemonset.yaml" $CONTAINER.args.0 >"$TMP/args" || fail "no args"
on_node "$TMP/args" >"$TMP/loop.sh"
for k in 0 1 2; do
	"$GET" "$DEPLOY/daemonset.yaml" $CONTAINER.readinessProbe.exec.command.$k
done >"$TMP/ready.lines" || fail "no readiness command"
[ "$(sed -n 1,2p "$TMP/ready.lines" | tr '\n' ' ')" = "/bin/sh -c " ] || fail "readiness is not sh -c"
sed -n 3p "$TMP/ready.lines" >"$TMP/ready"
on_node "$TMP/ready" >"$TMP/ready.sh"
ready() { PATH="$TMP/bin:$PATH" sh "$TMP/ready.sh" >"$TMP/ready.out" 2>&1; }
grep -q 'aiter-probe verify' "$TMP/ready" || fail "readiness does not run verify"

case_ "the DaemonSet: a failed scan makes the pod unready, the next good one ready"
# sleep 3600 made short, so that the loop scans again.
sed 's/sleep 3600/sleep 0.2/' "$TMP/loop.sh" >"$TMP/loop-fast.sh"
: >"$TMP/fail"
PATH="$TMP/failbin:$PATH" NODE_NAME=gpu-0042 sh "$TMP/loop-fast.sh" >"$TMP/loop.out" 2>"$TMP/loop.err" &
pid=$!
wait_for test -e "$TMP/run/failed" || fail "no failed marker after a failed scan"
ready && fail "ready after a failed scan"
grep -qF "aiter-probe scan failed on gpu-0042" "$TMP/loop.err" || fail "the failure is not logged"
rm -f "$TMP/fail"
wait_for test -e "$TMP/node/manifest.json" || fail "no manifest after a good scan"
wait_for test ! -e "$TMP/run/failed" || fail "the failed marker stayed"
ready || { fail "not ready after a good scan"; cat "$TMP/ready.out" >&2; }
grep -qF "$TMP/node/manifest.json: fresh" "$TMP/ready.out" || fail "readiness: $(cat "$TMP/ready.out")"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

case_ "the DaemonSet: SIGTERM during the hour's wait ends the loop at once, exit 0"
rm -f "$TMP/node/manifest.json"
PATH="$TMP/bin:$PATH" NODE_NAME=gpu-0042 sh "$TMP/loop.sh" >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_for test -e "$TMP/node/manifest.json" || fail "no manifest"
sleep 0.3
start=$(date +%s)
kill -TERM "$pid"
wait "$pid"
rc=$?
expect_rc 0
[ $(($(date +%s) - start)) -lt 5 ] || fail "SIGTERM took more than 5 s"
expect_out_has "mla.decode.native_h24"
probe merge --format json "$TMP/node/manifest.json"
expect_json 'j["trees"][0]["nodes"]["nodes"]' "['gpu-0042']"
cmp -s "$TMP/launch.before" "$TMP/node/manifest-launch.json" ||
	fail "the DaemonSet's scan replaced the Job's manifest-launch.json"

# The consumer pod's command, with a stand-in vllm that reads the manifest
# it is given as a serving process does (the Python reader, fresh only).
"$GET" "$DEPLOY/vllm-pod.yaml" spec.containers.0.args.0 >"$TMP/vllm.sh" || fail "no args"
on_node "$TMP/vllm.sh" >"$TMP/vllm-node.sh"
cat >"$TMP/bin/vllm" <<SH
#!/bin/sh
echo "AITER_PROBE_MANIFEST=\$AITER_PROBE_MANIFEST"
PYTHONPATH="$AP_SRCDIR/python" exec "${PYTHON3:-python3}" -c '
import os, aiter_probe
m = aiter_probe.load(os.environ["AITER_PROBE_MANIFEST"], verify_fresh=True)
print("host", m.data["host"], "native_h24", m.supported("mla.decode.native_h24"))'
SH
chmod +x "$TMP/bin/vllm"
consumer() {
	PATH="$TMP/bin:$PATH" MODEL=m sh "$TMP/vllm-node.sh" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

case_ "vllm-pod.yaml: mounts the node's folder read-only, the scan's image"
yaml "$DEPLOY/vllm-pod.yaml" kind spec.containers.0.volumeMounts.0.mountPath \
	spec.containers.0.volumeMounts.0.readOnly spec.volumes.0.hostPath.path spec.containers.0.image
expect_rc 0
image=$("$GET" "$DEPLOY/daemonset.yaml" $CONTAINER.image)
expect_out "Pod
/var/lib/aiter-probe
true
/var/lib/aiter-probe
$image"
case $image in *@sha256:*) ;; *) fail "the image is not pinned by digest: $image" ;; esac
[ "$("$GET" "$DEPLOY/job.yaml" $CONTAINER.image)" = "$image" ] || fail "the Job runs another image"

case_ "the consumer reads the Job's fresh manifest-launch.json"
consumer
expect_rc 0
expect_out "AITER_PROBE_MANIFEST=$TMP/node/manifest-launch.json
host gpu-0042 native_h24 True"

case_ "the consumer falls back to manifest.json when manifest-launch.json is stale"
echo "// changed" >>"$TMP/tree/csrc/kernels/mla/reduce.cu"
PATH="$TMP/bin:$PATH" NODE_NAME=gpu-0042 sh "$TMP/job-node.sh" >/dev/null 2>&1 || fail "scan"
mv "$TMP/node/manifest-launch.json" "$TMP/node/manifest.json"
cp "$TMP/launch.before" "$TMP/node/manifest-launch.json"
consumer
expect_rc 0
expect_out "AITER_PROBE_MANIFEST=$TMP/node/manifest.json
host gpu-0042 native_h24 True"

# --- Slurm ---------------------------------------------------------------
# srun as Slurm runs one task on each of two nodes (node-1, node-2): the
# options the script must pass, --label's "N: " before each line, and the
# task of $AP_FAIL_NODE with a scan that fails.
cat >"$TMP/bin/srun" <<SH
#!/bin/sh
for want in --label --kill-on-bad-exit=0 --ntasks-per-node=1; do
	[ "\$1" = "\$want" ] || { echo "srun: expected \$want, not \$1" >&2; exit 2; }
	shift
done
rc=0 task=0
for node in node-1 node-2; do
	path=\$PATH
	[ "\$node" != "\${AP_FAIL_NODE:-}" ] || { : >"$TMP/fail"; path="$TMP/failbin:\$PATH"; }
	(SLURMD_NODENAME=\$node PATH=\$path "\$@" 2>&1; echo "exit \$?" >"$TMP/task.rc") | sed "s/^/\$task: /"
	rm -f "$TMP/fail"
	[ "\$(cat "$TMP/task.rc")" = "exit 0" ] || rc=1
	task=\$((task + 1))
done
exit \$rc
SH
chmod +x "$TMP/bin/srun"
export SLURM_JOB_ID=1234

case_ "slurm-scan.sh"
PATH="$TMP/bin:$PATH" sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" --color=never >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
expect_out_has "2 nodes, 1 AITER tree; no capability of 49 differs across nodes"
expect_out_has "2 nodes: node-[1-2]"
[ -f "$TMP/shared/1234/node-1.json" ] && [ -f "$TMP/shared/1234/node-2.json" ] ||
	fail "no 1234/node-N.json"

case_ "slurm-scan.sh: nodes that differ"
"$AP" scan --aiter-root "$AP_SRCDIR/tests/fixtures/h24-missing" --no-launch --host node-3 \
	-o "$TMP/shared/1234/node-3.json"
PATH="$TMP/bin:$PATH" sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 1
expect_out_has "    lacking: node-3"

case_ "slurm-scan.sh: an earlier allocation's manifests are not merged"
rm -rf "$TMP/shared"
"$AP" scan --aiter-root "$AP_SRCDIR/tests/fixtures/h24-missing" --no-launch --host node-9 \
	-o "$TMP/old.json"
mkdir -p "$TMP/shared/1233" && mv "$TMP/old.json" "$TMP/shared/1233/node-9.json"
PATH="$TMP/bin:$PATH" sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" --color=never >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
expect_out_has "2 nodes, 1 AITER tree; no capability of 49 differs across nodes"

case_ "slurm-scan.sh: one failed node, the others merged and the failed one named"
rm -rf "$TMP/shared"
PATH="$TMP/bin:$PATH" AP_FAIL_NODE=node-2 sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" \
	--color=never >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 3
expect_out_has "1: aiter-probe: no AITER here"
expect_out_has "1 node, 1 AITER tree; no capability of 49 differs across nodes"
expect_out_has "1 node: node-1"
expect_err "slurm-scan.sh: node-2: the scan failed (exit 2); merging the other nodes
slurm-scan.sh: 1 node(s) gave no manifest"

case_ "slurm-scan.sh: a node of the allocation that never reported is named"
rm -rf "$TMP/shared"
cat >"$TMP/bin/scontrol" <<'SH'
#!/bin/sh
[ "$1 $2 $3" = "show hostnames node-[1-3]" ] || exit 1
printf 'node-1\nnode-2\nnode-3\n'
SH
chmod +x "$TMP/bin/scontrol"
PATH="$TMP/bin:$PATH" SLURM_JOB_NODELIST='node-[1-3]' sh "$DEPLOY/slurm-scan.sh" \
	"$TMP/shared" --color=never >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 3
expect_out_has "2 nodes: node-[1-2]"
expect_err "slurm-scan.sh: node-3: no manifest (its task did not run to the end); merging the other nodes
slurm-scan.sh: 1 node(s) gave no manifest"

case_ "slurm-scan.sh: outside an allocation"
( unset SLURM_JOB_ID; PATH="$TMP/bin:$PATH" sh "$DEPLOY/slurm-scan.sh" "$TMP/shared" ) \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 2
expect_err_has "slurm-scan.sh: not in a Slurm allocation (no SLURM_JOB_ID)"

# --- Validators ----------------------------------------------------------
case_ "shellcheck: slurm-scan.sh and the shell in the YAML"
if command -v shellcheck >/dev/null 2>&1; then
	shellcheck -s sh "$DEPLOY/slurm-scan.sh" "$TMP/args" "$TMP/ready" "$TMP/job.sh" \
		"$TMP/vllm.sh" >&2 || fail "shellcheck"
else
	echo "SKIP [$current]: no shellcheck (apt-get install shellcheck)" >&2
fi

# kubernetes-models (npm): .ci/install-deps installs it under
# /usr/local/lib/aiter-probe-node, AP_NODE_MODULES names another.
MODS=${AP_NODE_MODULES:-/usr/local/lib/aiter-probe-node/node_modules}
VALIDATE="$AP_SRCDIR/tests/cli/k8s-validate.mjs"
case_ "Kubernetes schemas: every deploy example, the Job as substituted"
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP [$current]: no node (Node.js) for kubernetes-models" >&2
elif [ ! -f "$MODS/kubernetes-models/package.json" ] || [ ! -d "$MODS/yaml" ]; then
	echo "SKIP [$current]: no kubernetes-models and yaml under $MODS (.ci/install-deps installs them from npm)" >&2
else
	node "$VALIDATE" "$MODS" "$DEPLOY/namespace.yaml" "$DEPLOY/daemonset.yaml" \
		"$TMP/job.yaml" "$DEPLOY/vllm-pod.yaml" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	expect_rc 0
	expect_out "$DEPLOY/namespace.yaml: Namespace aiter-probe: valid
$DEPLOY/daemonset.yaml: DaemonSet aiter-probe: valid
$TMP/job.yaml: Job aiter-probe-scan-gpu-0042: valid
$DEPLOY/vllm-pod.yaml: Pod vllm: valid"
	case_ "Kubernetes schemas: a wrong quantity is refused"
	sed 's/memory: 256Mi/memory: lots/' "$DEPLOY/daemonset.yaml" >"$TMP/bad.yaml"
	node "$VALIDATE" "$MODS" "$TMP/bad.yaml" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	expect_rc 1
	expect_out_has "$TMP/bad.yaml: DaemonSet aiter-probe: data/spec/template/spec/containers/0/resources/limits/memory must be number"
fi
finish
