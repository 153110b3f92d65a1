package apiserver

import (
	"errors"
	"net/http"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
)

// AuthenticationReady is a readyz check that fails until the CAs the server authenticates
// clients by are loaded. With delegated authentication they come from kube-system's
// extension-apiserver-authentication ConfigMap, which is read after the server starts
// serving; until then every client, kube-apiserver's proxy included, would be
// system:anonymous and be refused. clientCA is the serving client CA (the union of the
// client and request-header CAs), requestHeaderCA the request-header CA; nil ones are not
// configured and not waited for.
func AuthenticationReady(clientCA, requestHeaderCA dynamiccertificates.CAContentProvider) healthz.HealthChecker {
	return healthz.NamedCheck("delegated-authentication-cas", func(*http.Request) error {
		if clientCA != nil && len(clientCA.CurrentCABundleContent()) == 0 {
			return errors.New("the client CA is not loaded yet")
		}
		if requestHeaderCA != nil && len(requestHeaderCA.CurrentCABundleContent()) == 0 {
			return errors.New("the request-header CA is not loaded yet")
		}
		return nil
	})
}
