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
	@echo "==> gofmt"; out=$$(gofmt -l cmd pkg test); if [[ -n "$$out" ]]; then echo "gofmt needed: $$out"; exit 1; fi
	@echo "==> go vet"; $(GO) vet ./...
	@echo "==> verify-codegen"; hack/verify-codegen.sh

.PHONY: test-unit
test-unit: ## Unit tests.
	$(GO) test ./pkg/... ./cmd/...

.PHONY: test-integration
test-integration: ## The real server in-process on embedded etcd, through the clientset.
	$(GO) test ./test/integration/...

.PHONY: test
test: verify test-unit test-integration ## Everything CI runs.

.PHONY: run
run: ## Not yet: the local stack (kube-apiserver, cert-manager, kwok) comes with issue 3.
	@echo "make run is not available yet: the local control plane arrives with the next milestone." >&2
	@echo "Until then: make build && _output/bin/kcp-setups-apiserver --help" >&2
	@exit 1

.PHONY: clean
clean:
	rm -rf $(OUTPUT)
