// Package frontproxy builds what a FrontProxy needs in the host cluster from its spec and
// its RootShard's: its certificates, signed by the RootShard's CAs, its kubeconfig toward
// the shards, its path mappings, and the kcp-front-proxy Deployment and Service. Every
// function is pure.
package frontproxy

import (
	"fmt"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Kind is the owner label's kind of everything a FrontProxy owns.
const Kind = "frontproxy"

// Where things are mounted in the kcp-front-proxy container (docs/WORKLOADS.md).
const (
	baseDir          = mountpaths.FrontProxyDir
	servingDir       = baseDir + "/tls"
	kubeconfigDir    = baseDir + "/kubeconfig"
	configDir        = baseDir + "/config"
	clientCADir      = baseDir + "/client-ca"
	serverCADir      = baseDir + "/ca/server"
	kubeconfigClient = baseDir + "/kubeconfig-client"
	requestHeaderDir = baseDir + "/requestheader"
	// requestHeaderCADir holds the requestheader-client CA, which signs the shards' mount
	// proxy identities.
	requestHeaderCADir = baseDir + "/ca/requestheader-client"
	// MappingKey is the key of the path mappings in the ConfigMap.
	MappingKey = "path-mapping.yaml"
)

// FrontProxy is a FrontProxy with its RootShard: everything its objects depend on.
type FrontProxy struct {
	*operatorv1alpha1.FrontProxy
	RootShard *operatorv1alpha1.RootShard
	// ServiceAccountIssuers are the root shard and shards of RootShard whose service-account
	// Secret exists, as the controller found them. With auth.serviceAccount enabled, the front
	// proxy verifies tokens with each one's public key; without it, it verifies none.
	ServiceAccountIssuers []string
	// ServicesBackend, when set, is where /services/ goes instead of the root shard: the
	// ServiceURL() of the VirtualWorkspace that serves the root shard's virtual workspaces,
	// as the controller resolved it from the RootShard's spec.kcpVirtualWorkspace.
	ServicesBackend string
	// MappedVirtualWorkspaces are the ServiceURL()s of the VirtualWorkspaces that path
	// mappings name (virtualWorkspaceRef), by name, as the controller resolved them: only
	// those that exist and serve RootShard or one of its Shards. A mapping whose
	// VirtualWorkspace is not here is left out.
	MappedVirtualWorkspaces map[string]string
}

// Names of what a FrontProxy owns (docs/PKI.md, docs/WORKLOADS.md).
func (f FrontProxy) ServiceName() string         { return f.Name + "-front-proxy" }
func (f FrontProxy) ConfigMapName() string       { return f.Name + "-config" }
func (f FrontProxy) certName(role string) string { return f.RootShard.Name + "-" + f.Name + "-" + role }

// MergedClientCAName is the Secret of the client CAs a FrontProxy with clientCABundleRef
// trusts.
func (f FrontProxy) MergedClientCAName() string { return f.certName("merged-client-ca") }

// MergedCABundleName is the Secret of the server CAs a FrontProxy with caBundleSecretRef
// trusts toward its backends, and that kubeconfigs toward it trust.
func (f FrontProxy) MergedCABundleName() string { return f.certName("merged-ca-bundle") }

// clientCA is the Secret of the client CA bundle the front proxy verifies clients by.
func (f FrontProxy) clientCA() string {
	if f.Spec.ClientCABundleRef != nil {
		return f.MergedClientCAName()
	}
	return kcp.MergedClientCAName(f.RootShard)
}

// serverCA is the Secret of the CAs the front proxy verifies the root shard by.
func (f FrontProxy) serverCA() string {
	if f.Spec.CABundleSecretRef != nil {
		return f.MergedCABundleName()
	}
	return pki.TrustSecretOf(f.RootShard, pki.ServerCA)
}

// MergedClientCA builds the front proxy's own client CA bundle, when it has
// clientCABundleRef: its RootShard's merged client CA, then its extra CAs.
func (f FrontProxy) MergedClientCA(rootShardClientCA, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(f.Namespace, f.MergedClientCAName(), pki.Labels(Kind, f.Name, "merged-client-ca"), rootShardClientCA, extra)
}

// MergedCABundle builds the front proxy's own server CA bundle, when it has
// caBundleSecretRef: its RootShard's merged CA bundle (the server CA and the RootShard's
// caBundleSecretRef), then its extra CAs. The front proxy verifies the root shard by it, and
// kubeconfigs toward the front proxy trust it: its serving certificate may come from an
// issuer of a certificate template, whose CA the extra CAs hold.
func (f FrontProxy) MergedCABundle(rootShardCABundle, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(f.Namespace, f.MergedCABundleName(), pki.Labels(Kind, f.Name, "merged-ca-bundle"), rootShardCABundle, extra)
}

// DynamicKubeconfigName is the Secret of the front proxy's kubeconfig toward the shards.
func (f FrontProxy) DynamicKubeconfigName() string { return f.certName("dynamic-kubeconfig") }

// ExternalHostname is the front proxy's own external hostname: external.hostname, else the
// host of the deprecated externalHostname that kcp-operator's manifests may still set
// (validation refuses both together), else empty, where the RootShard's applies.
func (f FrontProxy) ExternalHostname() string {
	if e := f.Spec.External; e != nil && e.Hostname != "" {
		return e.Hostname
	}
	host, _ := operatorv1alpha1.SplitExternalHostname(f.Spec.ExternalHostname)
	return host
}

// ServicePort is the front proxy's external port, else the port of its deprecated
// externalHostname (host:port, as kcp-operator reads it), else its RootShard's, else 6443.
func (f FrontProxy) ServicePort() int32 {
	if e := f.Spec.External; e != nil && e.Port != 0 {
		return e.Port
	}
	if _, p := operatorv1alpha1.SplitExternalHostname(f.Spec.ExternalHostname); p != 0 {
		return p
	}
	if p := f.RootShard.Spec.External.Port; p != 0 {
		return p
	}
	return operatorv1alpha1.DefaultExternalPort
}

// Leaves are the front proxy's certificates: its serving certificate, its identity toward
// the shards, and the request-header identity it proxies users with.
func (f FrontProxy) Leaves() []pki.Leaf {
	rs := f.RootShard.Name
	svc := f.ServiceName()
	domain := f.RootShard.Spec.ClusterDomain
	if domain == "" {
		domain = operatorv1alpha1.DefaultClusterDomain
	}
	dns := []string{svc, svc + "." + f.Namespace, svc + "." + f.Namespace + ".svc", svc + "." + f.Namespace + ".svc." + domain}
	if h := f.ExternalHostname(); h != "" {
		dns = append(dns, h)
	}
	dns = append(dns, f.RootShard.Spec.External.Hostname)
	// Internal components reach the installation at the private addresses (kcp-operator adds
	// the RootShard's; a FrontProxy's own is its hostname inside the cluster).
	if h := f.RootShard.Spec.External.PrivateHostname; h != "" {
		dns = append(dns, h)
	}
	if e := f.Spec.External; e != nil && e.PrivateHostname != "" {
		dns = append(dns, e.PrivateHostname)
	}
	return []pki.Leaf{
		{Name: f.certName("server"), Role: "server", Issuer: pki.CAName(rs, pki.ServerCA), CommonName: f.Name, DNSNames: dns, Usage: pki.ServerAuth},
		{Name: f.certName("kubeconfig"), Role: "kubeconfig", Issuer: pki.CAName(rs, pki.ClientCA), CommonName: "kcp-front-proxy",
			Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
		{Name: f.certName("requestheader"), Role: "requestheader", Issuer: pki.CAName(rs, pki.RequestHeaderClientCA),
			CommonName: "kcp-front-proxy", Usage: pki.ClientAuth},
	}
}

// Certificates are the front proxy's certificates with its templates merged in.
func (f FrontProxy) Certificates() []*cmapply.CertificateApplyConfiguration {
	var out []*cmapply.CertificateApplyConfiguration
	for _, leaf := range f.Leaves() {
		var tmpl *operatorv1alpha1.CertificateTemplate
		if t, ok := f.Spec.CertificateTemplates[leaf.Role]; ok {
			tmpl = &t
		}
		out = append(out, certificates.Certificate(certificates.Leaf(f.Namespace, leaf, pki.Labels(Kind, f.Name, leaf.Role), tmpl)))
	}
	return out
}

// DynamicKubeconfig builds the Secret of the front proxy's kubeconfig toward the root shard
// and, through it, the shards.
func (f FrontProxy) DynamicKubeconfig() (*corev1ac.SecretApplyConfiguration, error) {
	s := rootshard.Server(f.RootShard)
	secret, err := kcp.KubeconfigFor(f.Namespace, f.DynamicKubeconfigName(), pki.Labels(Kind, f.Name, "dynamic-kubeconfig"),
		s.BaseURL(), serverCADir+"/tls.crt", "kcp-front-proxy", kubeconfigClient+"/tls.crt", kubeconfigClient+"/tls.key")
	if err != nil {
		return nil, fmt.Errorf("front proxy %s: %w", f.Name, err)
	}
	return secret, nil
}

// pathMapping is an entry of kcp-front-proxy's mapping file.
type pathMapping struct {
	Path            string `json:"path"`
	Backend         string `json:"backend"`
	BackendServerCA string `json:"backend_server_ca,omitempty"`
	ProxyClientCert string `json:"proxy_client_cert,omitempty"`
	ProxyClientKey  string `json:"proxy_client_key,omitempty"`
}

// kcpMapping is a mapping of path to backend, a root shard's or a VirtualWorkspace's of the
// same RootShard, with the proxy's request-header identity (the caller's user and groups in
// headers) and verified by its server CA: the identity goes nowhere else.
func kcpMapping(path, backend string) pathMapping {
	return pathMapping{Path: path, Backend: backend, BackendServerCA: serverCADir + "/tls.crt",
		ProxyClientCert: requestHeaderDir + "/tls.crt", ProxyClientKey: requestHeaderDir + "/tls.key"}
}

// ConfigMap builds the path mappings: /clusters/ goes to the root shard and /services/ to
// the root shard's virtual workspace server (ServicesBackend), else the root shard too, then
// the user's additional mappings. A mapping to a VirtualWorkspace goes to its Service
// (MappedVirtualWorkspaces) as /services/ does, or is left out while it is not there; any
// other goes to its backend with the author's files.
func (f FrontProxy) ConfigMap() (*corev1ac.ConfigMapApplyConfiguration, error) {
	base := rootshard.Server(f.RootShard).BaseURL()
	services := base
	if f.ServicesBackend != "" {
		services = f.ServicesBackend
	}
	mappings := []pathMapping{kcpMapping("/clusters/", base), kcpMapping("/services/", services)}
	for _, m := range f.Spec.AdditionalPathMappings {
		switch {
		case m.VirtualWorkspaceRef == nil:
			mappings = append(mappings, pathMapping{Path: m.Path, Backend: m.Backend,
				BackendServerCA: m.BackendServerCA, ProxyClientCert: m.ProxyClientCert, ProxyClientKey: m.ProxyClientKey})
		case f.MappedVirtualWorkspaces[m.VirtualWorkspaceRef.Name] != "":
			mappings = append(mappings, kcpMapping(m.Path, f.MappedVirtualWorkspaces[m.VirtualWorkspaceRef.Name]))
		}
	}
	data, err := yaml.Marshal(mappings)
	if err != nil {
		return nil, err
	}
	return corev1ac.ConfigMap(f.ConfigMapName(), f.Namespace).WithLabels(pki.Labels(Kind, f.Name, "config")).
		WithData(map[string]string{MappingKey: string(data)}), nil
}

// Service builds the front proxy's Service.
func (f FrontProxy) Service() *corev1ac.ServiceApplyConfiguration {
	return workload.Service(f.Namespace, f.ServiceName(), pki.WorkloadLabels(Kind, f.Name, pki.FrontProxyWorkload), f.SelectorLabels(), f.ServicePort(), f.Spec.ServiceTemplate)
}

// Version is the kcp release of the front proxy's image.
func (f FrontProxy) Version() kcpversion.Version { return workload.KcpVersion(f.Spec.Image) }

// SelectorLabels select the front proxy's pods.
func (f FrontProxy) SelectorLabels() map[string]string {
	return map[string]string{pki.LabelInstance: f.Name, pki.LabelComponent: "front-proxy", pki.OwnerLabel(Kind): f.Name}
}
