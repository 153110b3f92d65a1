// Package virtualworkspace builds what a VirtualWorkspace needs in the host cluster from its
// spec and its target's: its serving certificate and its identities toward kcp, signed by the
// target RootShard's CAs, their kubeconfigs, and the Deployment and Service of kcp's
// standalone virtual-workspaces server or of a third-party server built on kcp's
// virtual-workspace framework. Every function is pure.
package virtualworkspace

import (
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Kind is the owner label's kind of everything a VirtualWorkspace owns.
const Kind = "virtualworkspace"

// The certificateTemplates keys of a VirtualWorkspace's certificates: server customizes the
// serving certificate, client both identities toward kcp.
const (
	ServerRole = "server"
	ClientRole = "client"
)

// The identities of a VirtualWorkspace's certificates, the last part of their names and their
// owner labels' component.
const (
	serverIdentity        = "server"
	clientIdentity        = "client"
	externalAdminIdentity = "external-admin"
)

// ClientCommonName is the user of a VirtualWorkspace's client certificate: kcp-operator's,
// <name>-virtual-workspace.
func ClientCommonName(name string) string { return name + "-virtual-workspace" }

// VirtualWorkspace is a VirtualWorkspace with its target: everything its objects depend on.
type VirtualWorkspace struct {
	*operatorv1alpha1.VirtualWorkspace
	// Target is the target root shard or shard as the kcp builders see it
	// (rootshard.Server(rs) or shard.Server(s, rs)); Target.RootShard is the RootShard whose
	// PKI the server's certificates come from.
	Target kcp.Server
}

// Names of what a VirtualWorkspace owns. They all carry "-virtual-workspace", so that they
// never clash with a Shard of the same name, whose certificates are <name>-server and so on.
func (v VirtualWorkspace) ServiceName() string {
	return v.Name + operator.VirtualWorkspaceServiceSuffix
}
func (v VirtualWorkspace) DeploymentName() string          { return v.ServiceName() }
func (v VirtualWorkspace) certName(identity string) string { return v.ServiceName() + "-" + identity }

// ServerName, ClientName and ExternalAdminName are the server's Certificates and their Secrets.
func (v VirtualWorkspace) ServerName() string        { return v.certName(serverIdentity) }
func (v VirtualWorkspace) ClientName() string        { return v.certName(clientIdentity) }
func (v VirtualWorkspace) ExternalAdminName() string { return v.certName(externalAdminIdentity) }

// KubeconfigName is the Secret of the kubeconfig the server reaches its target with, as its
// client certificate.
func (v VirtualWorkspace) KubeconfigName() string { return v.ServiceName() + "-kubeconfig" }

// ExternalAdminKubeconfigName is the Secret of the external logical-cluster-admin's
// kubeconfig toward the installation's front proxy.
func (v VirtualWorkspace) ExternalAdminKubeconfigName() string {
	return v.ExternalAdminName() + "-kubeconfig"
}

// RootCacheKubeconfigName is the Secret of the kubeconfig toward the root shard's embedded
// cache, for a server next to a Shard that has no cache server (see Kubeconfigs).
func (v VirtualWorkspace) RootCacheKubeconfigName() string {
	return v.ServiceName() + "-cache-kubeconfig"
}

// MergedClientCAName is the Secret of the VirtualWorkspace's own client CA bundle, when it
// has clientCABundleRef.
func (v VirtualWorkspace) MergedClientCAName() string { return v.ServiceName() + "-merged-client-ca" }

// ClientCASecret is the Secret of the client CA bundle the server verifies clients by: its
// own with clientCABundleRef, else the one of its target, which the target's shard mounts
// too, so that the shard's client certificate is accepted.
func (v VirtualWorkspace) ClientCASecret() string {
	if v.Spec.ClientCABundleRef != nil {
		return v.MergedClientCAName()
	}
	return v.Target.ClientCASecret()
}

// MergedClientCA builds the VirtualWorkspace's own client CA bundle, when it has
// clientCABundleRef: its target's client CA bundle (ClientCASecret without the ref), then the
// extra CAs.
func (v VirtualWorkspace) MergedClientCA(targetClientCA, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(v.Namespace, v.MergedClientCAName(), v.labels("merged-client-ca"), targetClientCA, extra)
}

// MergedCABundleName is the Secret of the CA bundle the external admin kubeconfig trusts
// when the VirtualWorkspace has caBundleSecretRef.
func (v VirtualWorkspace) MergedCABundleName() string { return v.ServiceName() + "-merged-ca-bundle" }

// MergedCABundle builds the VirtualWorkspace's own server CA bundle, when it has
// caBundleSecretRef: what its target's external admin kubeconfig trusts (TargetServerCABundle),
// then the extra CAs. As in kcp-operator, only the external logical-cluster-admin kubeconfig
// trusts it: it verifies the installation's external address, which may serve a certificate
// of another issuer.
func (v VirtualWorkspace) MergedCABundle(targetCABundle, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(v.Namespace, v.MergedCABundleName(), v.labels("merged-ca-bundle"), targetCABundle, extra)
}

// TargetServerCABundle is the Secret whose tls.crt the VirtualWorkspace's own server CA bundle
// starts from: the target's CA bundle where it has one, else the server CA.
func (v VirtualWorkspace) TargetServerCABundle() string {
	if v.Target.ServerCABundle != "" {
		return v.Target.ServerCABundle
	}
	return pki.TrustSecretOf(v.Target.RootShard, pki.ServerCA)
}

// externalAdminCABundle is the Secret of the CA bundle the external admin kubeconfig trusts,
// or "" for the server CA alone.
func (v VirtualWorkspace) externalAdminCABundle() string {
	if v.Spec.CABundleSecretRef != nil {
		return v.MergedCABundleName()
	}
	return v.Target.ServerCABundle
}

// BundleSources are the user's Secrets the VirtualWorkspace's own CA bundles are made of: a
// change to one rebuilds them.
func (v VirtualWorkspace) BundleSources() []string {
	var names []string
	for _, ref := range []*corev1.LocalObjectReference{v.Spec.ClientCABundleRef, v.Spec.CABundleSecretRef} {
		if ref != nil {
			names = append(names, ref.Name)
		}
	}
	return names
}

func (v VirtualWorkspace) clusterDomain() string {
	if v.Spec.ClusterDomain == "" {
		return operatorv1alpha1.DefaultClusterDomain
	}
	return v.Spec.ClusterDomain
}

// ServiceURL is where the server is reached inside the cluster: the front proxy's /services/
// backend when the server serves a root shard.
func (v VirtualWorkspace) ServiceURL() string {
	return operator.VirtualWorkspaceURL(v.Name, v.Namespace, v.Spec.ClusterDomain, "", 0)
}

// URL is the address the target shard announces for its virtual workspaces and calls the
// server at (--shard-virtual-workspace-url): https://<external.hostname>:<external.port>, as
// in kcp-operator, the port defaulting to 6443 like every external port; without a hostname,
// ServiceURL. The registry's URL column is the same computation.
func (v VirtualWorkspace) URL() string {
	e := v.Spec.External
	return operator.VirtualWorkspaceURL(v.Name, v.Namespace, v.Spec.ClusterDomain, e.Hostname, e.Port)
}

// Endpoint is the server as the target shard's builders see it.
func (v VirtualWorkspace) Endpoint() *kcp.VirtualWorkspaceEndpoint {
	return &kcp.VirtualWorkspaceEndpoint{URL: v.URL()}
}

// image is the server's image: its own, else its target's, so that by default the server
// runs the kcp release of the shard it serves.
func (v VirtualWorkspace) image() *operatorv1alpha1.ImageSpec {
	if v.Spec.Image != nil || v.Target.Spec == nil {
		return v.Spec.Image
	}
	return v.Target.Spec.Image
}

// Version is the kcp release of the server's image.
func (v VirtualWorkspace) Version() kcpversion.Version { return workload.KcpVersion(v.image()) }

// ThirdParty reports whether the server is not kcp's own but the one spec.command names.
func (v VirtualWorkspace) ThirdParty() bool { return len(v.Spec.Command) > 0 }

// OwnIdentity reports whether the server reaches kcp as its own client certificate, rather
// than the least-privilege kubeconfig the user brings in spec.kubeconfigSecretRef.
func (v VirtualWorkspace) OwnIdentity() bool { return v.Spec.KubeconfigSecretRef == nil }

// UsesClientIdentity reports whether a container of the pod reaches kcp as the server's own
// client certificate: the server without spec.kubeconfigSecretRef, or an init container
// without its own kubeconfigSecretRef. Without one, the certificate is not even issued.
func (v VirtualWorkspace) UsesClientIdentity() bool {
	if v.OwnIdentity() {
		return true
	}
	for _, ic := range v.Spec.InitContainers {
		if ic.KubeconfigSecretRef == nil {
			return true
		}
	}
	return false
}

// HasExternalAdmin reports whether the server gets the external logical-cluster-admin
// identity: only kcp's own server, on a release that takes it, and only when the user did
// not bring a least-privilege identity, which an admin key in the pod would undo.
func (v VirtualWorkspace) HasExternalAdmin() bool {
	return !v.ThirdParty() && v.OwnIdentity() && v.Version().VirtualWorkspaceExternalAdmin()
}

// needsRootCache reports whether the server's cache is the root shard's embedded one, reached
// through a kubeconfig of its own: a Shard without a cache server has no cache of its own
// (kcp runs the embedded cache only without --cache-kubeconfig, which every Shard passes),
// and kcp's server would otherwise look for it on the Shard.
func (v VirtualWorkspace) needsRootCache() bool {
	return v.Target.Cache == nil && v.Target.Kind != kcp.RootShardKind
}

func (v VirtualWorkspace) labels(component string) map[string]string {
	return pki.Labels(Kind, v.Name, component)
}

// Service builds the server's Service.
func (v VirtualWorkspace) Service() *corev1ac.ServiceApplyConfiguration {
	return workload.Service(v.Namespace, v.ServiceName(), pki.WorkloadLabels(Kind, v.Name, pki.VirtualWorkspaceWorkload), v.SelectorLabels(), 6443, v.Spec.ServiceTemplate)
}

// component is the owner label's component of the server's Deployment and Service, and the
// name of its container.
const component = "virtual-workspaces"

// SelectorLabels select the server's pods.
func (v VirtualWorkspace) SelectorLabels() map[string]string {
	return map[string]string{pki.LabelInstance: v.Name, pki.LabelComponent: component, pki.OwnerLabel(Kind): v.Name}
}
