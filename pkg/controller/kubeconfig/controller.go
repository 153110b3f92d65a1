// Package kubeconfig realizes declared Kubeconfigs in the host cluster: a cert-manager
// Certificate of the declared identity, signed by the target RootShard's front-proxy-client
// CA, and, once it is issued, the Secret spec.secretRef.name with a kubeconfig file toward
// the target. A target named by a copy of a RootShard's kubeconfig-issuer Secret
// (rootShardSecretRef) is that RootShard joined from the copy (reference.Join): the
// Kubeconfig writes the local copy of its front-proxy-client CA, behind an Issuer, and its
// server CA bundle, and its certificate is signed by them. When cert-manager renews the
// certificate, the Secret is written again. With spec.authorization, it also binds the ClusterRoles in kcp (authorization.go), through the
// target's RootShard as the server's own identity, and removes the bindings before the
// Secret when the Kubeconfig goes. It watches nothing in kcp: a failure there is retried
// with the queue's backoff. It reports back through status.
package kubeconfig

import (
	"time"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles Kubeconfigs. Their phases (Provisioning, Ready, Failed) are not a
// setup's: reconcile sets them, and deletion shows as Available=False with reason Deleting.
type Controller struct {
	kinds.KubeconfigBase
	// rbacFor builds the RBAC client of a kcp workspace; nil is the real one (newRBAC).
	rbacFor RBACFor
	// maxValidity bounds the lifetime of the certificates (Deps.MaxKubeconfigValidity).
	maxValidity time.Duration
}

// Configure keeps the server's maximum validity.
func (c *Controller) Configure(deps controller.Deps) { c.maxValidity = deps.MaxKubeconfigValidity }

// New sets up a Kubeconfig controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.Kubeconfig)
