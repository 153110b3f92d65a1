// Package frontproxy realizes FrontProxies in the host cluster: their certificates, signed
// by their RootShard's CAs, their kubeconfig toward the shards, their path mappings, and the
// kcp-front-proxy Deployment and Service, and reports back through status.
package frontproxy

import (
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles FrontProxies.
type Controller struct {
	kinds.FrontProxyBase
}

// New sets up a FrontProxy controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.FrontProxy)
