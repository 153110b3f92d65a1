package link

import (
	"fmt"
	"slices"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// remote is the namespace of the consumers in the remote cluster.
const remote = "remote"

// joined is the RootShard a consumer of kind named owner realizes against, as it does from a
// copy of a reference Secret: a link replaces only the local CA Issuers.
func joined(kind, owner string) *operatorv1alpha1.RootShard {
	rs := reference.JoinedRootShard(kind, remote, owner)
	rs.Spec.ShardBaseURL = "https://root.kcp.example.com:6443"
	rs.Spec.External = operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}
	return rs
}

// builtCertificate is a certificate a builder makes for a consumer.
type builtCertificate struct {
	kind ConsumerKind
	cert *cmapply.CertificateApplyConfiguration
	// caOf maps the name of its Issuer to the CA role.
	caOf map[string]pki.CA
}

// rootShardCAs maps the Issuers of rs's CAs to their roles.
func rootShardCAs(rs *operatorv1alpha1.RootShard) map[string]pki.CA {
	out := map[string]pki.CA{}
	for _, ca := range pki.IntermediateCAs {
		out[pki.CAName(rs.Name, ca)] = ca
	}
	return out
}

// consumersCertificates are the certificates the builders issue to a consumer of each kind
// that joins a RootShard (a Shard with a managed etcd, a FrontProxy, a Kubeconfig), and the
// cache-client of a CacheServer.
func consumersCertificates(t *testing.T) []builtCertificate {
	var out []builtCertificate
	add := func(kind ConsumerKind, caOf map[string]pki.CA, certs ...*cmapply.CertificateApplyConfiguration) {
		for _, c := range certs {
			out = append(out, builtCertificate{kind: kind, cert: c, caOf: caOf})
		}
	}

	rs := joined("shard", "eu")
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: remote}, Spec: operatorv1alpha1.ShardSpec{
		CommonShardSpec: operatorv1alpha1.CommonShardSpec{ShardBaseURL: "https://eu.shards.kcp.example.com:6443",
			Etcd: operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}},
		RootShard: operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "join"}}}}
	add(Shard, rootShardCAs(rs), shard.Certificates(s, rs)...)

	rs = joined("frontproxy", "edge")
	fp := frontproxy.FrontProxy{RootShard: rs, FrontProxy: &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: remote}, Spec: operatorv1alpha1.FrontProxySpec{
			External: &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.kcp.example.com", Port: 8443}}}}
	add(FrontProxy, rootShardCAs(rs), fp.Certificates()...)

	rs = joined("kubeconfig", "ci")
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: remote}, Spec: operatorv1alpha1.KubeconfigSpec{
		Target:   operatorv1alpha1.KubeconfigTarget{RootShardSecretRef: &corev1.LocalObjectReference{Name: "issuer"}},
		Username: "ci-bot", Groups: []string{"team-a:developers"}, Validity: metav1.Duration{Duration: 24 * time.Hour},
		SecretRef: corev1.LocalObjectReference{Name: "ci-kubeconfig"}}}
	target, err := kubeconfig.TargetOf(kc, rs, nil, nil)
	require.NoError(t, err)
	add(Kubeconfig, rootShardCAs(rs), kubeconfig.Kubeconfig{Kubeconfig: kc, Target: target}.Certificate())

	cs := cacheserver.CacheServer{CacheServer: &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "a"}}}
	for _, c := range cs.Certificates() {
		// The cache server's serving certificate is its own; its clients get the cache-client.
		if c.Labels[pki.LabelComponent] == cacheserver.ClientRole {
			add(CacheClient, map[string]pki.CA{cs.CAName(): CacheServerCA}, c)
		}
	}
	return out
}

// specOf is the cert-manager spec of an apply configuration.
func specOf(c *cmapply.CertificateApplyConfiguration) cmv1.CertificateSpec {
	s := cmv1.CertificateSpec{DNSNames: c.Spec.DNSNames, IPAddresses: c.Spec.IPAddresses, URIs: c.Spec.URIs,
		EmailAddresses: c.Spec.EmailAddresses, Usages: c.Spec.Usages}
	if c.Spec.CommonName != nil {
		s.CommonName = *c.Spec.CommonName
	}
	if c.Spec.Subject != nil {
		s.Subject = &cmv1.X509Subject{Organizations: c.Spec.Subject.Organizations, OrganizationalUnits: c.Spec.Subject.OrganizationalUnits}
	}
	return s
}

// TestPolicyCoversWhatTheBuildersIssue builds every certificate of a consumer of each kind
// with the builders, asks for each by a CSR as cert-manager makes it, and checks that the
// policy signs it, from its Issuer's CA, as the certificate of its role with its usages;
// and that every certificate of the policy is one a builder issues. A builder that starts
// issuing another certificate, or another subject, SAN or usage, fails it.
func TestPolicyCoversWhatTheBuildersIssue(t *testing.T) {
	matched := map[string]bool{}
	for _, b := range consumersCertificates(t) {
		role := b.cert.Labels[pki.LabelComponent]
		t.Run(fmt.Sprintf("%s %s", b.kind, role), func(t *testing.T) {
			ca, ok := b.caOf[*b.cert.Spec.IssuerRef.Name]
			require.True(t, ok, "%s is signed by %s, a CA of the RootShard", *b.cert.Name, *b.cert.Spec.IssuerRef.Name)
			spec := specOf(b.cert)
			// The Link declares the remote's names; localhost needs no declaration.
			d := Declaration{Consumers: []ConsumerKind{b.kind}, CacheServer: "cache",
				DNSNames: slices.DeleteFunc(slices.Clone(spec.DNSNames), func(n string) bool { return n == "localhost" })}
			issued, err := Match(csrOf(t, spec, nil), b.kind, ca, d)
			require.NoError(t, err, "the policy signs the %s certificate of a %s", role, b.kind)
			assert.Equal(t, role, issued.Role)
			assert.Equal(t, issued.Usage.KeyUsages(), spec.Usages, "the CertificateRequest's usages are the builder's")
			if len(d.DNSNames) > 0 {
				_, err := Match(csrOf(t, spec, nil), b.kind, ca, Declaration{Consumers: d.Consumers})
				assert.Error(t, err, "its DNS names must be declared")
			}
			matched[string(b.kind)+"/"+issued.Role] = true
		})
	}
	for kind, issued := range policy {
		for _, i := range issued {
			assert.True(t, matched[string(kind)+"/"+i.Role], "the policy's %s certificate of a %s is one no builder issues", i.Role, kind)
		}
	}
}

// TestLinkedKubeconfigsHaveNoBindingsGroup: the group a Kubeconfig's spec.authorization adds
// names Kubeconfigs of the home's, so a linked one may not ask for it.
func TestLinkedKubeconfigsHaveNoBindingsGroup(t *testing.T) {
	rs := joined("kubeconfig", "ci")
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: remote}, Spec: operatorv1alpha1.KubeconfigSpec{
		Target:   operatorv1alpha1.KubeconfigTarget{RootShardSecretRef: &corev1.LocalObjectReference{Name: "issuer"}},
		Username: "ci-bot", Validity: metav1.Duration{Duration: 24 * time.Hour}, SecretRef: corev1.LocalObjectReference{Name: "ci-kubeconfig"},
		Authorization: &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{
			ClusterRoles: []string{"view"}}}}}
	target, err := kubeconfig.TargetOf(kc, rs, nil, nil)
	require.NoError(t, err)
	spec := specOf(kubeconfig.Kubeconfig{Kubeconfig: kc, Target: target}.Certificate())
	require.Contains(t, spec.Subject.Organizations, kubeconfig.Group(kc))
	assert.ErrorContains(t, CheckCSR(csrOf(t, spec, nil), Kubeconfig, pki.FrontProxyClientCA, Declaration{Consumers: []ConsumerKind{Kubeconfig}}),
		"is not one a Kubeconfig is issued")
}

// TestPolicySignsALinkedShardsCacheClient: the cache client a linked Shard has cert-manager
// issue (spec.cache.link) is one the policy signs for the consumer kind CacheClient, by the
// CacheServer's CA its LinkIssuer name stands for, with its usages.
func TestPolicySignsALinkedShardsCacheClient(t *testing.T) {
	c := linkpki.CacheClientCertificate("shard", remote, "eu", reference.JoinedName("shard", "eu"))
	spec := specOf(c)
	d := Declaration{Consumers: []ConsumerKind{Shard, CacheClient}, CacheServer: "cache"}
	issued, err := Match(csrOf(t, spec, nil), CacheClient, CacheServerCA, d)
	require.NoError(t, err)
	assert.Equal(t, cacheserver.ClientRole, issued.Role)
	assert.Equal(t, issued.Usage.KeyUsages(), spec.Usages)
	assert.True(t, issued.ForConsumer(spec.CommonName, "eu"))
	_, err = Match(csrOf(t, spec, nil), CacheClient, pki.ClientCA, d)
	assert.Error(t, err, "not by a CA of the RootShard")
}
