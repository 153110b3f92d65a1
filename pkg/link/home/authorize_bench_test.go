package home

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// BenchmarkAuthorizeRequest measures the authorization of one request to the listener, as
// link.Listener makes it for every request, with n RootShards of a Link each: "listener"
// takes the declarations and the trust the server holds (Server.current: built from its
// caches once per change of them), then decides; "rebuilt" builds them from the caches for
// the request, as the listener did before it held them; "decide" is the anchor, measured in
// the same run: link.Authorize alone, over declarations and trust built before, which no
// request can go below.
// Run: go test -run x -bench BenchmarkAuthorizeRequest -benchmem ./pkg/link/home
func BenchmarkAuthorizeRequest(b *testing.B) {
	for _, n := range []int{10, 100} {
		s, client, serverName := authorizeFixture(b, n)
		peer := []*x509.Certificate{client.Leaf}
		request := link.Request{Operation: link.Sign, Kind: link.Shard, Role: pki.ServerCA}
		decided := func(b *testing.B, d link.Decision) {
			if !d.Allowed() {
				b.Fatalf("refused: %s", d.Reason)
			}
		}
		b.Run(fmt.Sprintf("decide/links=%d", n), func(b *testing.B) {
			declarations, trust := s.declarations(), s.trust()
			b.ReportAllocs()
			for b.Loop() {
				decided(b, link.Authorize(peer, serverName, request, declarations, trust, time.Now()))
			}
		})
		b.Run(fmt.Sprintf("listener/links=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				k := s.current()
				decided(b, link.Authorize(peer, serverName, request, k.declarations, k.trust, time.Now()))
			}
		})
		b.Run(fmt.Sprintf("rebuilt/links=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decided(b, link.Authorize(peer, serverName, request, s.declarations(), s.trust(), time.Now()))
			}
		})
	}
}

// authorizeFixture is a listener over caches of n RootShards root-<i> in namespaces ns-<i>,
// each with its link CA and a Link eu-<i>, and the client certificate of the first Link,
// with the server name of its RootShard.
func authorizeFixture(b *testing.B, n int) (*Server, tls.Certificate, string) {
	index := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	links, rootShards, secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, index),
		cache.NewIndexer(cache.MetaNamespaceKeyFunc, index), cache.NewIndexer(cache.MetaNamespaceKeyFunc, index)
	var client tls.Certificate
	var serverName string
	for i := range n {
		ns := fmt.Sprintf("ns-%d", i)
		rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "root", UID: types.UID(fmt.Sprintf("rs-%d", i))}}
		id := fmt.Sprintf("eu-%d.links.example.com", i)
		l := &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eu", UID: types.UID(fmt.Sprintf("link-%d", i))},
			Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: "root"}, Identity: id,
				Consumers: []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerShard}}}
		ca := newCA(b, fmt.Sprintf("root-link-ca-%d", i))
		labels := pki.Labels(rootshard.Kind, rs.Name, "link-ca")
		labels[pki.LabelOwnerUID] = string(rs.UID)
		require.NoError(b, rootShards.Add(rs))
		require.NoError(b, links.Add(l))
		require.NoError(b, secrets.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: linkpki.CAName(rs), Labels: labels,
			ResourceVersion: "1"}, Data: map[string][]byte{corev1.TLSCertKey: ca.pem()}}))
		if i == 0 {
			client = ca.issue(b, id, []string{id}, []string{link.URI(ns, l.Name, string(l.UID))}, x509.ExtKeyUsageClientAuth)
			serverName = linkpki.ServerName(rs)
		}
	}
	s := New(Config{Links: operatorlisters.NewLinkLister(links), RootShards: operatorlisters.NewRootShardLister(rootShards),
		CacheServers: operatorlisters.NewCacheServerLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
		Secrets:      corev1listers.NewSecretLister(secrets)})
	return s, client, serverName
}
