#!/usr/bin/env bash
# Fails when the generated code is stale: regenerates into a scratch copy of the tree and
# compares it with the checked-in one.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRATCH=$(mktemp -d)
trap 'rm -rf "${SCRATCH}"' EXIT

# Copy what generation reads and writes, and share the project's codegen binaries.
mkdir -p "${SCRATCH}/_output"
cp -a "${ROOT}/go.mod" "${ROOT}/go.sum" "${ROOT}/hack" "${ROOT}/pkg" "${ROOT}/api" "${SCRATCH}/"
# FRESH_CODEGEN_BIN=true (hack/verify-fresh.sh) builds them anew instead.
if [[ "${FRESH_CODEGEN_BIN:-false}" != "true" && -d "${ROOT}/_output/codegen-bin" ]]; then
  cp -a "${ROOT}/_output/codegen-bin" "${SCRATCH}/_output/"
fi

UPDATE_API_KNOWN_VIOLATIONS=true "${SCRATCH}/hack/update-codegen.sh" >/dev/null

# Compare every generated file, in either tree, so that stale, changed and missing files all fail.
# All of pkg/apis counts: go-to-protobuf writes generated.proto and generated.pb.go there, and
# rewrites the protobuf:"..." tags of the types' own files.
generated() {
  (cd "$1" && find pkg api -type f \( -name 'zz_generated*' -o -path 'pkg/apis/*' -o -path 'pkg/generated/*' -o -path 'api/*' \) | LC_ALL=C sort)
}
status=0
while read -r f; do
  if ! diff -Nu "${ROOT}/${f}" "${SCRATCH}/${f}"; then
    status=1
  fi
done < <( (generated "${ROOT}"; generated "${SCRATCH}") | LC_ALL=C sort -u)
if [[ ${status} -ne 0 ]]; then
  echo "Generated code is out of date: run hack/update-codegen.sh and commit the result." >&2
  exit 1
fi
echo "Generated code is up to date."
