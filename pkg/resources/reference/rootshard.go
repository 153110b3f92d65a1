package reference

import (
	"fmt"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// RootShardReferences are the reference Secrets of a RootShard, in a stable order.
var RootShardReferences = []Reference{ShardJoin, FrontProxyJoin, KubeconfigIssuer}

// RootShardCAs are what a RootShard's reference Secrets are made of, as the controller read
// them from the Secrets cert-manager wrote.
type RootShardCAs struct {
	// RootCA is the tls.crt of the root CA's Secret (kcp.RootCASecret).
	RootCA []byte
	// KeyPairs are the intermediate CAs' Secrets, by role: the slot each Issuer signs from.
	KeyPairs map[pki.CA]KeyPair
	// Trust are the bundles of the intermediate CAs' live slots, by role (both while one
	// rotates, docs/rotation.md); a CA without one is trusted alone, the first certificate of
	// its key pair.
	Trust map[pki.CA][]byte
	// Bundles are what the merged CA bundles are made of.
	Bundles rootshard.CABundles
}

// Missing names the first CA that is not issued yet, or is empty when every one is.
func (c RootShardCAs) Missing(rs *operatorv1alpha1.RootShard) string {
	if len(c.RootCA) == 0 {
		return pki.RootCAName(rs.Name)
	}
	for _, ca := range pki.IntermediateCAs {
		if !c.KeyPairs[ca].Issued() {
			return pki.CAName(rs.Name, ca)
		}
	}
	return ""
}

// ForRootShard builds the RootShard's reference Secrets (RootShardReferences), once every CA
// they are made of is issued.
func ForRootShard(rs *operatorv1alpha1.RootShard, cas RootShardCAs) ([]*corev1ac.SecretApplyConfiguration, error) {
	if missing := cas.Missing(rs); missing != "" {
		return nil, fmt.Errorf("the reference Secrets of RootShard %s/%s: the CA %s is not issued yet", rs.Namespace, rs.Name, missing)
	}
	shard := rootshard.Server(rs)
	all := map[string][]byte{
		RootShardURLKey:     []byte(shard.BaseURL()),
		ExternalURLKey:      []byte(shard.ExternalURL()),
		ExternalAdminURLKey: []byte(shard.ExternalAdminURL()),
		RootCAKey:           cas.RootCA,
		ClientCABundleKey:   cas.Bundles.Client(),
		ServerCABundleKey:   cas.Bundles.Server(),
	}
	for ca, kp := range cas.KeyPairs {
		all[CertKey(ca)], all[KeyKey(ca)] = kp.Cert, kp.Key
		trust := cas.Trust[ca]
		if len(trust) == 0 {
			first, err := pki.FirstCertificate(kp.Cert)
			if err != nil {
				return nil, fmt.Errorf("the reference Secrets of RootShard %s/%s: the CA %s: %w", rs.Namespace, rs.Name, pki.CAName(rs.Name, ca), err)
			}
			trust = first
		}
		all[TrustKey(ca)] = trust
	}
	var out []*corev1ac.SecretApplyConfiguration
	for _, r := range RootShardReferences {
		out = append(out, r.secret(rootshard.Kind, rs.Namespace, rs.Name, only(all, append(r.Keys(), r.TrustKeys()...))))
	}
	return out, nil
}

// only is the entries of data under keys: a reference Secret holds its listed keys alone.
func only(data map[string][]byte, keys []string) map[string][]byte {
	out := make(map[string][]byte, len(keys))
	for _, k := range keys {
		out[k] = data[k]
	}
	return out
}
