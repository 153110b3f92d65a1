package kcp

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// ShardBaseContext is the kubeconfig context kcp expects in its kubeconfigs.
const ShardBaseContext = "shard-base"

// Service builds the server's Service.
func (s Server) Service() *corev1ac.ServiceApplyConfiguration {
	return workload.Service(s.Namespace, s.ServiceName, s.WorkloadLabels(), s.SelectorLabels(), SecurePort, s.Spec.ServiceTemplate)
}

// AdminKubeconfig builds the Secret of an admin identity's kubeconfig: the logical-cluster-
// admin toward the server itself, the external one toward the installation's external URL.
// The external one uses the private address and trusts the server CA bundle when the setup
// has them (Server.ExternalAdminURL, Server.ServerCABundle).
func (s Server) AdminKubeconfig(identity string) (*corev1ac.SecretApplyConfiguration, error) {
	name := s.KubeconfigName(identity)
	if identity != ExternalLogicalClusterAdmin {
		return s.KubeconfigSecret(name, identity, s.BaseURL(), identity)
	}
	caFile := caDir("server") + "/tls.crt"
	if s.ServerCABundle != "" {
		caFile = caDir("bundle") + "/tls.crt"
	}
	return KubeconfigFor(s.Namespace, name, pki.Labels(s.Kind, s.Name, identity+"-kubeconfig"), s.ExternalAdminURL(),
		caFile, identity, leafDir(identity)+"/tls.crt", leafDir(identity)+"/tls.key")
}

// KubeconfigSecret builds a Secret whose kubeconfig points at server, trusting the root
// shard's server CA, as the client certificate mounted for role.
func (s Server) KubeconfigSecret(name, component, server, role string) (*corev1ac.SecretApplyConfiguration, error) {
	return KubeconfigFor(s.Namespace, name, pki.Labels(s.Kind, s.Name, component+"-kubeconfig"), server,
		caDir("server")+"/tls.crt", role, leafDir(role)+"/tls.crt", leafDir(role)+"/tls.key")
}

// KubeconfigFor builds a Secret with a kubeconfig (key kubeconfig, context shard-base) for
// server, trusting the CA file caFile, as user with the client certificate files certFile and
// keyFile.
// It points at the files by their mount paths, so a renewed certificate needs no new
// kubeconfig.
func KubeconfigFor(namespace, name string, labels map[string]string, server, caFile, user, certFile, keyFile string) (*corev1ac.SecretApplyConfiguration, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ShardBaseContext] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}
	cfg.Contexts[ShardBaseContext] = &clientcmdapi.Context{Cluster: ShardBaseContext, AuthInfo: user}
	cfg.CurrentContext = ShardBaseContext
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig %s: %w", name, err)
	}
	return corev1ac.Secret(name, namespace).WithLabels(labels).WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{KubeconfigKey: data}), nil
}
