package app

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// provideClientCA makes the client CA provider that the delegated authentication would
// make for itself, from --client-ca-file or else from kube-system's
// extension-apiserver-authentication ConfigMap, and hands it over, so that the server's
// certificate verifier (apiserver.WithCertificateVerifier) and the delegated authenticator
// verify client certificates by one provider, and so by the same CAs at every moment.
// Without a client to read the ConfigMap it leaves the choice, and its warning, to the
// delegated authentication.
func provideClientCA(authn *genericoptions.DelegatingAuthenticationOptions) error {
	if authn == nil || authn.ClientCert.CAContentProvider != nil {
		return nil
	}
	if authn.ClientCert.ClientCA != "" {
		p, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", authn.ClientCert.ClientCA)
		if err != nil {
			return fmt.Errorf("unable to load client CA provider: %w", err)
		}
		authn.ClientCert.CAContentProvider = p
		return nil
	}
	if authn.SkipInClusterLookup {
		return nil
	}
	client, err := authenticationClient(authn)
	if err != nil || client == nil {
		return err
	}
	p, err := dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", metav1.NamespaceSystem, "extension-apiserver-authentication", "client-ca-file", client)
	if err != nil {
		return fmt.Errorf("unable to load configmap based client CA file: %w", err)
	}
	authn.ClientCert.CAContentProvider = p
	return nil
}

// authenticationClient is the client of --authentication-kubeconfig, or of the cluster the
// server runs in, as the delegated authentication makes it; nil when neither is there and
// the kubeconfig is optional.
func authenticationClient(authn *genericoptions.DelegatingAuthenticationOptions) (kubernetes.Interface, error) {
	var (
		config *rest.Config
		err    error
	)
	if authn.RemoteKubeConfigFile != "" {
		config, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: authn.RemoteKubeConfigFile}, &clientcmd.ConfigOverrides{}).ClientConfig()
	} else {
		config, err = rest.InClusterConfig()
		if err != nil && authn.RemoteKubeConfigFileOptional {
			return nil, nil
		}
	}
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get delegated authentication kubeconfig: %w", err)
	}
	config.QPS, config.Burst = 200, 400
	if authn.CustomRoundTripperFn != nil {
		config.Wrap(authn.CustomRoundTripperFn)
	}
	return kubernetes.NewForConfig(config)
}
