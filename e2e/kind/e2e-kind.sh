#!/usr/bin/env bash
# make e2e-kind: two kind clusters (distinct pod and service subnets), the CRDs and
# ClusterProperties, then the integration suites against them with the Cloud Map emulator
# (MCS_E2E_KUBECONFIGS). Needs a container engine; kind comes from `e2e/bin/kind`.
# KEEP=1 leaves the clusters running.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kind="$root/e2e/bin/kind"
state=${STATE:-$root/.state/kind}
clusters=${CLUSTERS:-2}

if ! { command -v docker >/dev/null && docker info >/dev/null 2>&1; } &&
  ! { command -v podman >/dev/null && podman info >/dev/null 2>&1; } &&
  ! { command -v nerdctl >/dev/null && nerdctl info >/dev/null 2>&1; }; then
  echo "e2e-kind: no working container engine (docker, podman or nerdctl); kind cannot create clusters here." >&2
  echo "e2e-kind: use make test-integration (local control planes) instead." >&2
  exit 2
fi

mkdir -p "$state"
names=() kubeconfigs=()
cleanup() {
  [[ ${KEEP:-0} == 1 ]] && return
  for n in "${names[@]}"; do "$kind" delete cluster --name "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
for i in $(seq 1 "$clusters"); do
  name=cloudmap-mcs-c$i
  names+=("$name")
  cat >"$state/c$i.kind.yaml" <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  podSubnet: 10.$i.0.0/16
  serviceSubnet: 10.$((100 + i)).0.0/16
YAML
  "$kind" create cluster --name "$name" --config "$state/c$i.kind.yaml" --kubeconfig "$state/c$i.kubeconfig" --wait 120s
  kubeconfigs+=("$state/c$i.kubeconfig")
done
list=$(IFS=,; echo "${kubeconfigs[*]}")
node "$root/e2e/dist/src/cli.js" prepare --kubeconfigs "$list"
MCS_E2E_KUBECONFIGS=$list MCS_E2E_EMULATOR=${MCS_E2E_EMULATOR:-required} \
  pnpm exec vitest run --project integration --exclude e2e/test/harness.int.test.ts "$@"
