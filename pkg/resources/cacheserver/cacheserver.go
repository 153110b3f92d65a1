// Package cacheserver builds what a CacheServer needs in the host cluster from its spec: its
// standalone CA, its serving and client certificates, the CA its clients are trusted by, the
// kubeconfig that root shards and shards reach it with, and the cache-server Deployment and
// Service. Every function is pure.
package cacheserver

import (
	"fmt"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Kind is the owner label's kind of everything a CacheServer owns.
const Kind = "cacheserver"

// The certificateTemplates keys of a CacheServer's certificates. RootCARole is
// kcp-operator's key for the CA; validation refuses it together with CARole.
const (
	CARole     = "ca"
	RootCARole = "root-ca"
	ServerRole = "server"
	ClientRole = "client"
)

// ClientCAKey is the key of the CA certificate in the client CA Secret.
const ClientCAKey = "tls.crt"

// CacheServer is a CacheServer as the builders see it.
type CacheServer struct {
	*operatorv1alpha1.CacheServer
}

// Names of what a CacheServer owns (docs/PKI.md, docs/WORKLOADS.md).
func (c CacheServer) ServiceName() string    { return c.Name + "-cache-server" }
func (c CacheServer) DeploymentName() string { return c.ServiceName() }
func (c CacheServer) CAName() string         { return c.Name + "-ca" }
func (c CacheServer) ServerName() string     { return c.Name + "-server" }
func (c CacheServer) ClientName() string     { return c.Name + "-client-certificate" }

// ClientCAName is the Secret with the cache server's CA certificate alone, which it trusts
// clients by, without the chain above it.
func (c CacheServer) ClientCAName() string { return c.Name + "-client-ca" }

// KubeconfigName is the Secret of the kubeconfig that root shards and shards reach the cache
// server with.
func (c CacheServer) KubeconfigName() string { return kcp.CacheKubeconfigName(c.Name) }

// CASecret is the Secret that holds the cache server's CA: the user's when it brings one,
// else the one cert-manager issues.
func (c CacheServer) CASecret() string {
	if cs := c.Spec.Certificates; cs != nil && cs.CASecretRef != nil {
		return cs.CASecretRef.Name
	}
	return c.CAName()
}

// URL is where the cache server is reached inside the cluster.
func (c CacheServer) URL() string {
	domain := c.Spec.ClusterDomain
	if domain == "" {
		domain = operatorv1alpha1.DefaultClusterDomain
	}
	return fmt.Sprintf("https://%s.%s.svc.%s:6443", c.ServiceName(), c.Namespace, domain)
}

func (c CacheServer) labels(component string) map[string]string {
	return pki.Labels(Kind, c.Name, component)
}

func (c CacheServer) template(role string) *operatorv1alpha1.CertificateTemplate {
	if t, ok := c.Spec.CertificateTemplates[role]; ok {
		return &t
	}
	return nil
}

// caTemplate is the CA's template under either of its keys.
func (c CacheServer) caTemplate() *operatorv1alpha1.CertificateTemplate {
	if t := c.template(CARole); t != nil {
		return t
	}
	return c.template(RootCARole)
}

// Leaves are the cache server's serving certificate and the client certificate the shards
// use toward it.
func (c CacheServer) Leaves() []pki.Leaf {
	svc, domain := c.ServiceName(), c.Spec.ClusterDomain
	if domain == "" {
		domain = operatorv1alpha1.DefaultClusterDomain
	}
	return []pki.Leaf{
		{Name: c.ServerName(), Role: ServerRole, Issuer: c.CAName(), CommonName: svc, Usage: pki.ServerAuth,
			DNSNames: []string{svc, svc + "." + c.Namespace, svc + "." + c.Namespace + ".svc", svc + "." + c.Namespace + ".svc." + domain, "localhost"}},
		{Name: c.ClientName(), Role: ClientRole, Issuer: c.CAName(), CommonName: "cache-client",
			Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
	}
}

// PKI is the cache server's cert-manager objects: its CA from spec.certificates or the
// namespace bootstrap, and its leaves.
func (c CacheServer) PKI() certificates.Objects {
	// Rotation (docs/rotation.md): the CA in slots, the Issuer on one.
	out := certificates.RotatingRootCA(c.Namespace, c.CAName(), c.labels("ca"), c.Spec.Certificates, c.caTemplate(),
		pki.SlotsOf(c.Status.Rotations, pki.CacheAuthority))
	for _, leaf := range c.Leaves() {
		out.Certificates = append(out.Certificates, certificates.Certificate(certificates.Leaf(c.Namespace, leaf, c.labels(leaf.Role), c.template(leaf.Role))))
	}
	return out
}

// Certificates are the cache server's own Certificates, without the shared bootstrap's.
func (c CacheServer) Certificates() []*cmapply.CertificateApplyConfiguration {
	var own []*cmapply.CertificateApplyConfiguration
	for _, cert := range c.PKI().Certificates {
		if !certificates.IsBootstrap(cert.Labels) {
			own = append(own, cert)
		}
	}
	return own
}

// ClientCA builds the Secret with the cache server's CA certificate alone.
func (c CacheServer) ClientCA(caCert []byte) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(c.ClientCAName(), c.Namespace).WithLabels(c.labels("client-ca")).WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{ClientCAKey: caCert})
}

// Kubeconfig builds the Secret of the kubeconfig toward the cache server. It carries the CA
// and the client certificate and key as data, because the pods of other objects mount it
// alone; so a renewed client certificate renders it again and rolls them.
func (c CacheServer) Kubeconfig(caCert, clientCert, clientKey []byte) (*corev1ac.SecretApplyConfiguration, error) {
	return KubeconfigSecret(c.Namespace, c.KubeconfigName(), c.labels("kubeconfig"), c.URL(), caCert, clientCert, clientKey)
}

// KubeconfigSecret builds a Secret with a kubeconfig toward the cache server at url: its
// CA certificate and a client certificate and key. A copy of a CacheServer's cache-client
// Secret renders the same kubeconfig in the namespace of the shard that names it.
func KubeconfigSecret(namespace, name string, labels map[string]string, url string, caCert, clientCert, clientKey []byte) (*corev1ac.SecretApplyConfiguration, error) {
	const context = "cache"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[context] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: caCert}
	cfg.AuthInfos[context] = &clientcmdapi.AuthInfo{ClientCertificateData: clientCert, ClientKeyData: clientKey}
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: context, AuthInfo: context}
	cfg.CurrentContext = context
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig %s toward the cache server: %w", name, err)
	}
	return corev1ac.Secret(name, namespace).WithLabels(labels).WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{kcp.KubeconfigKey: data}), nil
}

// Service builds the cache server's Service.
func (c CacheServer) Service() *corev1ac.ServiceApplyConfiguration {
	return workload.Service(c.Namespace, c.ServiceName(), pki.WorkloadLabels(Kind, c.Name, pki.CacheServerWorkload), c.SelectorLabels(), 6443, c.Spec.ServiceTemplate)
}

// SelectorLabels select the cache server's pods.
func (c CacheServer) SelectorLabels() map[string]string {
	return map[string]string{pki.LabelInstance: c.Name, pki.LabelComponent: "cache-server", pki.OwnerLabel(Kind): c.Name}
}
