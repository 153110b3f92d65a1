package rootshard

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// ShardBaseContext is the kubeconfig context kcp expects in its admin kubeconfigs.
const ShardBaseContext = "shard-base"

// Service builds the root shard's Service.
func Service(rs *operatorv1alpha1.RootShard) *corev1ac.ServiceApplyConfiguration {
	return workload.Service(rs.Namespace, ServiceName(rs), pki.Labels(Kind, rs.Name, "kcp"), SelectorLabels(rs), 6443, rs.Spec.ServiceTemplate)
}

// AdminKubeconfig builds the Secret of an admin identity's kubeconfig. The kubeconfig points
// at the certificate files by their mount paths, so a renewed certificate needs no new
// kubeconfig: the logical-cluster-admin toward the root shard itself, the external one
// toward the installation's external URL.
func AdminKubeconfig(rs *operatorv1alpha1.RootShard, identity string) (*corev1ac.SecretApplyConfiguration, error) {
	server := BaseURL(rs)
	if identity == ExternalLogicalClusterAdmin {
		server = ExternalURL(rs)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ShardBaseContext] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caDir("server") + "/tls.crt"}
	cfg.AuthInfos[identity] = &clientcmdapi.AuthInfo{
		ClientCertificate: leafDir(identity) + "/tls.crt",
		ClientKey:         leafDir(identity) + "/tls.key",
	}
	cfg.Contexts[ShardBaseContext] = &clientcmdapi.Context{Cluster: ShardBaseContext, AuthInfo: identity}
	cfg.CurrentContext = ShardBaseContext
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the %s kubeconfig: %w", identity, err)
	}
	return corev1ac.Secret(KubeconfigName(rs, identity), rs.Namespace).
		WithLabels(pki.Labels(Kind, rs.Name, identity+"-kubeconfig")).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{kubeconfigKey: data}), nil
}

// CABundles are the CA certificates (PEM) the merged bundles are made of, read from their
// Secrets by the controller.
type CABundles struct {
	ServerCA, ClientCA, FrontProxyClientCA []byte
	// ExtraServerCAs and ExtraClientCAs come from caBundleSecretRef and clientCABundleRef.
	ExtraServerCAs, ExtraClientCAs []byte
}

// MergedClientCA builds the Secret every shard and front proxy trusts client certificates
// by: the components' client CA, the users' front-proxy-client CA, and the extra CAs.
func MergedClientCA(rs *operatorv1alpha1.RootShard, b CABundles) *corev1ac.SecretApplyConfiguration {
	return bundleSecret(rs, MergedClientCAName(rs), "merged-client-ca", b.ClientCA, b.FrontProxyClientCA, b.ExtraClientCAs)
}

// MergedCABundle builds the Secret that verifies the root shard's server: the server CA and
// the extra CAs.
func MergedCABundle(rs *operatorv1alpha1.RootShard, b CABundles) *corev1ac.SecretApplyConfiguration {
	return bundleSecret(rs, MergedCABundleName(rs), "merged-ca-bundle", b.ServerCA, b.ExtraServerCAs)
}

func bundleSecret(rs *operatorv1alpha1.RootShard, name, component string, pems ...[]byte) *corev1ac.SecretApplyConfiguration {
	var bundle bytes.Buffer
	for _, p := range pems {
		if len(p) == 0 {
			continue
		}
		bundle.Write(bytes.TrimSpace(p))
		bundle.WriteByte('\n')
	}
	return corev1ac.Secret(name, rs.Namespace).
		WithLabels(pki.Labels(Kind, rs.Name, component)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{"tls.crt": bundle.Bytes()})
}
