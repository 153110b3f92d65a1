package home

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// references are the reference Secret each consumer kind joins with, whose keyless data
// the bundles carry.
var references = map[link.ConsumerKind]reference.Reference{
	link.Shard:       reference.ShardJoin,
	link.FrontProxy:  reference.FrontProxyJoin,
	link.Kubeconfig:  reference.KubeconfigIssuer,
	link.CacheClient: reference.CacheClient,
}

// SecretsSelector selects the host Secrets the listener reads: the link CAs' slots, the
// serving certificates, and the reference Secrets, of the server's own making. No other
// Secret is cached.
func SecretsSelector() labels.Selector {
	components := []string{pki.LinkCA.TemplateKey(), linkpki.ServerRole}
	for _, r := range references {
		components = append(components, string(r))
	}
	slices.Sort(components)
	managed, _ := labels.NewRequirement(pki.LabelManagedBy, selection.Equals, []string{pki.ManagedBy})
	component, _ := labels.NewRequirement(pki.LabelComponent, selection.In, components)
	return labels.NewSelector().Add(*managed, *component)
}

// Declaration is what the listener knows of the Link l.
func Declaration(l *operatorv1alpha1.Link) link.Declaration {
	d := link.Declaration{Namespace: l.Namespace, Name: l.Name, UID: string(l.UID), RootShard: l.Spec.RootShardRef.Name,
		Identity: l.Spec.Identity, DNSNames: l.Spec.DNSNames, Deleting: l.DeletionTimestamp != nil}
	for _, c := range l.Spec.Consumers {
		d.Consumers = append(d.Consumers, link.ConsumerKind(c))
	}
	if l.Spec.CacheServerRef != nil {
		d.CacheServer = l.Spec.CacheServerRef.Name
	}
	return d
}

// declarations are every Link's.
func (s *Server) declarations() []link.Declaration {
	links, err := s.cfg.Links.List(labels.Everything())
	if err != nil {
		return nil
	}
	out := make([]link.Declaration, 0, len(links))
	for _, l := range links {
		out = append(out, Declaration(l))
	}
	return out
}

// link is the Link of d, by its UID: nil when it is gone or was made again.
func (s *Server) link(d link.Declaration) *operatorv1alpha1.Link {
	l, err := s.cfg.Links.Links(d.Namespace).Get(d.Name)
	if err != nil || string(l.UID) != d.UID {
		return nil
	}
	return l
}

// trust is the link CA trust of every RootShard that has one.
func (s *Server) trust() link.Trust {
	all, err := s.cfg.RootShards.List(labels.Everything())
	if err != nil {
		return nil
	}
	out := link.Trust{}
	for _, rs := range all {
		cas := s.linkCAs(rs)
		if len(cas) == 0 {
			continue
		}
		rt := link.RootShardTrust{ServerName: linkpki.ServerName(rs)}
		for _, p := range cas {
			if block, _ := pem.Decode(p); block != nil {
				if c, err := x509.ParseCertificate(block.Bytes); err == nil {
					rt.LinkCAs = append(rt.LinkCAs, c)
				}
			}
		}
		out[link.RootShardKey{Namespace: rs.Namespace, Name: rs.Name}] = rt
	}
	return out
}

// linkCAs are the PEM certificates of the live slots of rs's link CA, in slot order: both
// while it rotates. A slot's Secret counts only when it is rs's, by its UID.
func (s *Server) linkCAs(rs *operatorv1alpha1.RootShard) [][]byte {
	var out [][]byte
	for _, slot := range pki.SlotsOf(rs.Status.Rotations, linkpki.Authority).Live {
		sec, ok := s.ownedSecret(rs.Namespace, pki.SlotName(linkpki.CAName(rs), slot), rootshard.Kind, rs.Name, rs.UID)
		if !ok {
			continue
		}
		if first, err := pki.FirstCertificate(sec.Data[corev1.TLSCertKey]); err == nil {
			out = append(out, first)
		}
	}
	return out
}

// linkCABundle is the PEM bundle of the live slots of rs's link CA.
func (s *Server) linkCABundle(rs *operatorv1alpha1.RootShard) []byte {
	return certificates.Bundle(s.linkCAs(rs)...)
}

// ownedSecret is the Secret namespace/name of the cache when the server made it for the
// owner of kind, name and uid: our labels and the owner's UID.
func (s *Server) ownedSecret(namespace, name, kind, owner string, uid types.UID) (*corev1.Secret, bool) {
	sec, err := s.cfg.Secrets.Secrets(namespace).Get(name)
	if err != nil {
		return nil, false
	}
	l := sec.Labels
	if l[pki.LabelManagedBy] != pki.ManagedBy || l[pki.OwnerLabel(kind)] != owner || uid == "" || l[pki.LabelOwnerUID] != string(uid) {
		return nil, false
	}
	return sec, true
}

// servingCertificates keeps each RootShard's parsed serving certificate until its Secret
// changes.
type servingCertificates struct {
	mu     sync.Mutex
	parsed map[types.UID]parsedCertificate
}

type parsedCertificate struct {
	resourceVersion string
	cert            *tls.Certificate
}

// certificate is the serving certificate of the RootShard whose server name the client
// asks for (linkpki.ServerName): <rootshard>.<namespace>.link.kcp-setups.local.
func (s *Server) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	rest, ok := strings.CutSuffix(hello.ServerName, linkpki.ServerNameSuffix)
	i := strings.LastIndex(rest, ".")
	if !ok || i <= 0 {
		return nil, fmt.Errorf("no link listener for the server name %q", hello.ServerName)
	}
	rs, err := s.cfg.RootShards.RootShards(rest[i+1:]).Get(rest[:i])
	if err != nil || linkpki.ServerName(rs) != hello.ServerName {
		return nil, fmt.Errorf("no link listener for the server name %q", hello.ServerName)
	}
	sec, ok := s.ownedSecret(rs.Namespace, linkpki.ServerCertificateName(rs), rootshard.Kind, rs.Name, rs.UID)
	if !ok {
		return nil, fmt.Errorf("the link listener of RootShard %s/%s has no serving certificate yet", rs.Namespace, rs.Name)
	}
	s.certs.mu.Lock()
	defer s.certs.mu.Unlock()
	if p, ok := s.certs.parsed[rs.UID]; ok && p.resourceVersion == sec.ResourceVersion {
		return p.cert, nil
	}
	cert, err := tls.X509KeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("the serving certificate of the link listener of RootShard %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	if s.certs.parsed == nil {
		s.certs.parsed = map[types.UID]parsedCertificate{}
	}
	s.certs.parsed[rs.UID] = parsedCertificate{resourceVersion: sec.ResourceVersion, cert: &cert}
	return &cert, nil
}

// bundlesOf are the Bundles of d: per consumer kind it allows, the keyless data of its
// reference Secret (a kind whose Secret is not written yet is left out), and its RootShard's
// link CA bundle.
func (s *Server) bundlesOf(d link.Declaration) (link.Bundles, error) {
	rs, err := s.cfg.RootShards.RootShards(d.Namespace).Get(d.RootShard)
	if err != nil {
		return link.Bundles{}, err
	}
	b := link.Bundles{References: map[link.ConsumerKind]map[string][]byte{}, LinkCA: s.linkCABundle(rs), LinkCAIssuer: s.linkCAIssuer(rs)}
	for _, kind := range slices.Sorted(maps.Keys(references)) {
		if !d.Allows(kind) {
			continue
		}
		if data := s.referenceData(d, rs, kind); data != nil {
			b.References[kind] = linkpki.KeepOnlyKeyless(data)
		}
	}
	b.Revision = revision(b)
	return b, nil
}

// referenceData is the data of the reference Secret of kind for d, nil while there is none:
// the RootShard's, or the CacheServer's the Link names, by its owner's UID.
func (s *Server) referenceData(d link.Declaration, rs *operatorv1alpha1.RootShard, kind link.ConsumerKind) map[string][]byte {
	ref := references[kind]
	ownerKind, owner, uid := rootshard.Kind, rs.Name, rs.UID
	if kind == link.CacheClient {
		cs, err := s.cfg.CacheServers.CacheServers(d.Namespace).Get(d.CacheServer)
		if err != nil {
			return nil
		}
		ownerKind, owner, uid = cacheserver.Kind, cs.Name, cs.UID
	}
	sec, ok := s.ownedSecret(d.Namespace, ref.Name(owner), ownerKind, owner, uid)
	if !ok || sec.Type != ref.Type() {
		return nil
	}
	return sec.Data
}

// revision is a hash of everything else of b.
func revision(b link.Bundles) string {
	h := sha256.New()
	write := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s", len(p), p)
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(b.References)) {
		data := b.References[kind]
		write("reference", string(kind))
		for _, k := range slices.Sorted(maps.Keys(data)) {
			write(k, string(data[k]))
		}
	}
	write("link-ca", string(b.LinkCA))
	write("link-ca-issuer", string(b.LinkCAIssuer))
	return hex.EncodeToString(h.Sum(nil)[:16])
}
