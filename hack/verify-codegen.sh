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
if [[ -d "${ROOT}/_output/codegen-bin" ]]; then
  cp -a "${ROOT}/_output/codegen-bin" "${SCRATCH}/_output/"
fi

UPDATE_API_KNOWN_VIOLATIONS=true "${SCRATCH}/hack/update-codegen.sh" >/dev/null

status=0
for dir in pkg api; do
  if ! diff -Naupr "${ROOT}/${dir}" "${SCRATCH}/${dir}"; then
    status=1
  fi
done
if [[ ${status} -ne 0 ]]; then
  echo "Generated code is out of date: run hack/update-codegen.sh and commit the result." >&2
  exit 1
fi
echo "Generated code is up to date."
