#!/usr/bin/env bash
# Builds the tools of the local stack and the end-to-end tests from pinned Go modules into
# _output/bin/. Each module is rebuilt only when its pins or sources change; the first build
# takes 10 to 15 minutes on 2 cores, mostly kube-apiserver and its peers.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# TOOLS_OUTPUT builds somewhere else than _output, as hack/verify-fresh.sh does to prove that
# the build needs nothing but the module proxy.
OUTPUT="${TOOLS_OUTPUT:-${ROOT}/_output}"
BIN="${OUTPUT}/bin"
STAMPS="${OUTPUT}/tools-stamps"
mkdir -p "${BIN}" "${STAMPS}"

# module_dir DIR MODULE prints where MODULE, as pinned by the tools module in DIR, is unpacked.
# `go list -m` alone prints nothing for a module that is not in the module cache (a fresh
# cache, or binaries still fresh from an earlier build), so it is downloaded first.
module_dir() {
  local dir
  dir=$(cd "${ROOT}/hack/tools/$1" && go mod download "$2" && go list -m -f '{{.Dir}}' "$2")
  if [[ -z "${dir}" || ! -d "${dir}" ]]; then
    echo "tools: cannot locate module $2 of hack/tools/$1" >&2
    return 1
  fi
  echo "${dir}"
}

# build NAME DIR BINARY... -- PACKAGE...: builds PACKAGEs of the module in DIR, with the
# linker flags in LDFLAGS if set, unless the stamp of NAME matches the module's pins, sources
# and flags and every BINARY exists.
build() {
  local name=$1 dir="${ROOT}/hack/tools/$2" ldflags=${LDFLAGS:-}
  shift 2
  local bins=()
  while [[ $1 != "--" ]]; do bins+=("$1"); shift; done
  shift
  local sum
  sum=$( (cd "${dir}" && cat go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort); go version; echo "${ldflags}") | sha256sum | cut -c1-32)
  local fresh=true
  for b in "${bins[@]}"; do [[ -x "${BIN}/${b}" ]] || fresh=false; done
  if [[ ${fresh} == true && -f "${STAMPS}/${name}" && $(cat "${STAMPS}/${name}") == "${sum}" ]]; then
    echo "tools: ${name} is up to date (${bins[*]})"
    return
  fi
  echo "tools: building ${name} (${bins[*]}) from pinned modules; this takes a while the first time"
  local start=${SECONDS}
  (cd "${dir}" && go build -trimpath -ldflags="${ldflags}" -o "${BIN}/" "$@")
  echo "${sum}" > "${STAMPS}/${name}"
  echo "tools: built ${name} in $((SECONDS - start))s"
}

# Kubernetes' own build stamps its version into the binaries (hack/lib/version.sh); without
# it they report v0.0.0-master+$Format:%H$, and `kubectl version`, and every tool that reads
# the server's version (Helm's kubeVersion, for one), fail to parse it.
KUBE_VERSION=$(cd "${ROOT}/hack/tools/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ ! ${KUBE_VERSION} =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
  echo "tools: k8s.io/kubernetes is pinned at ${KUBE_VERSION}, not a release" >&2
  exit 1
fi
kube_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=${BASH_REMATCH[1]}"
  kube_ldflags+=" -X ${pkg}.gitMinor=${BASH_REMATCH[2]} -X ${pkg}.gitTreeState=archive"
done
LDFLAGS=${kube_ldflags} build kube kube etcd kube-apiserver kube-controller-manager kube-scheduler kubectl -- \
  ./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
build kwok kwok kwok -- sigs.k8s.io/kwok/cmd/kwok
build cert-manager cert-manager cert-manager-controller -- ./cert-manager-controller
# Helm, for the chart's lint, template and install tests; its version is stamped the way
# Helm's own Makefile does, so `helm version` names the pinned release.
HELM_VERSION=$(cd "${ROOT}/hack/tools/helm" && go list -m -f '{{.Version}}' helm.sh/helm/v4)
LDFLAGS="-X helm.sh/helm/v4/internal/version.version=${HELM_VERSION} -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
  build helm helm helm -- helm.sh/helm/v4/cmd/helm
# etcdctl and etcdutl, for the snapshot benchmark's anchor (`etcdctl snapshot save`), from the
# same etcd release as the etcd above: their module pins it apart, and is held to it here.
ETCD_VERSION=$(cd "${ROOT}/hack/tools/kube" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
for m in go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/etcdutl/v3 go.etcd.io/etcd/server/v3; do
  v=$(cd "${ROOT}/hack/tools/etcdctl" && go list -m -f '{{.Version}}' "${m}")
  if [[ ${v} != "${ETCD_VERSION}" ]]; then
    echo "tools: hack/tools/etcdctl pins ${m} at ${v}, hack/tools/kube's etcd is ${ETCD_VERSION}" >&2
    exit 1
  fi
done
build etcdctl etcdctl etcdctl etcdutl -- go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/etcdutl/v3
# versitygw, the S3 server of the tests (an S3 gateway over a plain directory; docs/TESTING.md).
build versitygw versitygw versitygw -- github.com/versity/versitygw/cmd/versitygw
# The image builder of `make image` (go-containerregistry), so a fresh module cache builds it too.
build image image kcp-setups-image -- ./kcp-setups-image

# cert-manager's CRDs come from the same pinned module as its controller.
CRDS="${OUTPUT}/cert-manager-crds"
CM_DIR=$(module_dir cert-manager github.com/cert-manager/cert-manager)
mkdir -p "${CRDS}"
cp -f "${CM_DIR}"/deploy/crds/*.yaml "${CRDS}/"
chmod u+w "${CRDS}"/*.yaml

# kwok's lifecycle stages (nodes turn Ready and heartbeat, pods turn Running and Ready) come
# from the same pinned module as kwok.
STAGES="${OUTPUT}/kwok-stages"
KWOK_DIR=$(module_dir kwok sigs.k8s.io/kwok)
mkdir -p "${STAGES}"
for stage in node/fast/node-initialize node/heartbeat/node-heartbeat pod/general/pod-create \
  pod/general/pod-init-container-running pod/general/pod-init-container-completed \
  pod/general/pod-ready pod/general/pod-complete pod/general/pod-delete; do
  cp -f "${KWOK_DIR}/kustomize/stage/${stage}.yaml" "${STAGES}/"
done
cp -f "${ROOT}/hack/tools/kwok/node-addresses.yaml" "${STAGES}/"
chmod u+w "${STAGES}"/*.yaml

# kwok's port-forward rules, which make the fake pods' ports reach a process on loopback, and
# its log rules, which give `kubectl logs` on a fake pod something to say.
KWOK_CRDS="${OUTPUT}/kwok-crds"
mkdir -p "${KWOK_CRDS}"
for crd in clusterportforwards clusterlogs; do
  cp -f "${KWOK_DIR}/kustomize/crd/bases/kwok.x-k8s.io_${crd}.yaml" "${KWOK_CRDS}/"
done
chmod u+w "${KWOK_CRDS}"/*.yaml
