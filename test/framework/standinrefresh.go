package framework

import (
	"crypto/tls"
	"fmt"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// Refresh rewrites the files the stand-in serves and trusts, as the kubelet refreshes a
// pod's mounted Secrets: kube-apiserver reloads its serving certificate and its client CA
// file when they change. A serving certificate and key that do not match are refused, so
// that the stand-in keeps serving the last pair that did.
func (in *StandIn) Refresh(o StandInOptions) error {
	if _, err := tls.X509KeyPair(o.ServingCert, o.ServingKey); err != nil {
		return fmt.Errorf("the serving certificate and key do not match: %w", err)
	}
	return localstack.WriteFiles(map[string][]byte{in.dir + "/tls.crt": o.ServingCert, in.dir + "/tls.key": o.ServingKey, in.dir + "/client-ca.crt": o.ClientCA})
}
