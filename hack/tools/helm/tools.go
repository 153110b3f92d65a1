//go:build tools

// Package tools pins Helm, which hack/tools/build.sh builds into _output/bin.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
