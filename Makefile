# kcp-setups: build, generate, verify and test.
SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
.DEFAULT_GOAL := build

OUTPUT := _output
BIN    := $(OUTPUT)/bin
GO     ?= go

.PHONY: build
build: ## Build the server into _output/bin/.
	$(GO) build -o $(BIN)/kcp-setups-apiserver ./cmd/apiserver

.PHONY: codegen
codegen: ## Regenerate clients, deepcopy, conversion, defaulters and OpenAPI.
	hack/update-codegen.sh

.PHONY: verify
verify: ## Check formatting, vet and that generated code is fresh.
	@echo "==> gofmt"; out=$$(gofmt -l cmd pkg test hack); if [[ -n "$$out" ]]; then echo "gofmt needed: $$out"; exit 1; fi
	@echo "==> go vet"; $(GO) vet ./...
	@echo "==> verify-codegen"; hack/verify-codegen.sh

.PHONY: verify-fresh
verify-fresh: ## Codegen verification and the tools' build against an empty Go module cache (CI runs it).
	hack/verify-fresh.sh

.PHONY: test-unit
test-unit: ## Unit tests.
	hack/go-test.sh $(OUTPUT)/test-unit.log $(GO) test -count=1 ./pkg/... ./cmd/... ./test/framework/... ./test/bench/... ./hack/bench-chart/...

.PHONY: test-integration
test-integration: ## The real server in-process on embedded etcd, through the clientset.
	hack/go-test.sh $(OUTPUT)/test-integration.log $(GO) test -count=1 ./test/integration/...

# Each `go test -fuzz` takes exactly one target of one package: target:package.
FUZZ_TARGETS := \
	FuzzDecode:./pkg/apis/operator/install \
	FuzzConversionRoundTrip:./pkg/apis/operator/install \
	FuzzValidate:./pkg/apis/operator/validation \
	FuzzKubeconfigRequest:./pkg/registry/operator/kubeconfigrequest \
	FuzzWithCertificateVerifier:./pkg/apiserver
FUZZTIME ?= 10s

.PHONY: test-fuzz
test-fuzz: ## Each fuzz target for FUZZTIME; test-unit already replays the committed corpus.
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/test-fuzz.sh $(FUZZ_TARGETS)

.PHONY: test
test: verify test-unit test-integration test-fuzz test-e2e ## Everything CI runs.

.PHONY: tools
tools: ## Build etcd, kube-apiserver & co, kubectl, kwok and cert-manager from pinned modules.
	hack/tools/build.sh

.PHONY: test-e2e
test-e2e: build tools ## The whole stack on loopback, driven with kubectl.
	@# Run in the package's directory, so go test streams the suite's progress and the closing
	@# leak scan's report instead of holding them back for a passing package.
	cd test/e2e && ../../hack/go-test.sh ../../$(OUTPUT)/test-e2e.log $(GO) test -count=1 -timeout 40m

IMAGE ?= ghcr.io/kcp-setups/apiserver:latest
CONTAINER_TOOL ?= $(shell command -v docker || command -v podman)

.PHONY: image
image: ## Build the server's container image (needs docker or podman; override with CONTAINER_TOOL).
	@if [[ -z "$(CONTAINER_TOOL)" ]]; then echo "make image needs docker or podman (or CONTAINER_TOOL=...)"; exit 1; fi
	$(CONTAINER_TOOL) build -t $(IMAGE) .

# BENCH picks benchmarks by name, case-insensitive: mint, ready, scale, or a regexp such as mint|ready.
BENCH ?= .*

.PHONY: bench
bench: build tools ## The benchmark suite (BENCH=mint|ready|crud|scale picks some), figures next to their anchors, into _output/bench/ with chart.svg.
	@mkdir -p $(OUTPUT)/bench
	@# Run in the package's directory, so go test streams the figures as they come. The chart
	@# is drawn from results.json even when a benchmark failed, and make fails after it.
	cd test/bench && BENCH_OUTPUT=$(CURDIR)/$(OUTPUT)/bench GO=$(GO) $(GO) test -count=1 -run '^$$' \
		-bench '(?i)^Benchmark($(BENCH))$$' -benchtime 1x -timeout 60m .; \
	status=$$?; \
	cd $(CURDIR) && $(GO) run ./hack/bench-chart -in $(OUTPUT)/bench/results.json -out $(OUTPUT)/bench/chart.svg || status=1; \
	exit $$status

.PHONY: run
run: build tools ## The server and its whole local stack, in the foreground; Ctrl-C stops it.
	$(GO) build -o $(BIN)/local-up ./hack/local-up
	$(BIN)/local-up

.PHONY: clean
clean:
	rm -rf $(OUTPUT)
