package virtualworkspace

import (
	"fmt"
	"strings"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Leaves are the server's serving certificate and its identities toward kcp, signed by its
// target RootShard's CAs.
func (v VirtualWorkspace) Leaves() []pki.Leaf {
	rs := v.Target.RootShard.Name
	leaves := []pki.Leaf{
		{Name: v.ServerName(), Role: ServerRole, Issuer: pki.CAName(rs, pki.ServerCA), CommonName: v.ServiceName(),
			DNSNames: v.serverDNSNames(), Usage: pki.ServerAuth},
	}
	if v.UsesClientIdentity() {
		// kcp's server reads every workspace of its shard through wildcard informers, the
		// rights the shard's own client identity has.
		leaves = append(leaves, pki.Leaf{Name: v.ClientName(), Role: ClientRole, Issuer: pki.CAName(rs, pki.ClientCA),
			CommonName: ClientCommonName(v.Name), Organization: []string{"system:masters"}, Usage: pki.ClientAuth})
	}
	if v.HasExternalAdmin() {
		// The front proxy drops system:masters but passes this group, with which the server
		// asks other shards whether a user may access their workspaces.
		leaves = append(leaves, pki.Leaf{Name: v.ExternalAdminName(), Role: ClientRole, Issuer: pki.CAName(rs, pki.ClientCA),
			CommonName: kcp.ExternalLogicalClusterAdmin, Organization: []string{"system:kcp:external-logical-cluster-admin"}, Usage: pki.ClientAuth})
	}
	return leaves
}

// serverDNSNames are the names the server is reached by: its Service in every form, its
// external and private hostnames, and localhost for its own probes.
func (v VirtualWorkspace) serverDNSNames() []string {
	svc, ns := v.ServiceName(), v.Namespace
	names := []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc." + v.clusterDomain()}
	if h := v.Spec.External.Hostname; h != "" {
		names = append(names, h)
	}
	if h := v.Spec.External.PrivateHostname; h != "" {
		names = append(names, h)
	}
	return append(names, "localhost")
}

// Certificates are the server's Certificates with its templates merged in: server's into the
// serving certificate, client's into both identities.
func (v VirtualWorkspace) Certificates() []*cmapply.CertificateApplyConfiguration {
	var out []*cmapply.CertificateApplyConfiguration
	for _, leaf := range v.Leaves() {
		var tmpl *operatorv1alpha1.CertificateTemplate
		if t, ok := v.Spec.CertificateTemplates[leaf.Role]; ok {
			tmpl = &t
		}
		identity := strings.TrimPrefix(leaf.Name, v.ServiceName()+"-")
		out = append(out, certificates.Certificate(certificates.Leaf(v.Namespace, leaf, v.labels(identity), tmpl)))
	}
	return out
}

// Kubeconfigs build the Secrets of the server's kubeconfigs, where a container uses its client
// identity: toward its target as its client certificate; toward the installation's front
// proxy as the external logical-cluster-admin, where it has that identity; toward the root
// shard's embedded cache, where it has no cache server. Each points at the certificate files
// by their mount paths, so a renewed certificate needs no new kubeconfig.
func (v VirtualWorkspace) Kubeconfigs() ([]*corev1ac.SecretApplyConfiguration, error) {
	if !v.UsesClientIdentity() {
		return nil, nil
	}
	client, err := kcp.KubeconfigFor(v.Namespace, v.KubeconfigName(), v.labels("kubeconfig"), v.Target.BaseURL(),
		serverCAFile, ClientCommonName(v.Name), clientDir+"/tls.crt", clientDir+"/tls.key")
	if err != nil {
		return nil, fmt.Errorf("virtual workspace %s: %w", v.Name, err)
	}
	out := []*corev1ac.SecretApplyConfiguration{client}
	if v.HasExternalAdmin() {
		// Like the shards' own external admin kubeconfig: the private address where the
		// installation has one, and the CA bundle that verifies it where there is one (its
		// own with caBundleSecretRef, else the target's).
		caFile := serverCAFile
		if v.externalAdminCABundle() != "" {
			caFile = caBundleDir + "/tls.crt"
		}
		admin, err := kcp.KubeconfigFor(v.Namespace, v.ExternalAdminKubeconfigName(), v.labels(externalAdminIdentity+"-kubeconfig"),
			v.Target.ExternalAdminURL(), caFile, kcp.ExternalLogicalClusterAdmin, externalAdminDir+"/tls.crt", externalAdminDir+"/tls.key")
		if err != nil {
			return nil, fmt.Errorf("virtual workspace %s: %w", v.Name, err)
		}
		out = append(out, admin)
	}
	if v.needsRootCache() {
		cache, err := kcp.KubeconfigFor(v.Namespace, v.RootCacheKubeconfigName(), v.labels("cache-kubeconfig"),
			rootshard.Server(v.Target.RootShard).BaseURL(), serverCAFile, ClientCommonName(v.Name), clientDir+"/tls.crt", clientDir+"/tls.key")
		if err != nil {
			return nil, fmt.Errorf("virtual workspace %s: %w", v.Name, err)
		}
		out = append(out, cache)
	}
	return out, nil
}
