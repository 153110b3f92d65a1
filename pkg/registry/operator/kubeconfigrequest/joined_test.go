package kubeconfigrequest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/install"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// getter is a rest.Getter over fixed objects of this server's storage.
type getter struct {
	resource string
	objects  map[string]runtime.Object
}

func (g getter) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if obj, ok := g.objects[name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(operator.Resource(g.resource), name)
}

// installation is a RootShard of another namespace, kcp-system/root, reachable at
// kcp.example.com:8443, whose join Secrets were copied into team-a as a sync tool does.
type installation struct {
	// copies are the join Secrets in team-a, by reference.
	copies map[reference.Reference]*corev1.Secret
	// signer is the front-proxy-client CA's certificate; serverCABundle verifies the root
	// shard.
	signer         *x509.Certificate
	serverCABundle []byte
}

func newInstallation(t *testing.T) installation {
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "kcp-system"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 8443}}}
	rootCA, _ := credentialstest.NewCA(t, "root-ca")
	cas := reference.RootShardCAs{RootCA: rootCA, KeyPairs: map[pki.CA]reference.KeyPair{}}
	for _, ca := range pki.IntermediateCAs {
		cert, key := credentialstest.NewCA(t, string(ca))
		cas.KeyPairs[ca] = reference.KeyPair{Cert: cert, Key: key}
	}
	cas.Bundles = rootshard.CABundles{ServerCA: cas.KeyPairs[pki.ServerCA].Cert, ClientCA: cas.KeyPairs[pki.ClientCA].Cert,
		FrontProxyClientCA: cas.KeyPairs[pki.FrontProxyClientCA].Cert}
	built, err := reference.ForRootShard(rs, cas)
	require.NoError(t, err)

	in := installation{copies: map[reference.Reference]*corev1.Secret{}, serverCABundle: cas.Bundles.Server()}
	for _, s := range built {
		r := reference.Reference(s.Labels[reference.Label])
		in.copies[r] = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: *s.Name, Namespace: "team-a", ResourceVersion: "1",
				Labels: map[string]string{reference.Label: string(r)}},
			Type: *s.Type, Data: maps.Clone(s.Data),
		}
	}
	signer, err := x509.ParseCertificate(pemBlock(t, cas.KeyPairs[pki.FrontProxyClientCA].Cert))
	require.NoError(t, err)
	in.signer = signer
	return in
}

// realized are the local CA Secrets the controller of the consumer kind owner writes from
// its copy of the join Secret r, as it applies them.
func (in installation) realized(t *testing.T, kind, owner string, r reference.Reference) []*corev1.Secret {
	resolved, err := reference.Resolve(in.copies[r], r)
	require.NoError(t, err)
	var out []*corev1.Secret
	for _, s := range reference.Join(kind, "team-a", owner, resolved).Secrets {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: *s.Name, Namespace: *s.Namespace, Labels: s.Labels, ResourceVersion: "1"}, Data: s.Data}
		if s.Type != nil {
			secret.Type = *s.Type
		}
		out = append(out, secret)
	}
	return out
}

// pemBlock is the DER of the first PEM block of data.
func pemBlock(t *testing.T, data []byte) []byte {
	block, _ := pem.Decode(data)
	require.NotNil(t, block)
	return block.Bytes
}

// indexer is an informer's cache of the Secrets that selector selects among secrets, as the
// server's informers list them.
func indexer(t *testing.T, selector labels.Selector, secrets ...*corev1.Secret) cache.Indexer {
	i := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range secrets {
		if selector.Matches(labels.Set(s.Labels)) {
			require.NoError(t, i.Add(s))
		}
	}
	return i
}

// caCache and referenceCache are the server's two caches of Secrets.
func caCache(t *testing.T, secrets ...*corev1.Secret) cache.Indexer {
	return indexer(t, CASecretsSelector(), secrets...)
}

func referenceCache(t *testing.T, secrets ...*corev1.Secret) cache.Indexer {
	return indexer(t, ReferenceSecretsSelector(), secrets...)
}

// joinedREST is the kubeconfig subresource of resource (shards or frontproxies) in team-a,
// resolving through this server's storage of objects, over the caches of the local CA
// Secrets and of the reference Secrets.
func joinedREST(t *testing.T, resource string, objects map[string]runtime.Object, cas, refs cache.Indexer) (*REST, *ReferenceSource) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	references := &ReferenceSource{Secrets: corev1listers.NewSecretLister(refs)}
	resolvers := Resolvers{Scheme: scheme, References: references,
		RootShards: getter{"rootshards", nil}, Shards: getter{"shards", objects}, FrontProxies: getter{"frontproxies", objects}}
	r := newREST(t, false)
	r.Resource = operator.Resource(resource)
	r.Resolve = map[string]Resolver{"shards": resolvers.Shard, "frontproxies": resolvers.FrontProxy}[resource]
	r.CAs = &CASource{Secrets: corev1listers.NewSecretLister(cas)}
	return r, references
}

func joinedShard(name, secret string) *operator.Shard {
	s := &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}}
	s.Spec.RootShard.SecretRef = &corev1.LocalObjectReference{Name: secret}
	return s
}

func joinedFrontProxy(name, secret, hostname string) *operator.FrontProxy {
	fp := &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}}
	fp.Spec.RootShard.SecretRef = &corev1.LocalObjectReference{Name: secret}
	fp.Spec.ExternalHostname = hostname
	return fp
}

// mintFor mints a credential for alice toward name and returns its kubeconfig.
func mintFor(t *testing.T, r *REST, name string) (*clientcmdapi.Config, *x509.Certificate, error) {
	ctx, _ := request(t, "alice", "team-a")
	out, err := r.Create(ctx, name, &operator.KubeconfigRequest{}, nil, &metav1.CreateOptions{})
	if err != nil {
		return nil, nil, err
	}
	kubeconfig := out.(*operator.KubeconfigRequest).Status.Kubeconfig
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	require.NoError(t, err)
	return cfg, certOf(t, kubeconfig), nil
}

// TestMintForAJoinedShard checks that a Shard joined by a copy of shard-join mints with the
// local front-proxy-client CA its controller wrote from the copy, toward its own URL, trusting
// the installation's server CA bundle.
func TestMintForAJoinedShard(t *testing.T) {
	in := newInstallation(t)
	objects := map[string]runtime.Object{"s1": joinedShard("s1", "root-shard-join")}
	r, _ := joinedREST(t, "shards", objects,
		caCache(t, in.realized(t, "shard", "s1", reference.ShardJoin)...), referenceCache(t, in.copies[reference.ShardJoin]))

	cfg, cert, err := mintFor(t, r, "s1")
	require.NoError(t, err)
	assert.Equal(t, "alice", cert.Subject.CommonName)
	require.NoError(t, cert.CheckSignatureFrom(in.signer), "signed by the RootShard's front-proxy-client CA, through its local copy")
	assert.Equal(t, "https://s1-shard-kcp.team-a.svc.cluster.local:6443", cfg.Clusters[cfg.Contexts["base"].Cluster].Server)
	assert.Contains(t, cfg.Contexts, "shard-base")
	for name, cluster := range cfg.Clusters {
		assert.Equal(t, in.serverCABundle, cluster.CertificateAuthorityData, name)
	}
}

// TestMintForAJoinedFrontProxy checks that a FrontProxy joined by a copy of front-proxy-join
// is reached at its own hostname, else at the installation's external URL (the copy's
// external-url: host and port), with the RootShard's port unless it has its own.
func TestMintForAJoinedFrontProxy(t *testing.T) {
	in := newInstallation(t)
	for _, tc := range []struct {
		name, hostname, want string
	}{
		{name: "the installation's hostname", want: "https://kcp.example.com:8443"},
		{name: "its own hostname", hostname: "edge.example.com", want: "https://edge.example.com:8443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := map[string]runtime.Object{"edge": joinedFrontProxy("edge", "root-front-proxy-join", tc.hostname)}
			r, _ := joinedREST(t, "frontproxies", objects,
				caCache(t, in.realized(t, "frontproxy", "edge", reference.FrontProxyJoin)...), referenceCache(t, in.copies[reference.FrontProxyJoin]))

			cfg, cert, err := mintFor(t, r, "edge")
			require.NoError(t, err)
			require.NoError(t, cert.CheckSignatureFrom(in.signer))
			assert.Equal(t, tc.want, cfg.Clusters[cfg.Contexts["base"].Cluster].Server)
			assert.Equal(t, tc.want+"/clusters/root", cfg.Clusters[cfg.Contexts["default"].Cluster].Server)
			assert.NotContains(t, cfg.Contexts, "shard-base")
			for name, cluster := range cfg.Clusters {
				assert.Equal(t, in.serverCABundle, cluster.CertificateAuthorityData, name)
			}
		})
	}
}

// TestJoinedRefusals checks each way a joined object cannot have credentials yet: every one
// is a 4xx (or a 503 to retry) whose message says what is missing, and never quotes a key.
func TestJoinedRefusals(t *testing.T) {
	in := newInstallation(t)
	cas := in.realized(t, "shard", "s1", reference.ShardJoin)
	wrongType := in.copies[reference.FrontProxyJoin].DeepCopy()
	wrongType.Name = "root-shard-join"
	unlabelled := in.copies[reference.ShardJoin].DeepCopy()
	unlabelled.Labels = nil
	noKey := in.copies[reference.ShardJoin].DeepCopy()
	delete(noKey.Data, reference.KeyKey(pki.FrontProxyClientCA))

	for _, tc := range []struct {
		name     string
		cas      []*corev1.Secret
		refs     []*corev1.Secret
		notSync  bool
		conflict bool
		want     []string
	}{
		{name: "copy missing", cas: cas, conflict: true,
			want: []string{`Shard "s1"`, "Secret team-a/root-shard-join not found", "operator.kcp.io/reference"}},
		{name: "copy without the reference label", cas: cas, refs: []*corev1.Secret{unlabelled}, conflict: true,
			want: []string{"Secret team-a/root-shard-join not found", "a copy must keep the label operator.kcp.io/reference"}},
		{name: "copy of another join Secret", cas: cas, refs: []*corev1.Secret{wrongType}, conflict: true,
			want: []string{"Secret team-a/root-shard-join", `"operator.kcp.io/front-proxy-join"`}},
		{name: "copy without a key", cas: cas, refs: []*corev1.Secret{noKey}, conflict: true,
			want: []string{`has no key "front-proxy-client-ca.key"`}},
		{name: "local CA not written yet", refs: []*corev1.Secret{in.copies[reference.ShardJoin]}, conflict: true,
			want: []string{"s1-shard-root-front-proxy-client-ca", "Shard/s1", "not issued yet"}},
		{name: "cache not synced", cas: cas, refs: []*corev1.Secret{in.copies[reference.ShardJoin]}, notSync: true,
			want: []string{"reference Secrets is not synced yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := map[string]runtime.Object{"s1": joinedShard("s1", "root-shard-join")}
			r, refs := joinedREST(t, "shards", objects, caCache(t, tc.cas...), referenceCache(t, tc.refs...))
			if tc.notSync {
				refs.Synced = func() bool { return false }
			}
			_, _, err := mintFor(t, r, "s1")
			require.Error(t, err)
			if tc.conflict {
				assert.True(t, apierrors.IsConflict(err), "got %v", err)
			} else {
				assert.True(t, apierrors.IsServiceUnavailable(err), "got %v", err)
			}
			for _, want := range tc.want {
				assert.ErrorContains(t, err, want)
			}
			assert.NotContains(t, err.Error(), "PRIVATE KEY")
			assert.NotContains(t, err.Error(), "BEGIN")
		})
	}
}

// TestJoinedWithoutHostCluster checks that a server without a host cluster refuses a joined
// object the way it refuses any mint it cannot sign: a Conflict, not a panic.
func TestJoinedWithoutHostCluster(t *testing.T) {
	objects := map[string]runtime.Object{"s1": joinedShard("s1", "root-shard-join")}
	r, _ := joinedREST(t, "shards", objects, caCache(t), referenceCache(t))
	r.Resolve = Resolvers{Scheme: func() *runtime.Scheme { s := runtime.NewScheme(); install.Install(s); return s }(),
		Shards: getter{"shards", objects}}.Shard
	_, _, err := mintFor(t, r, "s1")
	assert.True(t, apierrors.IsConflict(err), "got %v", err)
	assert.ErrorContains(t, err, "no host cluster")
}

// TestJoinedCopyIsResolvedOncePerVersion checks that the copy is parsed once per
// resourceVersion: a change the informer has not delivered as a new version is not read, and
// a new version is.
func TestJoinedCopyIsResolvedOncePerVersion(t *testing.T) {
	in := newInstallation(t)
	objects := map[string]runtime.Object{"s1": joinedShard("s1", "root-shard-join")}
	copied := in.copies[reference.ShardJoin].DeepCopy()
	refs := referenceCache(t, copied)
	r, _ := joinedREST(t, "shards", objects, caCache(t, in.realized(t, "shard", "s1", reference.ShardJoin)...), refs)
	_, _, err := mintFor(t, r, "s1")
	require.NoError(t, err)

	broken := copied.DeepCopy()
	broken.Data[reference.RootShardURLKey] = []byte("http://not-https")
	require.NoError(t, refs.Update(broken))
	_, _, err = mintFor(t, r, "s1")
	require.NoError(t, err, "the same resourceVersion is not parsed again")

	broken.ResourceVersion = "2"
	require.NoError(t, refs.Update(broken))
	_, _, err = mintFor(t, r, "s1")
	require.True(t, apierrors.IsConflict(err), "got %v", err)
	assert.ErrorContains(t, err, `key "root-shard-url" holds no https URL`)
}
