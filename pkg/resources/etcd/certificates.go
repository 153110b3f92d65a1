package etcd

import (
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Leaves are the cluster's certificates: the members' serving certificate and kcp's client
// certificate, both of the RootShard's etcd client CA (etcd trusts clients of the CA it
// presents; the serving certificate is a client one too, since etcd's HTTP gateway dials
// the member's own gRPC port with it), and the members' peer certificate, of the etcd peer CA, for serving and dialing
// one another. The owner's certificate templates customize them by their roles.
func (c *Cluster) Leaves() []pki.Leaf {
	leaves := []pki.Leaf{
		{Name: c.ServerSecret(), Role: ServerRole, Issuer: pki.CAName(c.RootShard, pki.EtcdClientCA), CommonName: c.Name(),
			DNSNames: c.serverDNSNames(), IPAddresses: []string{"127.0.0.1"}, Usage: pki.PeerAuth},
		{Name: c.PeerSecret(), Role: PeerRole, Issuer: pki.CAName(c.RootShard, pki.EtcdPeerCA), CommonName: c.Name() + "-peer",
			DNSNames: append(c.memberDNSNames(), "localhost"), Usage: pki.PeerAuth},
		{Name: c.ClientSecret(), Role: ClientRole, Issuer: pki.CAName(c.RootShard, pki.EtcdClientCA), CommonName: c.Base + "-kcp",
			Usage: pki.ClientAuth},
	}
	if c.Spec.Backup != nil {
		leaves = append(leaves, c.AgentLeaf())
	}
	return leaves
}

// serverDNSNames are the names clients reach a member by: each member's, the client
// Service's in every form, and localhost for a member's own tooling.
func (c *Cluster) serverDNSNames() []string {
	return append(append(c.memberDNSNames(), serviceForms(c.Name(), c.Namespace, c.ClusterDomain)...), "localhost")
}

// memberDNSNames are every member's DNS name in every form, short to fully qualified.
func (c *Cluster) memberDNSNames() []string {
	var names []string
	for i := range c.Replicas() {
		names = append(names, serviceForms(c.MemberName(i)+"."+c.PeerServiceName(), c.Namespace, c.ClusterDomain)...)
	}
	return names
}

// serviceForms are the forms of an in-cluster name: short, with the namespace, with .svc and
// fully qualified.
func serviceForms(name, namespace, domain string) []string {
	return []string{name, name + "." + namespace, name + "." + namespace + ".svc", name + "." + namespace + ".svc." + domain}
}
