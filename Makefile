# cloudmap-mcs — every target brings its own toolchain (tools/toolchain.sh): Node.js >= 22
# from PATH or Node.js 24 from the npm registry, and the pinned pnpm, cached under
# ~/.cache/cloudmap-mcs. Run `make help` for the list.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

ifeq ($(filter-out help,$(MAKECMDGOALS)),)
else
TOOLCHAIN_PATH := $(shell tools/toolchain.sh --print-path)
# An empty PATH would make every recipe fail with `bash: No such file or directory`.
ifeq ($(TOOLCHAIN_PATH),)
$(error tools/toolchain.sh failed (its messages are above): no Node.js and pnpm to run with)
endif
export PATH := $(TOOLCHAIN_PATH)
endif

CLUSTERS ?= 2
# NODES=fake (default): kwok fake nodes; NODES=real: one real node per cluster (kubelet,
# containerd, kube-proxy, CoreDNS; root); clusterset-up also takes a number of fake nodes per
# cluster. See docs/harness.md.
NODES ?= fake
# IP_FAMILY=ipv4 (default) | ipv6 | dual (IPv4 primary): the Service, pod and node ranges of
# every cluster, fake or real nodes (clusterset-up, demo, test-realnodes, conformance). See
# docs/harness.md#ip-families-ip_family.
IP_FAMILY ?= ipv4
STATE ?= .state/clusterset
PKG_JSON := package.json pnpm-workspace.yaml $(wildcard packages/*/package.json) e2e/package.json

node_modules/.install-stamp: pnpm-lock.yaml $(PKG_JSON)
	pnpm install --frozen-lockfile --reporter=append-only
	@touch $@

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: install
install: node_modules/.install-stamp ## Install dependencies (Node.js 24 and pnpm are fetched if missing)

.PHONY: build
build: install ## Compile every package (tsc --build) and bundle each agent into one file (tools/bundle.mjs)
	pnpm exec tsc --build
	@node tools/bundle.mjs

.PHONY: typecheck
typecheck: build ## Type-check everything (the build is the type check)

.PHONY: lint
lint: install ## Lint (eslint) and check formatting (prettier)
	pnpm exec eslint . --max-warnings=0
	pnpm exec prettier --check . --log-level=warn

.PHONY: fmt
fmt: install ## Format the code
	pnpm exec prettier --write . --log-level=warn
	pnpm exec eslint . --fix

.PHONY: test-unit
test-unit: build ## Unit and component tests
	pnpm exec vitest run --project '!integration' --project '!realnodes' --project '!promtool' --project '!migration'

.PHONY: controlplane
controlplane: ## Build (or reuse) etcd, kube-apiserver, kcm, scheduler and kwok from the Go module proxy
	@e2e/controlplane/build.sh >/dev/null

.PHONY: nodes
nodes: ## Build (or reuse) kubelet, kube-proxy, CoreDNS and the node programs; install the node packages (root)
	@e2e/nodes/packages.sh
	@e2e/nodes/build.sh >/dev/null

.PHONY: clusterset-up
clusterset-up: install controlplane ## Start CLUSTERS local clusters + Cloud Map emulator in STATE; returns when ready
	@pnpm exec tsc --build e2e >/dev/null || echo "clusterset-up: tsc reported type errors (run make build); using the emitted e2e/dist" >&2
	node e2e/dist/src/cli.js up --clusters $(CLUSTERS) --nodes $(NODES) --state $(STATE) --ip-family $(IP_FAMILY)

.PHONY: clusterset-down
clusterset-down: install ## Stop every process of the clusterset in STATE and free its ports
	@test -f e2e/dist/src/cli.js || pnpm exec tsc --build e2e >/dev/null || true
	node e2e/dist/src/cli.js down --state $(STATE)

.PHONY: e2e-kind
e2e-kind: build ## Integration suites on kind clusters (needs Docker/Podman; kind via e2e/bin/kind)
	e2e/kind/e2e-kind.sh

.PHONY: moto
moto: ## Build (or reuse) the moto venv the Cloud Map emulator's contract suite runs against
	@tools/moto.sh --print-bin

.PHONY: test-integration
test-integration: build controlplane moto peer ## Integration suites on real local clusters and the emulator (the interop suite runs the AWS controller: make peer), then the alert-rule tests (promtool)
	pnpm exec vitest run --project integration
	$(MAKE) --no-print-directory test-alerts

.PHONY: test-alerts
test-alerts: build helm promtool ## The chart's alerts and dashboard under promtool (deploy/test/*.promtool.test.ts; no clusters)
	pnpm exec vitest run --project promtool

.PHONY: images
images: ## Build (or reuse) the agent images from Dockerfile.export/.import with buildah, no daemon or registry (root; cached by content)
	@deploy/docker/build-images.sh

.PHONY: test-realnodes
test-realnodes: build controlplane nodes helm prometheus ## Real-node suites (e2e/test/realnodes: DNS, traffic, images, the chart as pods, teardown; root; IP_FAMILY, REALNODES_FILES)
	MCS_E2E_IP_FAMILY=$(IP_FAMILY) pnpm exec vitest run --project realnodes $(REALNODES_FILES)

# Issue 35: two real-node clusters on the AWS controller migrate to our agents with the
# commands of docs/migrate-from-aws-controller.md (taken from the doc), c1 then c2, then c2
# rolls back, while a pod in c2 calls the service: no request may fail.
.PHONY: test-migration
test-migration: build controlplane nodes peer ## Migration from the AWS controller on real nodes, the doc's commands, 0 failed requests (root; about 2.5 min)
	pnpm exec vitest run --project migration

# The Helm-installed agents as pods alone (issue 16; docs/install.md section 8). Also part of
# test-realnodes, where it shares the run's clusters and the image build with the other suites.
.PHONY: test-chart
test-chart: build controlplane nodes helm ## The chart installed with helm on real nodes: agents as pods (root)
	pnpm exec vitest run --project realnodes e2e/test/realnodes/chart.int.test.ts

.PHONY: test
test: lint test-unit test-integration ## Everything CI runs: typecheck, lint, unit and integration tests

CHAOS_ARGS ?=
# all: the 2-cluster scenarios, then the 10-cluster ones (issue 34) on a clusterset of their own; two or ten: one part.
CHAOS_PART ?= all

.PHONY: chaos
chaos: build controlplane ## The long fault and hostility suite (about 40 min): prints the table, writes .state/chaos/long.{json,md} and docs/reliability.md
	node e2e/dist/src/chaos/main.js --profile long --part $(CHAOS_PART) --docs docs/reliability.md $(CHAOS_ARGS)

.PHONY: helm
helm: ## Build (or reuse) helm from the Go module proxy (deploy/tools/helm, cached by version)
	@deploy/tools/helm/build.sh >/dev/null

.PHONY: promtool
promtool: ## Build (or reuse) promtool from the Go module proxy (deploy/tools/promtool, cached by version): the alert-rule tests
	@deploy/tools/promtool/build.sh >/dev/null

.PHONY: prometheus
prometheus: ## Build (or reuse) the Prometheus server from the same module as promtool (deploy/tools/promtool, cached by version): the real-node alert test and `make demo`
	@deploy/tools/promtool/build.sh prometheus >/dev/null

.PHONY: helm-docs
helm-docs: ## Build (or reuse) helm-docs from the Go module proxy (deploy/tools/helm-docs, cached by version)
	@deploy/tools/helm-docs/build.sh >/dev/null

.PHONY: chart-docs
chart-docs: ## Regenerate deploy/charts/cloudmap-mcs/README.md from values.yaml with helm-docs (deploy/test fails while it is stale)
	@"$$(deploy/tools/helm-docs/build.sh)" --chart-search-root deploy/charts --template-files README.md.gotmpl --log-level warning

.PHONY: chart-test
chart-test: install helm promtool helm-docs ## Chart, alert-rule, kustomize, IAM and image tests (deploy/test; no clusters)
	pnpm exec vitest run --project deploy --project promtool

# The deploy project runs with the unit tests: it renders the chart with helm and checks the
# helm-docs README is current. The alert rules' promtool tests run after the integration suite
# (test-alerts), so a cold promtool build never holds the unit tests up.
test-unit: helm helm-docs

DEMO_STATE ?= .state/demo
DEMO_ARGS ?=

.PHONY: demo
demo: build controlplane helm prometheus ## Two local clusters + Cloud Map emulator + both agents (on real nodes: helm install, as pods), a service exported from both; Ctrl-C stops (CI=true: exit once verified)
	@node e2e/dist/src/demo/main.js --state $(DEMO_STATE) --ip-family $(IP_FAMILY) $(DEMO_ARGS)

.PHONY: peer
peer: ## Build (or reuse) the AWS Cloud Map MCS controller from the Go module proxy (e2e/peer, the benchmark peer)
	@e2e/peer/build.sh >/dev/null

BENCH_STATE ?= .state/bench

.PHONY: bench
bench: build controlplane peer ## Our agents vs the AWS controller on the harness (BENCH_MATRIX=NxMxK,... BENCH_UNRELATED=5000 ...); writes docs/benchmarks.md
	@node e2e/dist/src/bench/main.js --state $(BENCH_STATE) --docs

.PHONY: bench-smoke
bench-smoke: build controlplane peer ## A short bench (10 services x 2 endpoints x 2 clusters, 20 s idle): figures only
	@BENCH_MATRIX=10x2x2 BENCH_IDLE_SECONDS=20 BENCH_SETTLE_SECONDS=5 BENCH_CHANGES=5 BENCH_NEW_SERVICES=1 BENCH_CONFLICTS=2 \
	  node e2e/dist/src/bench/main.js --state $(BENCH_STATE)-smoke

# The dual-stack run keeps its own state and report beside the IPv4 one (conformance-doc joins them).
CONFORMANCE_STATE ?= .state/conformance$(if $(filter-out ipv4,$(IP_FAMILY)),-$(IP_FAMILY))

.PHONY: conformance-suite
conformance-suite: ## Build (or reuse) the upstream MCS conformance suite from MCS_API_UPSTREAM (default ../shared/upstream/mcs-api), cached outside the clone
	@e2e/conformance/build.sh >/dev/null

.PHONY: conformance
conformance: build controlplane $(if $(filter real,$(NODES)),nodes) ## Upstream MCS conformance suite on 2 local clusters running both agents (NODES=fake|real, IP_FAMILY); report in CONFORMANCE_STATE/report
	@suite=$$(e2e/conformance/build.sh) && \
	  node e2e/dist/src/conformance/main.js --suite "$$suite" --nodes $(NODES) --ip-family $(IP_FAMILY) --state $(CONFORMANCE_STATE)

.PHONY: conformance-doc
# The runs docs/conformance.md reports: the IPv4 one and the dual-stack one, in that order.
CONFORMANCE_DOC_RUNS ?= .state/conformance .state/conformance-dual
conformance-doc: build ## Regenerate docs/conformance.md from the last `make conformance` reports, IPv4 and IP_FAMILY=dual (runs nothing)
	@node e2e/dist/src/conformance/doc.js --out docs/conformance.md \
	  $(foreach d,$(CONFORMANCE_DOC_RUNS),--report-dir $(d)/report)

.PHONY: clean
clean: ## Remove build output (keeps the toolchain and control-plane caches)
	rm -rf packages/*/dist e2e/dist packages/*/tsconfig.tsbuildinfo e2e/tsconfig.tsbuildinfo
