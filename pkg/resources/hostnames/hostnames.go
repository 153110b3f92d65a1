// Package hostnames says which host-cluster object names each kind derives from an object:
// every name its controller may write in the object's namespace (Issuers, Certificates and
// the Secrets cert-manager issues them into, Secrets, ConfigMaps, Services, Deployments,
// StatefulSets, PodDisruptionBudgets), from the same builders the controllers use. The
// registry refuses an object that would derive a name another object of the namespace
// derives already, so that no two setups ever write one host object. Every function is pure.
package hostnames

import (
	"cmp"
	"crypto/x509"
	"net/url"
	"slices"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// Name is a host-cluster object name an object derives.
type Name struct {
	// Name is the object's name; objects of different types with one name count as one.
	Name string
	// Field is the path of the spec field that chose the name, such as spec.secretRef.name,
	// or empty when the object's own name (metadata.name) did.
	Field string
}

// Shared are the names every setup of a namespace without spec.certificates uses together,
// and none owns: the namespace bootstrap PKI. They are never a derived name.
var Shared = []string{pki.BootstrapIssuer, pki.BootstrapCA}

// Of returns the names obj derives, for a versioned object of this API, and false for any
// other object.
func Of(obj runtime.Object) ([]Name, bool) {
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		return RootShard(o), true
	case *operatorv1alpha1.Shard:
		return Shard(o), true
	case *operatorv1alpha1.FrontProxy:
		return FrontProxy(o), true
	case *operatorv1alpha1.CacheServer:
		return CacheServer(o), true
	case *operatorv1alpha1.VirtualWorkspace:
		return VirtualWorkspace(o), true
	case *operatorv1alpha1.Kubeconfig:
		return Kubeconfig(o), true
	case *operatorv1alpha1.Link:
		return Link(o), true
	}
	return nil, false
}

// RootShard derives its PKI (root CA, intermediate CAs, leaves, the server's own identity
// and a managed etcd's certificates), its CA bundles and etcd trust Secrets, its reference
// Secrets (<rs>-shard-join and the others) and its kcp server.
func RootShard(rs *operatorv1alpha1.RootShard) []Name {
	var n names
	objs := rootshard.BuildPKI(rs)
	n.certificates(objs.Issuers, objs.Certificates)
	n.add(rootshard.MergedCABundleName(rs), kcp.MergedClientCAName(rs),
		etcd.ClientTrustSecret(rs.Name), etcd.PeerTrustSecret(rs.Name),
		reference.ShardJoin.Name(rs.Name), reference.FrontProxyJoin.Name(rs.Name), reference.KubeconfigIssuer.Name(rs.Name))
	// Rotation (docs/rotation.md): the root CA's and each intermediate CA's second slot and
	// trust bundle, whether or not a rotation runs: a rotation must never find them taken.
	for _, a := range pki.RootShardAuthorities() {
		n.slots(pki.RootShardIssuer(rs.Name, a))
	}
	// Its link PKI (docs/links.md), whether or not a Link names it yet: a Link appearing
	// must never find its names taken.
	links := link.RootShardPKI(rs)
	n.certificates(links.Issuers, links.Certificates)
	n.slots(link.CAName(rs))
	n.server(rootshard.Server(rs))
	// The internal front proxy (spec.proxy), kcp-operator's <rs>-proxy.
	p := frontproxy.RootShardProxy{RootShard: rs}
	n.certificates(nil, p.Certificates())
	n.add(p.DeploymentName(), p.ServiceName(), p.ConfigMapName(), p.DynamicKubeconfigName(), p.MergedClientCAName())
	return n.sorted()
}

// Shard derives its leaves and a managed etcd's, its kubeconfigs, its CA bundles and its kcp
// server; joined through spec.rootShard.secretRef, the local copies of its RootShard's CAs
// too (<s>-shard-root-*-ca and the bundles).
func Shard(s *operatorv1alpha1.Shard) []Name {
	var n names
	rs := &operatorv1alpha1.RootShard{}
	rs.Namespace = s.Namespace
	switch ref := s.Spec.RootShard; {
	case ref.SecretRef != nil:
		j := joined(shard.Kind, s.Namespace, s.Name, reference.ShardJoin)
		rs = j.RootShard
		n.joined(j, "spec.rootShard.secretRef")
	case ref.Link != nil:
		// Over a link: the same names, less the CA Secrets and Issuers it does not write.
		j := joined(shard.Kind, s.Namespace, s.Name, reference.ShardJoin)
		rs = j.RootShard
		n.joined(j, "spec.rootShard.link")
	case ref.Reference != nil:
		rs.Name = ref.Reference.Name
	}
	n.certificates(nil, link.ShardCertificates(s, rs))
	n.add(shard.ClientKubeconfigName(s), shard.MergedClientCAName(s), shard.MergedCABundleName(s))
	n.server(shard.Server(s, rs))
	return n.sorted()
}

// FrontProxy derives its certificates and bundles (<rs>-<fp>-*), its ConfigMap, Service and
// Deployment; joined through spec.rootShard.secretRef, the local copies of its RootShard's
// CAs too (<fp>-front-proxy-root-*-ca and the bundles).
func FrontProxy(fp *operatorv1alpha1.FrontProxy) []Name {
	var n names
	f := frontproxy.FrontProxy{FrontProxy: fp, RootShard: &operatorv1alpha1.RootShard{}}
	f.RootShard.Namespace = fp.Namespace
	switch ref := fp.Spec.RootShard; {
	case ref.SecretRef != nil:
		j := joined(frontproxy.Kind, fp.Namespace, fp.Name, reference.FrontProxyJoin)
		f.RootShard = j.RootShard
		n.joined(j, "spec.rootShard.secretRef")
	case ref.Link != nil:
		j := joined(frontproxy.Kind, fp.Namespace, fp.Name, reference.FrontProxyJoin)
		f.RootShard = j.RootShard
		n.joined(j, "spec.rootShard.link")
	case ref.Reference != nil:
		f.RootShard.Name = ref.Reference.Name
	}
	n.certificates(nil, f.Certificates())
	n.add(f.ServiceName(), f.ConfigMapName(), f.MergedClientCAName(), f.MergedCABundleName(), f.DynamicKubeconfigName())
	return n.sorted()
}

// CacheServer derives its CA and leaves, its client CA and kubeconfig Secrets, its
// cache-client reference Secret, and its Service and Deployment.
func CacheServer(cs *operatorv1alpha1.CacheServer) []Name {
	var n names
	c := cacheserver.CacheServer{CacheServer: cs}
	objs := c.PKI()
	n.certificates(objs.Issuers, objs.Certificates)
	n.add(c.ServiceName(), c.ClientCAName(), c.KubeconfigName(), reference.CacheClient.Name(cs.Name))
	for range pki.CacheServerAuthorities() {
		n.slots(c.CAName())
	}
	return n.sorted()
}

// VirtualWorkspace derives its certificates, kubeconfigs and bundles, all named
// <vw>-virtual-workspace-*, and its Service and Deployment, <vw>-virtual-workspace.
func VirtualWorkspace(vw *operatorv1alpha1.VirtualWorkspace) []Name {
	var n names
	v := virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw}
	n.add(v.ServiceName(), v.ServerName(), v.ClientName(), v.ExternalAdminName(), v.KubeconfigName(),
		v.ExternalAdminKubeconfigName(), v.RootCacheKubeconfigName(), v.MergedClientCAName(), v.MergedCABundleName())
	return n.sorted()
}

// Kubeconfig derives its Certificate (kubeconfig-<name>) and the Secret spec.secretRef.name;
// with spec.target.rootShardSecretRef, the local copy of its RootShard's front-proxy-client
// CA too (<kc>-kubeconfig-root-*).
func Kubeconfig(kc *operatorv1alpha1.Kubeconfig) []Name {
	var n names
	n.add(kubeconfig.CertificateName(kc.Name))
	if kc.Spec.SecretRef.Name != "" {
		n.list = append(n.list, Name{Name: kc.Spec.SecretRef.Name, Field: "spec.secretRef.name"})
	}
	if kc.Spec.Target.RootShardSecretRef != nil {
		n.joined(joined(kubeconfig.Kind, kc.Namespace, kc.Name, reference.KubeconfigIssuer), "spec.target.rootShardSecretRef")
	}
	if kc.Spec.Target.RootShardLink != nil {
		n.joined(joined(kubeconfig.Kind, kc.Namespace, kc.Name, reference.KubeconfigIssuer), "spec.target.rootShardLink")
	}
	return n.sorted()
}

// Link derives its client certificate (Certificate and Secret, <link>-link-client) and its
// bootstrap Secret (<link>-link-bootstrap, the one thing carried to the remote). They are
// claimed before the Link's controller writes them, so that no Kubeconfig's secretRef or
// other object takes them first.
func Link(l *operatorv1alpha1.Link) []Name {
	var n names
	n.add(link.ClientName(l.Name), link.BootstrapName(l.Name))
	return n.sorted()
}

// joined is what a consumer realizes from a well-formed reference Secret of kind ref, every
// key present: the local CA Secrets and Issuers and the bundles, whatever the Secret holds.
func joined(kind, namespace, owner string, ref reference.Reference) reference.Joined {
	u := &url.URL{Scheme: "https", Host: "kcp.invalid"}
	pem := reference.Certificates{PEM: []byte("-")}
	r := &reference.Resolved{Reference: ref, RootShardURL: u, ExternalURL: u, ExternalAdminURL: u,
		RootCA: pem, ClientCABundle: pem, ServerCABundle: pem, CAs: map[pki.CA]reference.CheckedKeyPair{}, Trust: map[pki.CA]reference.Certificates{}}
	// A managed etcd's trust Secrets are written whenever the Secret holds the etcd CAs.
	for _, ca := range append(ref.KeyPairs(), pki.EtcdClientCA, pki.EtcdPeerCA) {
		r.CAs[ca] = reference.CheckedKeyPair{PEM: reference.KeyPair{Cert: pem.PEM, Key: pem.PEM}, Cert: &x509.Certificate{}}
		r.Trust[ca] = pem
	}
	return reference.Join(kind, namespace, owner, r)
}

// names collects derived names.
type names struct {
	list []Name
}

// add adds names the object's own name chose.
func (n *names) add(names ...string) {
	for _, name := range names {
		n.list = append(n.list, Name{Name: name})
	}
}

// slots adds the rotation slots of the CA (or signing leaf) whose slot 0 is base: its second
// slot (pki.SlotName) and its trust bundle (pki.TrustSuffix).
func (n *names) slots(base string) {
	n.add(SlotNames(base)...)
}

// SlotNames are the names of the rotation slots of the CA or signing leaf whose slot 0 is
// base: never a name kcp-operator makes, and never another object's.
func SlotNames(base string) []string { return []string{pki.SlotName(base, 1), base + pki.TrustSuffix} }

// certificates adds Issuers, Certificates and the Secrets cert-manager issues them into, but
// not the namespace bootstrap's, which every setup shares.
func (n *names) certificates(issuers []*cmapply.IssuerApplyConfiguration, certs []*cmapply.CertificateApplyConfiguration) {
	for _, i := range issuers {
		if !certificates.IsBootstrap(i.Labels) {
			n.add(*i.Name)
		}
	}
	for _, c := range certs {
		if certificates.IsBootstrap(c.Labels) {
			continue
		}
		n.add(*c.Name)
		if c.Spec != nil && c.Spec.SecretName != nil {
			n.add(*c.Spec.SecretName)
		}
	}
}

// server adds a kcp server's admin kubeconfigs, its Service, Deployment and
// PodDisruptionBudget (one name), the kubeconfig toward a CacheServer it writes from a copy
// of a cache-client Secret, and a managed etcd's StatefulSet, Services, budget and
// certificates.
func (n *names) server(s kcp.Server) {
	n.add(s.KubeconfigName(kcp.LogicalClusterAdmin), s.KubeconfigName(kcp.ExternalLogicalClusterAdmin), s.ServiceName, s.DeploymentName())
	// Rotation (docs/rotation.md): the signing leaf's second slot, and the trust of its keys.
	n.slots(kcp.ServiceAccountSecret(s.Name)) // <name>-service-account-trust among them
	if s.CacheSecretRef != nil || s.CacheLink != nil {
		n.add(s.CacheKubeconfig())
	}
	if e := s.Etcd; e != nil {
		n.add(e.Name(), e.PeerServiceName(), e.ServerSecret(), e.PeerSecret(), e.ClientSecret())
	}
}

// joined adds the local copies of a joined RootShard's CAs, their Issuers and the bundles,
// which field asked for.
func (n *names) joined(j reference.Joined, field string) {
	for _, s := range j.Secrets {
		n.list = append(n.list, Name{Name: *s.Name, Field: field})
	}
	for _, i := range j.Issuers {
		n.list = append(n.list, Name{Name: *i.Name, Field: field})
	}
}

// sorted returns the names sorted by name, each once: the first field that chose a name
// stays.
func (n *names) sorted() []Name {
	out := make([]Name, 0, len(n.list))
	seen := map[string]bool{}
	for _, name := range n.list {
		if name.Name == "" || seen[name.Name] || slices.Contains(Shared, name.Name) {
			continue
		}
		seen[name.Name] = true
		out = append(out, name)
	}
	slices.SortFunc(out, func(a, b Name) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Strings are the names alone.
func Strings(names []Name) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.Name
	}
	return out
}
