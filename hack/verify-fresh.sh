#!/usr/bin/env bash
# Proves that a fresh machine needs nothing but the Go module proxy: code generation is
# verified and every tool of the local stack is built against an empty module cache (a
# temporary GOMODCACHE, removed afterwards), into a scratch output directory. The build
# cache stays warm, so this costs downloads and links rather than compilation. CI runs it
# (.ci/run) because a warm module cache on the developers' machines hides missing steps.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
SCRATCH=$(mktemp -d)
# Module cache files are read-only unless -modcacherw; restore write access before removal
# anyway, so a failure part-way never leaves an undeletable tree behind.
cleanup() {
  chmod -R u+w "${SCRATCH}" 2>/dev/null || true
  rm -rf "${SCRATCH}"
}
trap cleanup EXIT
# An interrupted run cleans up too: bash runs no EXIT trap when a signal kills it.
trap 'exit 130' INT
trap 'exit 143' TERM

export GOMODCACHE="${SCRATCH}/mod"
GOFLAGS="$(go env GOFLAGS) -modcacherw"
export GOFLAGS
start=${SECONDS}

echo "verify-fresh: code generation against an empty module cache (${GOMODCACHE})"
FRESH_CODEGEN_BIN=true hack/verify-codegen.sh

echo "verify-fresh: the local stack's tools against the same cache, into ${SCRATCH}/output"
TOOLS_OUTPUT="${SCRATCH}/output" hack/tools/build.sh

# The framework refuses to start without these; check that the build left every one.
missing=()
for f in bin/etcd bin/kube-apiserver bin/kube-controller-manager bin/kube-scheduler bin/kubectl \
  bin/kwok bin/cert-manager-controller bin/helm bin/kcp-setups-image bin/etcdctl bin/etcdutl bin/versitygw \
  cert-manager-crds/cert-manager.io_certificates.yaml \
  kwok-stages/pod-ready.yaml kwok-crds/kwok.x-k8s.io_clusterportforwards.yaml kwok-crds/kwok.x-k8s.io_clusterlogs.yaml; do
  [[ -s "${SCRATCH}/output/${f}" ]] || missing+=("${f}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "verify-fresh: the tools' build left no ${missing[*]}" >&2
  exit 1
fi
echo "verify-fresh: ok in $((SECONDS - start))s; downloaded $(du -sh "${GOMODCACHE}" | cut -f1) of modules"
