# kcp-setups: build, generate, verify and test.
SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
.DEFAULT_GOAL := build

OUTPUT := _output
BIN    := $(OUTPUT)/bin
GO     ?= go

.PHONY: build
build: ## Build the server and the kubectl plugin kubectl-kcp_setups into _output/bin/.
	$(GO) build -o $(BIN)/kcp-setups-apiserver ./cmd/apiserver
	$(GO) build -o $(BIN)/kubectl-kcp_setups ./cmd/kubectl-kcp_setups

.PHONY: codegen
codegen: ## Regenerate clients, deepcopy, conversion, defaulters and OpenAPI.
	hack/update-codegen.sh

.PHONY: verify
verify: ## Check formatting, vet and that generated code is fresh.
	@echo "==> gofmt"; out=$$(gofmt -l cmd internal pkg test hack); if [[ -n "$$out" ]]; then echo "gofmt needed: $$out"; exit 1; fi
	@echo "==> go vet"; $(GO) vet ./... && $(GO) vet -tags e2e ./internal/... ./test/framework/... ./pkg/etcdbackup/...
	@echo "==> verify-codegen"; hack/verify-codegen.sh

.PHONY: verify-fresh
verify-fresh: ## Codegen verification and the tools' build against an empty Go module cache (CI runs it).
	hack/verify-fresh.sh

.PHONY: test-unit
test-unit: ## Unit tests.
	hack/go-test.sh $(OUTPUT)/test-unit.log $(GO) test -count=1 ./pkg/... ./cmd/... ./internal/... ./test/framework/... ./test/bench/... ./test/docs/... ./hack/bench-chart/...

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
test: verify test-unit test-integration test-fuzz test-image test-e2e ## Everything CI runs.

.PHONY: tools
tools: ## Build etcd, kube-apiserver & co, kubectl, kwok and cert-manager from pinned modules.
	hack/tools/build.sh

# How many end-to-end tests run at once on the shared stack (docs/TESTING.md).
E2E_PARALLEL ?= 8

.PHONY: test-e2e
test-e2e: build tools ## The whole stack on loopback, driven with kubectl.
	@# Run in the package's directory, so go test streams the suite's progress and the closing
	@# leak scan's report instead of holding them back for a passing package. The harness's own
	@# tests (tag e2e: internal/localstack and test/framework) run beside them on stacks of their
	@# own, with the tests of packages that need a tool of the stack (tag e2e: pkg/etcdbackup
	@# against versitygw), their output kept in a log of its own and shown at the end.
	@$(GO) test -tags e2e -count=1 -timeout 25m ./internal/localstack ./test/framework ./pkg/etcdbackup > $(OUTPUT)/test-e2e-harness.log 2>&1 & harness=$$!; \
	status=0; (cd test/e2e && E2E_PARALLEL=$(E2E_PARALLEL) ../../hack/go-test.sh ../../$(OUTPUT)/test-e2e.log $(GO) test -count=1 -timeout 40m -parallel 200) || status=$$?; \
	if wait $$harness; then grep -E '^(ok|FAIL)' $(OUTPUT)/test-e2e-harness.log; \
	else echo "==> the harness's own tests failed ($(OUTPUT)/test-e2e-harness.log):"; tail -n 100 $(OUTPUT)/test-e2e-harness.log; status=1; fi; \
	exit $$status

IMAGE     ?= ghcr.io/kcp-setups/apiserver:latest
IMAGE_DIR ?= $(OUTPUT)/image
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
# The image is dated and labelled from the commit, so two builds of one commit are the same
# image; VERSION is a Go pseudo-version of the commit unless given.
REVISION          := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
VERSION           ?= v0.0.0-$(shell TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd 2>/dev/null)-$(shell git rev-parse --short=12 HEAD 2>/dev/null)

.PHONY: image
image: ## The server's OCI image, no container runtime needed: IMAGE_DIR gets a tarball (docker load), an OCI layout and the digest.
	@# Static, and the same bytes on every build of a commit: no cgo, no paths, no build ID,
	@# no VCS stamp (the image's revision label says which commit).
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' \
		-o $(IMAGE_DIR)/kcp-setups-apiserver ./cmd/apiserver
	cd hack/tools/image && $(GO) build -trimpath -o $(CURDIR)/$(BIN)/ ./kcp-setups-image
	$(BIN)/kcp-setups-image -binary $(IMAGE_DIR)/kcp-setups-apiserver -out $(IMAGE_DIR) -image $(IMAGE) \
		-arch $(IMAGE_ARCH) -revision $(REVISION) -version $(VERSION) -source-date-epoch $(SOURCE_DATE_EPOCH)

.PHONY: test-image
test-image: ## make image twice: the same digest, and the config's user, entrypoint and labels.
	cd hack/tools/image && ../../go-test.sh ../../../$(OUTPUT)/test-image.log $(GO) test -count=1 ./kcp-setups-image

# BENCH picks benchmarks by name, case-insensitive: mint, ready, crud, scale, link, snapshot, rotation, or a regexp such as mint|ready.
BENCH ?= .*

.PHONY: bench
bench: build tools ## The benchmark suite (BENCH=mint|ready|crud|scale|link|snapshot|rotation picks some), figures next to their anchors, into _output/bench/ with chart.svg.
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
