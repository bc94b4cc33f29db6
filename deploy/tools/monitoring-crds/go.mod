// Pins the Prometheus Operator module whose CRDs (example/prometheus-operator-crd) the chart's
// server-side dry run installs, so PodMonitor, ServiceMonitor and PrometheusRule objects are
// validated by a real API server (deploy/test/chart.int.test.ts). crds.sh fetches it from the
// Go module proxy into the module cache, checked against go.sum.
module github.com/cloudmap-mcs/cloudmap-mcs/deploy/tools/monitoring-crds

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0
