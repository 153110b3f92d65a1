#!/usr/bin/env bash
# Regenerates every zz_generated.* file and pkg/generated with k8s.io/code-generator, at the
# version pinned in go.mod. Never edit the output by hand: change the types and run this.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
# `go list -m` prints no directory for a module that is not in the module cache yet (a fresh
# machine), so download it first: it is a no-op when the cache already holds it.
go mod download k8s.io/code-generator
CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ ! -f "${CODEGEN_PKG}/kube_codegen.sh" ]]; then
  echo "update-codegen: k8s.io/code-generator has no kube_codegen.sh at '${CODEGEN_PKG}'" >&2
  exit 1
fi
MODULE=github.com/kcp-setups/apiserver
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
# The tools install into the project's own bin dir, not the user's GOPATH.
export GOBIN="${ROOT}/_output/codegen-bin"
mkdir -p "${GOBIN}"

# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

# Protobuf first, as Kubernetes' own codegen does: it rewrites the types' struct tags
# (protobuf:"...") that the later generators read. kube_codegen.sh has no protobuf step, so
# go-to-protobuf runs here, with the same kind of module-mode install as its other tools.
PROTO_SRC=$(mktemp -d)
trap 'rm -rf "${PROTO_SRC}"' EXIT
gen_protobuf() {
  "${ROOT}/hack/install-protoc.sh"
  # Installed from code-generator's own module, as kube_codegen.sh installs its generators,
  # so their dependencies (gogo/protobuf for the protoc plugin) need no line in our go.mod.
  (cd "${CODEGEN_PKG}" && GO111MODULE=on go install \
    k8s.io/code-generator/cmd/go-to-protobuf \
    k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo)
  # go-to-protobuf runs goimports on its output. It cannot be installed from either module
  # (their go.sum lack x/telemetry), so it is installed at the version code-generator pins.
  local x_tools
  x_tools=$(cd "${CODEGEN_PKG}" && go list -m -f '{{.Version}}' golang.org/x/tools)
  GO111MODULE=on go install "golang.org/x/tools/cmd/goimports@${x_tools}"

  # protoc resolves imports by import path ("k8s.io/api/core/v1/generated.proto") under its
  # -I roots and writes generated.pb.go under the go_package path, so the modules it touches
  # are laid out GOPATH-style: links to this tree and to the read-only module cache.
  local gogo src="${PROTO_SRC}"
  # The plugin's install above brought gogo/protobuf, whose gogo.proto the IDL imports.
  gogo=$(cd "${CODEGEN_PKG}" && go list -m -f '{{.Dir}}' github.com/gogo/protobuf)
  mkdir -p "${src}/github.com/kcp-setups" "${src}/github.com/gogo" "${src}/k8s.io"
  ln -s "${ROOT}" "${src}/${MODULE}"
  ln -s "${gogo}" "${src}/github.com/gogo/protobuf"
  local m
  go mod download k8s.io/api k8s.io/apimachinery
  for m in k8s.io/api k8s.io/apimachinery; do
    ln -s "$(go list -m -f '{{.Dir}}' "${m}")" "${src}/${m}"
  done

  # Only our external types are written ("-" marks a dependency that is referenced, never
  # regenerated: those live in the module cache and ship their own generated.proto).
  local deps=(
    k8s.io/apimachinery/pkg/util/intstr
    k8s.io/apimachinery/pkg/api/resource
    k8s.io/apimachinery/pkg/runtime/schema
    k8s.io/apimachinery/pkg/runtime
    k8s.io/apimachinery/pkg/apis/meta/v1
    k8s.io/api/core/v1
  )
  PATH="${GOBIN}:${PATH}" go-to-protobuf \
    --go-header-file "${BOILERPLATE}" \
    --output-dir "${src}" \
    --proto-import "${src}" \
    --proto-import "${gogo}/protobuf" \
    --apimachinery-packages "$(printf -- '-%s,' "${deps[@]}" | sed 's/,$//')" \
    --packages "${MODULE}/pkg/apis/operator/v1alpha1"
}
gen_protobuf

kube::codegen::gen_helpers \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/pkg/apis"

REPORT_ARGS=(--report-filename "${ROOT}/api/api-rules/violation_exceptions.list")
if [[ "${UPDATE_API_KNOWN_VIOLATIONS:-true}" == "true" ]]; then
  REPORT_ARGS+=(--update-report)
fi
kube::codegen::gen_openapi \
  --output-dir "${ROOT}/pkg/generated/openapi" \
  --output-pkg "${MODULE}/pkg/generated/openapi" \
  --extra-pkgs k8s.io/api/core/v1 \
  --output-model-name-file zz_generated.model_name.go \
  "${REPORT_ARGS[@]}" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/pkg/apis"

CORE_APPLY=k8s.io/client-go/applyconfigurations/core/v1
EXTERNALS=""
for t in LocalObjectReference ResourceRequirements Volume VolumeMount Affinity Toleration HostAlias TopologySpreadConstraint; do
  EXTERNALS+="k8s.io/api/core/v1.${t}:${CORE_APPLY},"
done

# --prefers-protobuf: the clientset asks for protobuf (falling back to JSON) unless its
# rest.Config names a content type, as the kubernetes clientset does.
kube::codegen::gen_client \
  --with-watch \
  --prefers-protobuf \
  --with-applyconfig \
  --applyconfig-externals "${EXTERNALS%,}" \
  --output-dir "${ROOT}/pkg/generated" \
  --output-pkg "${MODULE}/pkg/generated" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/pkg/apis"
