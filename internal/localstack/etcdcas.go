package localstack

import (
	"crypto/x509"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kcppki "github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// EtcdCAs are a RootShard's etcd client and peer CAs made for a test, which issue the
// Secrets cert-manager would write for the builders' certificates of its managed etcds, so
// that the harness runs what the builders make (members, backup agent, restore) without the
// server.
type EtcdCAs struct {
	RootShard    string
	Client, Peer *CA
	dir          string
}

// NewEtcdCAs makes the etcd CAs of rootShard, writing them under dir.
func NewEtcdCAs(dir, rootShard string) (*EtcdCAs, error) {
	client, err := LoadOrCreateCA(dir, "etcd-client-ca")
	if err != nil {
		return nil, err
	}
	peer, err := LoadOrCreateCA(dir, "etcd-peer-ca")
	if err != nil {
		return nil, err
	}
	return &EtcdCAs{RootShard: rootShard, Client: client, Peer: peer, dir: dir}, nil
}

// Secrets are the Secrets of c's certificates (c.Leaves(): tls.crt, tls.key and ca.crt,
// issued by the CA its Issuer names, with its names and usages) and the RootShard's trust
// Secrets (tls.crt, the CA alone), by name.
func (cas *EtcdCAs) Secrets(c *etcd.Cluster) (map[string]*corev1.Secret, error) {
	if c.RootShard != cas.RootShard {
		return nil, fmt.Errorf("the etcd of %s is of the RootShard %s, not %s", c.Base, c.RootShard, cas.RootShard)
	}
	out := map[string]*corev1.Secret{}
	secret := func(name string, data map[string][]byte) {
		// A trust Secret holds a certificate alone, which type kubernetes.io/tls refuses.
		typ := corev1.SecretTypeOpaque
		if _, ok := data["tls.key"]; ok {
			typ = corev1.SecretTypeTLS
		}
		out[name] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace}, Type: typ, Data: data}
	}
	usages := map[kcppki.Usage][]x509.ExtKeyUsage{
		kcppki.ServerAuth: {x509.ExtKeyUsageServerAuth}, kcppki.ClientAuth: {x509.ExtKeyUsageClientAuth},
		kcppki.PeerAuth: {x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, leaf := range c.Leaves() {
		var ca *CA
		switch leaf.Issuer {
		case kcppki.CAName(cas.RootShard, kcppki.EtcdClientCA):
			ca = cas.Client
		case kcppki.CAName(cas.RootShard, kcppki.EtcdPeerCA):
			ca = cas.Peer
		default:
			return nil, fmt.Errorf("the certificate %s is of the issuer %s, which is no etcd CA of %s", leaf.Name, leaf.Issuer, cas.RootShard)
		}
		var ips []net.IP
		for _, ip := range leaf.IPAddresses {
			ips = append(ips, net.ParseIP(ip))
		}
		kp, err := ca.Issue(cas.dir, c.Namespace+"-"+leaf.Name, CertSpec{CommonName: leaf.CommonName, Organizations: leaf.Organization,
			DNSNames: leaf.DNSNames, IPs: ips, Usages: usages[leaf.Usage]})
		if err != nil {
			return nil, err
		}
		secret(leaf.Name, map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM, "ca.crt": ca.CertPEM})
	}
	secret(etcd.ClientTrustSecret(cas.RootShard), map[string][]byte{"tls.crt": cas.Client.CertPEM})
	secret(etcd.PeerTrustSecret(cas.RootShard), map[string][]byte{"tls.crt": cas.Peer.CertPEM})
	return out, nil
}
