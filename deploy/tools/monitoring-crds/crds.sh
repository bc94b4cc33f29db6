#!/usr/bin/env bash
# Prints the directory holding the Prometheus Operator CRDs (monitoring.coreos.com:
# ServiceMonitor, PodMonitor, PrometheusRule, ...) of the version go.mod pins, fetched from
# the Go module proxy into the Go module cache (checked against go.sum; a warm cache downloads
# nothing). The chart's server-side dry run (deploy/test/chart.int.test.ts) installs them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=github.com/prometheus-operator/prometheus-operator
cd "$here"
dir=$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $dir/example/prometheus-operator-crd ]] || { echo "monitoring-crds: no CRDs in $module ($dir)" >&2; exit 1; }
echo "$dir/example/prometheus-operator-crd"
