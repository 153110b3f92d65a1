package frontproxy

import (
	"fmt"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// RootShardProxy is the internal front proxy every RootShard has, as kcp-operator runs it
// (its internal/resources/frontproxy in root-shard-proxy mode), shaped by the RootShard's
// spec.proxy. The server reaches kcp's workspaces through it, whichever shard hosts them:
// a shard answers a workspace another shard hosts with "Not found on this shard", while the
// proxy resolves the workspace to its shard. No user traffic should go through it: it
// trusts only the components' client CA, and users reach kcp through a FrontProxy.
//
// Its objects are owned by the RootShard (its owner label), in the component
// "rootshard-proxy", with kcp-operator's names: <rs>-proxy (Deployment and Service),
// <rs>-proxy-server, -kubeconfig and -requestheader (certificates, template keys server,
// kubeconfig and requestheader of spec.proxy.certificateTemplates), <rs>-proxy-config (path
// mappings), <rs>-proxy-dynamic-kubeconfig and <rs>-proxy-merged-client-ca.
type RootShardProxy struct {
	RootShard *operatorv1alpha1.RootShard
}

// RootShardProxyComponent is the component label of the root shard proxy's objects, and
// kcp-operator's.
const RootShardProxyComponent = pki.RootShardProxyComponent

// RootShardProxyCommonName is the user the root shard proxy proxies requests as, with its
// request-header certificate, and presents toward the shards: kcp-operator's, which the
// shards' --requestheader-allowed-names let through.
const RootShardProxyCommonName = kcp.RootShardProxyCommonName

// ServiceName is the root shard proxy's Service and Deployment.
func (p RootShardProxy) ServiceName() string { return pki.RootShardProxyServiceName(p.RootShard.Name) }

// DeploymentName is the name of the root shard proxy's Deployment, the same as its Service's.
func (p RootShardProxy) DeploymentName() string { return p.ServiceName() }

// ConfigMapName is the ConfigMap of the root shard proxy's path mappings.
func (p RootShardProxy) ConfigMapName() string { return p.RootShard.Name + "-proxy-config" }

// DynamicKubeconfigName is the Secret of the root shard proxy's kubeconfig toward the shards.
func (p RootShardProxy) DynamicKubeconfigName() string {
	return p.RootShard.Name + "-proxy-dynamic-kubeconfig"
}

// MergedClientCAName is the Secret of the client CAs the root shard proxy trusts: the
// components' client CA and the RootShard's clientCABundleRef, as kcp-operator's.
func (p RootShardProxy) MergedClientCAName() string {
	return p.RootShard.Name + "-proxy-merged-client-ca"
}

// ServerSecretName is the Secret of the root shard proxy's serving certificate.
func (p RootShardProxy) ServerSecretName() string {
	return pki.RootShardProxyServerSecretName(p.RootShard.Name)
}

func (p RootShardProxy) certName(role string) string { return p.RootShard.Name + "-proxy-" + role }

// spec is spec.proxy, or the zero spec when it is not set, with the root shard's image
// when it names none: the proxy runs the root shard's kcp release.
func (p RootShardProxy) spec() *operatorv1alpha1.ComponentSpec {
	spec := &operatorv1alpha1.ComponentSpec{}
	if p.RootShard.Spec.Proxy != nil {
		spec = p.RootShard.Spec.Proxy.ComponentSpec.DeepCopy()
	}
	if spec.Image == nil {
		spec.Image = p.RootShard.Spec.Image
	}
	return spec
}

func (p RootShardProxy) labels(component string) map[string]string {
	return pki.Labels(rootshard.Kind, p.RootShard.Name, component)
}

// SelectorLabels select the root shard proxy's pods, and not the root shard's.
func (p RootShardProxy) SelectorLabels() map[string]string {
	return pki.RootShardProxySelector(p.RootShard.Name)
}

// ServerNames are the DNS names of the root shard proxy's Service, the serving certificate's
// SANs: it is reached inside the cluster only, so no external hostname is among them.
func (p RootShardProxy) ServerNames() []string {
	svc, ns := p.ServiceName(), p.RootShard.Namespace
	domain := p.RootShard.Spec.ClusterDomain
	if domain == "" {
		domain = operatorv1alpha1.DefaultClusterDomain
	}
	return []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc." + domain}
}

// Leaves are the root shard proxy's certificates: its serving certificate, its identity
// toward the shards (system:masters, as every front proxy's), and the request-header
// identity it proxies callers with.
func (p RootShardProxy) Leaves() []pki.Leaf {
	rs := p.RootShard.Name
	return []pki.Leaf{
		{Name: p.certName("server"), Role: "server", Issuer: pki.CAName(rs, pki.ServerCA), CommonName: p.ServiceName(),
			DNSNames: p.ServerNames(), Usage: pki.ServerAuth},
		{Name: p.certName("kubeconfig"), Role: "kubeconfig", Issuer: pki.CAName(rs, pki.ClientCA), CommonName: RootShardProxyCommonName,
			Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
		{Name: p.certName("requestheader"), Role: "requestheader", Issuer: pki.CAName(rs, pki.RequestHeaderClientCA),
			CommonName: RootShardProxyCommonName, Usage: pki.ClientAuth},
	}
}

// Certificates are the root shard proxy's certificates with spec.proxy.certificateTemplates
// merged in.
func (p RootShardProxy) Certificates() []*cmapply.CertificateApplyConfiguration {
	var out []*cmapply.CertificateApplyConfiguration
	for _, leaf := range p.Leaves() {
		var tmpl *operatorv1alpha1.CertificateTemplate
		if t, ok := p.spec().CertificateTemplates[leaf.Role]; ok {
			tmpl = &t
		}
		out = append(out, certificates.Certificate(certificates.Leaf(p.RootShard.Namespace, leaf,
			p.labels(RootShardProxyComponent+"-"+leaf.Role), tmpl)))
	}
	return out
}

// MergedClientCA builds the client CA bundle the root shard proxy verifies callers by: the
// components' client CA (which signs the server's own identity), then the RootShard's
// clientCABundleRef. The users' front-proxy-client CA is not in it.
func (p RootShardProxy) MergedClientCA(clientCA, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(p.RootShard.Namespace, p.MergedClientCAName(),
		p.labels(RootShardProxyComponent+"-merged-client-ca"), clientCA, extra)
}

// serverCA is the Secret of the CAs the root shard proxy verifies the shards by: the
// RootShard's merged CA bundle with caBundleSecretRef, else its server CA.
func (p RootShardProxy) serverCA() string {
	if p.RootShard.Spec.CABundleSecretRef != nil {
		return rootshard.MergedCABundleName(p.RootShard)
	}
	return pki.TrustSecretOf(p.RootShard, pki.ServerCA)
}

// DynamicKubeconfig builds the Secret of the root shard proxy's kubeconfig toward the root
// shard, where it finds the shards, and the shards themselves (kcp-front-proxy replaces the
// server with each shard's base URL).
func (p RootShardProxy) DynamicKubeconfig() (*corev1ac.SecretApplyConfiguration, error) {
	secret, err := kcp.KubeconfigFor(p.RootShard.Namespace, p.DynamicKubeconfigName(), p.labels(RootShardProxyComponent+"-dynamic-kubeconfig"),
		rootshard.Server(p.RootShard).BaseURL(), serverCADir+"/tls.crt", RootShardProxyCommonName, kubeconfigClient+"/tls.crt", kubeconfigClient+"/tls.key")
	if err != nil {
		return nil, fmt.Errorf("root shard proxy %s: %w", p.ServiceName(), err)
	}
	return secret, nil
}

// ConfigMap builds the path mappings, as kcp-operator's: /clusters/ and /services/ go to the
// root shard, as the request-header identity, verified by the server CA. kcp-front-proxy
// resolves /clusters/<workspace> to the shard that hosts the workspace, whatever the
// mapping's backend.
func (p RootShardProxy) ConfigMap() (*corev1ac.ConfigMapApplyConfiguration, error) {
	base := rootshard.Server(p.RootShard).BaseURL()
	var mappings []pathMapping
	for _, path := range []string{"/clusters/", "/services/"} {
		mappings = append(mappings, pathMapping{Path: path, Backend: base, BackendServerCA: serverCADir + "/tls.crt",
			ProxyClientCert: requestHeaderDir + "/tls.crt", ProxyClientKey: requestHeaderDir + "/tls.key"})
	}
	data, err := yaml.Marshal(mappings)
	if err != nil {
		return nil, err
	}
	return corev1ac.ConfigMap(p.ConfigMapName(), p.RootShard.Namespace).WithLabels(p.labels(RootShardProxyComponent + "-config")).
		WithData(map[string]string{MappingKey: string(data)}), nil
}

// Version is the kcp release of the root shard proxy's image.
func (p RootShardProxy) Version() kcpversion.Version { return workload.KcpVersion(p.spec().Image) }

// Service builds the root shard proxy's Service: port 6443, whatever the RootShard's
// external port (kcp-operator does not let it change), spec.proxy.serviceTemplate applied.
func (p RootShardProxy) Service() *corev1ac.ServiceApplyConfiguration {
	return workload.Service(p.RootShard.Namespace, p.ServiceName(), p.labels(RootShardProxyComponent), p.SelectorLabels(),
		kcp.SecurePort, p.spec().ServiceTemplate)
}

// features are the root shard proxy's command line and volumes: a FrontProxy's without
// authentication other than client certificates (kcp-front-proxy's default drop groups stay:
// system:masters is not passed on), at a FrontProxy's paths, then spec.proxy's logging and
// extraArgs.
func (p RootShardProxy) features() []workload.Feature {
	level := int32(0)
	if l := p.spec().Logging; l != nil {
		level = l.Level
	}
	return []workload.Feature{
		{Args: proxyArgs(p.Version().MountProxy(), RootShardProxyCommonName), Mounts: proxyMounts{requestHeaderCA: pki.TrustSecretOf(p.RootShard, pki.RequestHeaderClientCA),
			certName: p.certName, kubeconfig: p.DynamicKubeconfigName(), clientCA: p.MergedClientCAName(), serverCA: p.serverCA(),
			configMap: p.ConfigMapName(), mountProxy: p.Version().MountProxy()}.mounts()},
		{Args: append([]string{fmt.Sprintf("-v=%d", level)}, p.spec().ExtraArgs...)},
	}
}

// Args is the root shard proxy's kcp-front-proxy command line.
func (p RootShardProxy) Args() []string { return workload.Features(p.features()...).Args }

// Mounts are the Secrets and the ConfigMap the pods mount, all the controllers' and
// cert-manager's: its Deployment is created once they all exist, and a change to any of them
// rolls it.
func (p RootShardProxy) Mounts() []workload.Mount { return workload.Features(p.features()...).Mounts }

// Deployment builds the root shard proxy's Deployment from spec.proxy: image (else the root
// shard's), replicas, resources, deploymentTemplate, extraVolumes and extraVolumeMounts.
// current is the Deployment as it is now (nil when absent); mountsHash is
// workload.SecretsHash of the mounted Secrets and ConfigMap.
func (p RootShardProxy) Deployment(current *appsv1.Deployment, mountsHash string) *appsv1ac.DeploymentApplyConfiguration {
	all := workload.Features(p.features()...)
	container := corev1ac.Container().WithName("kcp-front-proxy").WithCommand("/kcp-front-proxy").WithArgs(all.Args...)
	podSpec := corev1ac.PodSpec()
	workload.AddMounts(podSpec, container, all.Mounts)
	return workload.Deployment(p.DeploymentName(), p.RootShard.Namespace, p.labels(RootShardProxyComponent), p.SelectorLabels(),
		p.spec(), container, podSpec, current, mountsHash, workload.FrontProxy)
}
