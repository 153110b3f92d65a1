package reference

import (
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
)

// ForCacheServer builds the CacheServer's reference Secret (CacheClient): its URL, its CA
// certificate alone (what <cs>-kubeconfig trusts), and the client certificate and key the
// shards use toward it (<cs>-client-certificate).
func ForCacheServer(cs cacheserver.CacheServer, caCert []byte, client KeyPair) *corev1ac.SecretApplyConfiguration {
	return CacheClient.secret(cacheserver.Kind, cs.Namespace, cs.Name, map[string][]byte{
		CacheURLKey:   []byte(cs.URL()),
		CACertKey:     caCert,
		ClientCertKey: client.Cert,
		ClientKeyKey:  client.Key,
	})
}
