package kubeconfigrequest

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
)

var rootShard = &operatorv1alpha1.RootShard{
	ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
	Spec:       operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}},
}

// warnings records the warnings a request gets.
type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// newREST is the subresource of root shards over a cache holding root's CAs (issued unless
// pending), where only "admin" may impersonate.
func newREST(t testing.TB, pending bool) *REST {
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if !pending {
		certPEM, keyPEM := credentialstest.NewCA(t, "root-front-proxy-client-ca")
		serverCA, _ := credentialstest.NewCA(t, "root-server-ca")
		require.NoError(t, secrets.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-front-proxy-client-ca", ResourceVersion: "1"},
			Data: map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}}))
		require.NoError(t, secrets.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-merged-ca-bundle", ResourceVersion: "1"},
			Data: map[string][]byte{"tls.crt": serverCA}}))
	}
	authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "admin" && a.GetVerb() == "impersonate" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	return &REST{
		Resource: operator.Resource("rootshards"),
		Resolve: func(_ context.Context, namespace, name string) (credentials.Target, error) {
			if name != "root" {
				return credentials.Target{}, apierrors.NewNotFound(operator.Resource("rootshards"), name)
			}
			return credentials.ForRootShard(rootShard), nil
		},
		CAs:        &CASource{Secrets: corev1listers.NewSecretLister(secrets)},
		Authorizer: authz,
	}
}

// request is the context of a request by user in team-a, and where its warnings go.
func request(t *testing.T, name string, groups ...string) (context.Context, *warnings) {
	w := &warnings{}
	ctx := genericapirequest.WithNamespace(t.Context(), "team-a")
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: name, Groups: append(groups, user.AllAuthenticated)})
	return warning.WithWarningRecorder(ctx, w), w
}

func mint(t *testing.T, r *REST, ctx context.Context, spec operator.KubeconfigRequestSpec, opts ...string) (*operator.KubeconfigRequest, error) {
	out, err := r.Create(ctx, "root", &operator.KubeconfigRequest{Spec: spec}, nil, &metav1.CreateOptions{DryRun: opts})
	if err != nil {
		return nil, err
	}
	return out.(*operator.KubeconfigRequest), nil
}

func certOf(t *testing.T, kubeconfig string) *x509.Certificate {
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	require.NoError(t, err)
	block, _ := pem.Decode(cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].ClientCertificateData)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

func TestMintForTheRequester(t *testing.T) {
	ctx, w := request(t, "alice", "team-a")
	ctx = audit.WithAuditContext(ctx)
	before := time.Now()
	out, err := mint(t, newREST(t, false), ctx, operator.KubeconfigRequestSpec{})
	require.NoError(t, err)
	assert.Empty(t, *w)
	assert.EqualValues(t, 3600, *out.Spec.ExpirationSeconds, "default expiration")
	assert.Equal(t, "root", out.Name)
	assert.Equal(t, "team-a", out.Namespace)

	cert := certOf(t, out.Status.Kubeconfig)
	assert.Equal(t, "alice", cert.Subject.CommonName)
	assert.Equal(t, []string{"team-a"}, cert.Subject.Organization)
	assert.WithinDuration(t, before.Add(time.Hour), cert.NotAfter, 2*time.Second)
	assert.True(t, out.Status.ExpirationTimestamp.Time.Equal(cert.NotAfter), "status.expirationTimestamp is the certificate's NotAfter")
	require.NotNil(t, out.Status.Certificate)
	assert.Equal(t, cert.SerialNumber.String(), out.Status.Certificate.SerialNumber)
	assert.Equal(t, "CN=alice,O=team-a", out.Status.Certificate.Subject)
	sum := sha256.Sum256(cert.Raw)
	annotations := audit.AuditContextFrom(ctx).GetEventAnnotations()
	assert.Equal(t, hex.EncodeToString(sum[:]), annotations[AuditFingerprint], "the audit log records the certificate's fingerprint")
	assert.Equal(t, out.Status.Certificate.SHA256Fingerprint, annotations[AuditFingerprint])
	assert.Equal(t, cert.SerialNumber.String(), annotations[AuditSerial])
	for _, v := range annotations {
		assert.NotContains(t, v, "PRIVATE KEY", "no key in the audit log")
	}

	cfg, err := clientcmd.Load([]byte(out.Status.Kubeconfig))
	require.NoError(t, err)
	assert.Equal(t, "https://root-kcp.team-a.svc.cluster.local:6443/clusters/root", cfg.Clusters[cfg.Contexts["default"].Cluster].Server)
	assert.Equal(t, "https://root-kcp.team-a.svc.cluster.local:6443", cfg.Clusters[cfg.Contexts["base"].Cluster].Server)
	assert.Contains(t, cfg.Contexts, "shard-base")
	assert.Equal(t, "default", cfg.CurrentContext)
}

func TestExpirationBounds(t *testing.T) {
	r := newREST(t, false)
	ctx, w := request(t, "alice")
	_, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](300)})
	require.True(t, apierrors.IsInvalid(err), "got %v", err)
	assert.ErrorContains(t, err, "spec.expirationSeconds")

	r.MaxExpiration = 2 * time.Hour
	out, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{ExpirationSeconds: ptr[int64](10 * 24 * 3600)})
	require.NoError(t, err)
	assert.EqualValues(t, 7200, *out.Spec.ExpirationSeconds, "clamped to the maximum")
	assert.WithinDuration(t, time.Now().Add(2*time.Hour), certOf(t, out.Status.Kubeconfig).NotAfter, 2*time.Second)
	require.Len(t, *w, 1, "a warning says so")
	assert.Contains(t, (*w)[0], "above the server's maximum")
}

func TestIdentityNeedsImpersonate(t *testing.T) {
	r := newREST(t, false)
	ctx, _ := request(t, "alice", "team-a")
	_, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{Groups: []string{"system:masters"}})
	require.True(t, apierrors.IsForbidden(err), "system:masters without impersonate: %v", err)
	_, err = mint(t, r, ctx, operator.KubeconfigRequestSpec{Username: "bob"})
	require.True(t, apierrors.IsForbidden(err), "another user without impersonate: %v", err)

	ctx, _ = request(t, "admin")
	out, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{Username: "bob", Groups: []string{"system:masters"}})
	require.NoError(t, err)
	cert := certOf(t, out.Status.Kubeconfig)
	assert.Equal(t, "bob", cert.Subject.CommonName)
	assert.Equal(t, []string{"system:masters"}, cert.Subject.Organization)
}

func TestBodyMustMatchTheURL(t *testing.T) {
	r := newREST(t, false)
	ctx, _ := request(t, "alice")
	for _, meta := range []metav1.ObjectMeta{{Name: "other"}, {Namespace: "team-b"}} {
		_, err := r.Create(ctx, "root", &operator.KubeconfigRequest{ObjectMeta: meta}, nil, &metav1.CreateOptions{})
		require.True(t, apierrors.IsBadRequest(err), "%+v: got %v", meta, err)
	}
	_, err := r.Create(ctx, "root", &operator.KubeconfigRequest{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"}}, nil, &metav1.CreateOptions{})
	require.NoError(t, err, "a body that names the URL's object is fine")
}

func TestDryRunMintsNothing(t *testing.T) {
	r := newREST(t, false)
	ctx, _ := request(t, "alice")
	in := &operator.KubeconfigRequest{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := r.Create(ctx, "root", in, nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	got := out.(*operator.KubeconfigRequest)
	assert.Empty(t, got.Status.Kubeconfig)
	assert.Nil(t, got.Status.Certificate)
	assert.Nil(t, got.ManagedFields, "managedFields are cleared")

	_, err = mint(t, r, ctx, operator.KubeconfigRequestSpec{Groups: []string{"system:masters"}}, metav1.DryRunAll)
	assert.True(t, apierrors.IsForbidden(err), "a dry run still checks the identity")
}

func TestNotIssuedYetIsAConflict(t *testing.T) {
	ctx, _ := request(t, "alice")
	_, err := mint(t, newREST(t, true), ctx, operator.KubeconfigRequestSpec{})
	require.True(t, apierrors.IsConflict(err), "got %v", err)
	assert.ErrorContains(t, err, "not issued yet")

	r := newREST(t, false)
	r.CAs.Synced = func() bool { return false }
	_, err = mint(t, r, ctx, operator.KubeconfigRequestSpec{})
	assert.True(t, apierrors.IsServiceUnavailable(err), "got %v", err)

	_, err = r.Create(ctx, "missing", &operator.KubeconfigRequest{}, nil, &metav1.CreateOptions{})
	assert.True(t, apierrors.IsNotFound(err), "got %v", err)
}

// TestMintForAFrontProxyTrustsItsCABundle checks that a kubeconfig toward a FrontProxy with
// caBundleSecretRef trusts the FrontProxy's own merged bundle, which holds the CA of a
// public serving issuer, and one toward a FrontProxy without it the RootShard's.
func TestMintForAFrontProxyTrustsItsCABundle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		caBundle *corev1.LocalObjectReference
		want     string
	}{
		{name: "caBundleSecretRef", caBundle: &corev1.LocalObjectReference{Name: "public-ca"}, want: "FRONT-PROXY-MERGED-CA-BUNDLE\n"},
		{name: "none", want: "ROOT-MERGED-CA-BUNDLE\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
				Spec: operatorv1alpha1.FrontProxySpec{CABundleSecretRef: tc.caBundle}}
			r := newREST(t, false)
			secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			signer, err := r.CAs.Secrets.Secrets("team-a").Get("root-front-proxy-client-ca")
			require.NoError(t, err)
			require.NoError(t, secrets.Add(signer))
			for name, data := range map[string]string{"root-merged-ca-bundle": "ROOT-MERGED-CA-BUNDLE\n", "root-edge-merged-ca-bundle": "FRONT-PROXY-MERGED-CA-BUNDLE\n"} {
				require.NoError(t, secrets.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"},
					Data: map[string][]byte{"tls.crt": []byte(data)}}))
			}
			r.CAs = &CASource{Secrets: corev1listers.NewSecretLister(secrets)}
			r.Resource = operator.Resource("frontproxies")
			r.Resolve = func(context.Context, string, string) (credentials.Target, error) {
				return credentials.ForFrontProxy(fp, rootShard), nil
			}

			ctx, _ := request(t, "alice")
			out, err := mint(t, r, ctx, operator.KubeconfigRequestSpec{})
			require.NoError(t, err)
			cfg, err := clientcmd.Load([]byte(out.Status.Kubeconfig))
			require.NoError(t, err)
			for name, cluster := range cfg.Clusters {
				assert.Equal(t, tc.want, string(cluster.CertificateAuthorityData), name)
			}
			assert.Equal(t, "https://kcp.example.com:443", cfg.Clusters[cfg.Contexts["base"].Cluster].Server)
		})
	}
}
