// Package shard builds what a Shard needs in the host cluster from its spec and its
// RootShard's: its certificates, signed by the RootShard's CAs, its kubeconfig toward the
// root shard, and its kcp server. Every function is pure.
package shard

import (
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Kind is the owner label's kind of everything a Shard owns.
const Kind = pki.ShardKind

// clientKubeconfigDir is where the shard's kubeconfig toward the root shard is mounted.
var clientKubeconfigDir = kcp.KubeconfigDir("client")

// ServiceName is the name of the shard's Service and Deployment.
func ServiceName(s *operatorv1alpha1.Shard) string { return pki.ShardServiceName(s.Name) }

// BaseURL is the base URL a Shard's kcp registers itself with (--shard-base-url), whatever
// its RootShard: Server(s, rs).BaseURL() of the Shard alone.
func BaseURL(s *operatorv1alpha1.Shard) string {
	return kcp.Server{ServiceName: ServiceName(s), Namespace: s.Namespace, Spec: &s.Spec.CommonShardSpec}.BaseURL()
}

// ClientKubeconfigName is the Secret of the shard's kubeconfig toward the root shard.
func ClientKubeconfigName(s *operatorv1alpha1.Shard) string { return s.Name + "-client-kubeconfig" }

// MergedClientCAName is the Secret with the client CAs a Shard with clientCABundleRef trusts.
func MergedClientCAName(s *operatorv1alpha1.Shard) string { return s.Name + "-merged-client-ca" }

// MergedCABundleName is the Secret with the CAs that verify the installation's external
// address for a Shard with caBundleSecretRef.
func MergedCABundleName(s *operatorv1alpha1.Shard) string { return s.Name + "-merged-ca-bundle" }

// MergedClientCA builds the Secret of a Shard's own client CA bundle, when it has
// clientCABundleRef: its RootShard's merged client CA (the components' and the users' CAs and
// the RootShard's clientCABundleRef), then the Shard's extra CAs.
func MergedClientCA(s *operatorv1alpha1.Shard, rootShardClientCA, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(s.Namespace, MergedClientCAName(s), pki.Labels(Kind, s.Name, "merged-client-ca"), rootShardClientCA, extra)
}

// MergedCABundle builds the Secret of a Shard's own server CA bundle, when it has
// caBundleSecretRef: its RootShard's merged CA bundle (the server CA and the RootShard's
// caBundleSecretRef), then the Shard's extra CAs. As in kcp-operator, only the external
// logical-cluster-admin kubeconfig trusts it.
func MergedCABundle(s *operatorv1alpha1.Shard, rootShardCABundle, extra []byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(s.Namespace, MergedCABundleName(s), pki.Labels(Kind, s.Name, "merged-ca-bundle"), rootShardCABundle, extra)
}

// Server describes a Shard's kcp server to the kcp builders. Its cache is its own, else its
// RootShard's; without either, it uses the root shard's embedded cache through its
// kubeconfig toward the root shard.
func Server(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) kcp.Server {
	toRoot := clientKubeconfigDir + "/" + kcp.KubeconfigKey
	k := kcp.Server{
		Kind:        Kind,
		Name:        s.Name,
		Namespace:   s.Namespace,
		ServiceName: ServiceName(s),
		Spec:        &s.Spec.CommonShardSpec,
		RootShard:   rs,
		KindArgs:    []string{"--shard-name=" + s.Name},
		KindMounts:  []workload.Mount{{Volume: "client-kubeconfig", Secret: ClientKubeconfigName(s), Dir: clientKubeconfigDir}},
		Etcd:        Etcd(s, rs),
	}
	if s.Spec.ClientCABundleRef != nil {
		k.ClientCA = MergedClientCAName(s)
	}
	switch {
	case s.Spec.CABundleSecretRef != nil:
		k.ServerCABundle = MergedCABundleName(s)
	case rs.Spec.CABundleSecretRef != nil:
		k.ServerCABundle = rootshard.MergedCABundleName(rs)
	}
	if k.Version().ExternalHostname() {
		// From kcp v0.31.0 on the flag is a hidden no-op: the external address comes from
		// --shard-external-url.
		k.KindArgs = append(k.KindArgs, "--external-hostname="+rs.Spec.External.Hostname)
	}
	k.KindArgs = append(k.KindArgs, "--root-shard-kubeconfig-file="+toRoot)
	// A cache that names nothing ("cache: {}", as kcp-operator's Go SDK may send it) is no
	// cache of the Shard's own, as in kcp-operator.
	switch {
	case s.Spec.Cache != nil && s.Spec.Cache.Link != nil:
		k.CacheLink = &s.Spec.Cache.Link.SecretRef
	case s.Spec.Cache != nil && (s.Spec.Cache.Reference != nil || s.Spec.Cache.SecretRef != nil):
		k.Cache, k.CacheSecretRef = s.Spec.Cache.Reference, s.Spec.Cache.SecretRef
	case rs.Spec.Cache != nil && (rs.Spec.Cache.Reference != nil || rs.Spec.Cache.SecretRef != nil):
		// The RootShard's CacheServer, or its copy of the cache-client Secret, which is in
		// the Shard's namespace too.
		k.Cache, k.CacheSecretRef = rs.Spec.Cache.Reference, rs.Spec.Cache.SecretRef
	default:
		k.KindArgs = append(k.KindArgs, "--cache-kubeconfig="+toRoot)
	}
	return k
}

// Etcd describes the Shard's managed etcd, or is nil when it uses an external one. Its names
// start with "<shard>-shard"; its certificates are signed by the RootShard's etcd CAs.
func Etcd(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) *etcd.Cluster {
	return etcd.New(Kind, &s.ObjectMeta, &s.Spec.CommonShardSpec, EtcdBase(s.Name), rs.Name)
}

// EtcdBase is the prefix of the names of the managed etcd of the Shard name, and of its
// snapshots': "<shard>-shard".
func EtcdBase(name string) string { return name + "-shard" }

// EtcdClaimNames are the volume claims of the Shard's managed etcd (the members' and its
// snapshot volume's), none without one: their names follow from the Shard alone, whichever
// its RootShard.
func EtcdClaimNames(s *operatorv1alpha1.Shard) []string {
	return Etcd(s, &operatorv1alpha1.RootShard{}).VolumeClaimNames()
}

// Certificates are the shard's own certificates, signed by its RootShard's CAs, with the
// shard's certificate templates merged in, and its managed etcd's, when it has one.
func Certificates(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) []*cmapply.CertificateApplyConfiguration {
	var out []*cmapply.CertificateApplyConfiguration
	leaves := Server(s, rs).Leaves()
	if e := Etcd(s, rs); e != nil {
		leaves = append(leaves, e.Leaves()...)
	}
	for _, leaf := range leaves {
		var tmpl *operatorv1alpha1.CertificateTemplate
		if t, ok := s.Spec.CertificateTemplates[leaf.Role]; ok {
			tmpl = &t
		}
		out = append(out, certificates.Certificate(certificates.Leaf(s.Namespace, leaf, pki.Labels(Kind, s.Name, leaf.Role), tmpl)))
	}
	return out
}

// ClientKubeconfig builds the Secret of the shard's kubeconfig toward the root shard, as its
// client certificate.
func ClientKubeconfig(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) (*corev1ac.SecretApplyConfiguration, error) {
	return Server(s, rs).KubeconfigSecret(ClientKubeconfigName(s), "client", rootshard.Server(rs).BaseURL(), "client")
}
