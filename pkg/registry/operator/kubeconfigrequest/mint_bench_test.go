package kubeconfigrequest

import (
	"context"
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/install"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
	rootshardregistry "github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
)

// BenchmarkMint drives the kubeconfig subresource of a RootShard as the server serves it: a
// requester minting for itself, the target read through Resolvers, the CAs from an informer's
// cache. "memory" reads the RootShard from a map, so it measures the mint alone; "etcd" reads
// it from the server's own storage (watch cache on, as by default) over an embedded etcd.
// "sign" is the anchor, measured in the same run: a key and a certificate alone, which no
// mint can go below.
// Run: go test -run x -bench BenchmarkMint -benchmem ./pkg/registry/operator/kubeconfigrequest
func BenchmarkMint(b *testing.B) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	// A RootShard as a user applies it, defaulted as the server stores it.
	versioned := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}}}
	versioned.Spec.Etcd.Endpoints = []string{"https://etcd.team-a.svc:2379"}
	scheme.Default(versioned)
	internal := &operator.RootShard{}
	require.NoError(b, scheme.Convert(versioned, internal, nil))

	b.Run("sign", func(b *testing.B) {
		r := benchREST(b, Resolvers{})
		secret, err := r.CAs.Secrets.Secrets("team-a").Get("root-front-proxy-client-ca")
		require.NoError(b, err)
		ca, err := credentials.ParseCA(secret.Data["tls.crt"], secret.Data["tls.key"])
		require.NoError(b, err)
		subject := pkix.Name{CommonName: "alice", Organization: []string{"team-a"}}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := ca.Mint(subject, time.Now(), time.Hour); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("memory", func(b *testing.B) {
		benchmarkMint(b, benchREST(b, Resolvers{Scheme: scheme,
			RootShards: getter{"rootshards", map[string]runtime.Object{"root": internal}}}))
	})
	b.Run("etcd", func(b *testing.B) {
		store := etcdRootShards(b, scheme)
		ctx := genericapirequest.WithNamespace(b.Context(), "team-a")
		_, err := store.Create(ctx, internal.DeepCopy(), nil, &metav1.CreateOptions{})
		require.NoError(b, err)
		benchmarkMint(b, benchREST(b, Resolvers{Scheme: scheme, RootShards: store}))
	})
}

// benchmarkMint mints for alice with r in parallel, as concurrent clients do.
func benchmarkMint(b *testing.B, r *REST) {
	ctx := genericapirequest.WithNamespace(context.Background(), "team-a")
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"team-a", user.AllAuthenticated}})
	// A minimal request body, as kubectl create --raw sends it.
	body := &operator.KubeconfigRequest{}
	// One mint outside the timer parses the CA, as the first request after a change does.
	_, err := r.Create(audit.WithAuditContext(ctx), "root", body, nil, &metav1.CreateOptions{})
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			// Every request has its own audit context, as the server's filter gives it.
			if _, err := r.Create(audit.WithAuditContext(ctx), "root", body, nil, &metav1.CreateOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchREST is the rootshards/kubeconfig subresource over resolvers and a cache holding a real
// CA key pair and server CA bundle.
func benchREST(b *testing.B, resolvers Resolvers) *REST {
	r := newREST(b, false)
	r.Resolve = resolvers.RootShard
	return r
}

// etcdRootShards is the server's rootshards storage over an embedded etcd, with the watch
// cache the server enables by default.
func etcdRootShards(b *testing.B, scheme *runtime.Scheme) rest.StandardStorage {
	etcd, err := embeddedetcd.Start(b.Context(), b.TempDir())
	require.NoError(b, err)
	b.Cleanup(etcd.Close)
	codecs := serializer.NewCodecFactory(scheme)
	opts := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry/operator.kcp.io", codecs.LegacyCodec(operatorv1alpha1.SchemeGroupVersion)))
	etcd.ApplyTo(&opts.StorageConfig.Transport)
	restOptions := opts.CreateRESTOptionsGetter(&genericoptions.SimpleStorageFactory{StorageConfig: opts.StorageConfig}, nil)
	store, _, err := rootshardregistry.NewREST(scheme, restOptions, nil)
	require.NoError(b, err)
	b.Cleanup(store.Destroy)
	return store
}
