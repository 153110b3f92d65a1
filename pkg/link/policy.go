package link

import (
	"slices"
	"strings"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// NamePlaceholder stands, in an Issued common name, for the consumer's name: a DNS-1123
// subdomain, as every object name is.
const NamePlaceholder = "{name}"

// Issued is a certificate the builders issue to a consumer of a kind, from a CA role: what a
// CSR of that consumer must match to be signed over the link.
type Issued struct {
	// Role is the certificate's role among the consumer's (its certificateTemplates key).
	Role string
	// CA is the role of the CA that signs it.
	CA pki.CA
	// CommonName is the exact common name; NamePlaceholder stands for the consumer's name.
	CommonName string
	// Organization are the exact organizations, in any order; none when empty.
	Organization []string
	// Usage is what it is for: the key usages a CSR may ask, and the CertificateRequest's.
	Usage pki.Usage
	// Serving lets its DNS SANs be any within the declaration's dnsNames.
	Serving bool
	// DNSNames are the DNS SANs the builders always put that need no declaration: localhost,
	// which only a process of the same host dials.
	DNSNames []string
	// IPAddresses are the only IP SANs it may have.
	IPAddresses []string
	// User makes the common name a user's and the organizations its groups (a Kubeconfig's):
	// any, but neither privileged (UserAllowed).
	User bool
}

// ForConsumer reports whether cn, a common name Match let through for i, is i's for the
// consumer of that name: NamePlaceholder stands for that name alone, so that a consumer is
// not signed another's certificate. A user's common name, or one without the placeholder,
// names no consumer.
func (i Issued) ForConsumer(cn, name string) bool {
	if i.User || !strings.Contains(i.CommonName, NamePlaceholder) {
		return true
	}
	return name != "" && cn == strings.Replace(i.CommonName, NamePlaceholder, name, 1)
}

// etcdCN is the common name of a Shard's managed etcd certificate of suffix: the etcd
// cluster's base is "<shard>-shard" (shard.Etcd).
func etcdCN(suffix string) string { return NamePlaceholder + "-shard" + suffix }

// policy is, per consumer kind, every certificate the builders issue to it from the
// RootShard's CAs when it joins a RootShard (pkg/resources/shard, frontproxy, kubeconfig,
// cacheserver): TestPolicyCoversWhatTheBuildersIssue fails when a builder issues one it
// does not list, or when it lists one no builder issues.
var policy = map[ConsumerKind][]Issued{
	Shard: {
		{Role: "server", CA: pki.ServerCA, CommonName: NamePlaceholder, Usage: pki.ServerAuth, Serving: true, DNSNames: []string{"localhost"}},
		{Role: "client", CA: pki.ClientCA, CommonName: "shard-" + NamePlaceholder, Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
		{Role: kcp.LogicalClusterAdmin, CA: pki.ClientCA, CommonName: kcp.LogicalClusterAdmin,
			Organization: []string{"system:kcp:logical-cluster-admin"}, Usage: pki.ClientAuth},
		{Role: kcp.ExternalLogicalClusterAdmin, CA: pki.ClientCA, CommonName: kcp.ExternalLogicalClusterAdmin,
			Organization: []string{"system:kcp:external-logical-cluster-admin"}, Usage: pki.ClientAuth},
		{Role: pki.ServiceAccountRole, CA: pki.ServiceAccountCA, CommonName: NamePlaceholder + "-service-account", Usage: pki.Signing},
		{Role: kcp.MountsProxy, CA: pki.RequestHeaderClientCA, CommonName: kcp.MountsProxyCommonName, Usage: pki.ClientAuth},
		{Role: etcd.ServerRole, CA: pki.EtcdClientCA, CommonName: etcdCN("-etcd"), Usage: pki.PeerAuth, Serving: true,
			DNSNames: []string{"localhost"}, IPAddresses: []string{"127.0.0.1"}},
		{Role: etcd.PeerRole, CA: pki.EtcdPeerCA, CommonName: etcdCN("-etcd-peer"), Usage: pki.PeerAuth, Serving: true, DNSNames: []string{"localhost"}},
		{Role: etcd.ClientRole, CA: pki.EtcdClientCA, CommonName: etcdCN("-kcp"), Usage: pki.ClientAuth},
	},
	FrontProxy: {
		{Role: "server", CA: pki.ServerCA, CommonName: NamePlaceholder, Usage: pki.ServerAuth, Serving: true},
		{Role: "kubeconfig", CA: pki.ClientCA, CommonName: "kcp-front-proxy", Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
		{Role: "requestheader", CA: pki.RequestHeaderClientCA, CommonName: "kcp-front-proxy", Usage: pki.ClientAuth},
	},
	Kubeconfig: {
		{Role: "kubeconfig", CA: pki.FrontProxyClientCA, User: true, Usage: pki.ClientAuth},
	},
	CacheClient: {
		{Role: "client", CA: CacheServerCA, CommonName: "cache-client", Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
	},
}

// IssuedTo are the certificates a consumer of kind may have signed by the CA role.
func IssuedTo(kind ConsumerKind, role pki.CA) []Issued {
	var out []Issued
	for _, i := range policy[kind] {
		if i.CA == role {
			out = append(out, i)
		}
	}
	return out
}

// signs reports whether a consumer of kind is issued anything by the CA role.
func signs(kind ConsumerKind, role pki.CA) bool {
	return slices.ContainsFunc(policy[kind], func(i Issued) bool { return i.CA == role })
}
