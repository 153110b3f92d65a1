#!/usr/bin/env bash
# Makes sure protoc, which go-to-protobuf runs to compile generated.proto, is installed: from
# Debian's protobuf-compiler package, only when protoc is missing or older than PROTOC_MIN.
# Idempotent, so hack/update-codegen.sh calls it on every run.
#
# go-to-protobuf itself checks nothing but that protoc is on PATH; it writes proto2 IDL, and
# protoc-gen-gogo embeds no file descriptor in generated.pb.go, so the output does not depend
# on protoc's exact version. PROTOC_MIN is the oldest release the generated code was checked
# with (Debian 12's), not a hard limit of the tools.
set -o errexit -o nounset -o pipefail

PROTOC_MIN=${PROTOC_MIN:-3.21}

# protoc prints "libprotoc 3.21.12" (3.x) or "libprotoc 25.1" (4.x and later dropped the 3.).
protoc_version() {
  protoc --version 2>/dev/null | awk '{print $2}'
}

# new_enough VERSION: whether VERSION >= PROTOC_MIN, comparing as versions, not strings.
# Releases after 3.21 are numbered 22, 23, ... and so compare as newer, as they are.
new_enough() {
  [[ -n "$1" ]] && [[ "$(printf '%s\n%s\n' "${PROTOC_MIN}" "$1" | sort -V | head -n1)" == "${PROTOC_MIN}" ]]
}

if command -v protoc >/dev/null && new_enough "$(protoc_version)"; then
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "install-protoc: protoc >= ${PROTOC_MIN} is needed (found '$(protoc_version)'); install it with your package manager" >&2
  exit 1
fi
SUDO=()
if [[ ${EUID} -ne 0 ]]; then
  SUDO=(sudo)
fi
echo "install-protoc: installing Debian's protobuf-compiler (found '$(protoc_version)', need >= ${PROTOC_MIN})" >&2
# A fresh machine has no package lists yet; updating them is cheap next to a failed install.
"${SUDO[@]}" apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends protobuf-compiler >&2
if ! new_enough "$(protoc_version)"; then
  echo "install-protoc: Debian's protoc is $(protoc_version), older than ${PROTOC_MIN}" >&2
  exit 1
fi
