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

kube::codegen::gen_client \
  --with-watch \
  --with-applyconfig \
  --applyconfig-externals "${EXTERNALS%,}" \
  --output-dir "${ROOT}/pkg/generated" \
  --output-pkg "${MODULE}/pkg/generated" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/pkg/apis"
