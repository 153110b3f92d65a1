// Package cacheserver realizes CacheServers in the host cluster: their standalone CA, their
// certificates, the kubeconfig root shards and shards reach them with, and the cache-server
// Deployment and Service, and reports back through status.
package cacheserver

import (
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles CacheServers.
type Controller struct {
	kinds.CacheServerBase
}

// New sets up a CacheServer controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.CacheServer)
