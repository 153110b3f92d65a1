package kubeconfigrequest_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/apiserver/apiservertest"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfigrequest"
)

// fuzzNow is the clock of the fuzzed subresource: a whole second, so that a certificate's
// NotAfter is exactly now plus the granted lifetime.
var fuzzNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fuzzREST is the kubeconfig subresource of the RootShard team-a/root, with its CAs issued,
// where only "admin" may impersonate.
func fuzzREST(f *testing.F) *kubeconfigrequest.REST {
	certPEM, keyPEM := credentialstest.NewCA(f, "root-front-proxy-client-ca")
	serverCA, _ := credentialstest.NewCA(f, "root-server-ca")
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	require.NoError(f, secrets.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-front-proxy-client-ca", ResourceVersion: "1"},
		Data: map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}}))
	require.NoError(f, secrets.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-merged-ca-bundle", ResourceVersion: "1"},
		Data: map[string][]byte{"tls.crt": serverCA}}))
	rootShard := &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec:       operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}},
	}
	return &kubeconfigrequest.REST{
		Resource: operator.Resource("rootshards"),
		Resolve: func(_ context.Context, _, name string) (credentials.Target, error) {
			if name != "root" {
				return credentials.Target{}, apierrors.NewNotFound(operator.Resource("rootshards"), name)
			}
			return credentials.ForRootShard(rootShard), nil
		},
		CAs: &kubeconfigrequest.CASource{Secrets: corev1listers.NewSecretLister(secrets)},
		Authorizer: authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			if a.GetUser().GetName() == "admin" && a.GetVerb() == "impersonate" {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionNoOpinion, "", nil
		}),
		Now: func() time.Time { return fuzzNow },
	}
}

// FuzzKubeconfigRequest posts arbitrary bytes to rootshards/root/kubeconfig as alice or as
// admin, for real or as a dry run, through the server's decoder and the subresource's Create.
// Every refusal is a 4xx status whose invalid fields are named; every credential is for the
// identity asked, within the server's bounds, and the answer encodes.
func FuzzKubeconfigRequest(f *testing.F) {
	for _, body := range []string{
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","metadata":{"name":"root","namespace":"team-a"},"spec":{"expirationSeconds":600,"workspace":"root:team-a","username":"bob","groups":["system:masters"]}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"expirationSeconds":9223372036854775807}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"expirationSeconds":-9223372036854775807}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"expirationSeconds":599.5}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","metadata":{"name":"other"},"spec":{"groups":["", "a", "a"]}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"username":" ü ","workspace":"root:"}}`,
		`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"RootShard","spec":{}}`,
	} {
		f.Add([]byte(body), false, false)
		f.Add([]byte(body), true, true)
	}
	r := fuzzREST(f)
	maxSeconds := int64(kubeconfigrequest.DefaultMaxExpiration / time.Second)

	f.Fuzz(func(t *testing.T, body []byte, asAdmin, dryRun bool) {
		obj, _, err := apiservertest.Decode(runtime.ContentTypeJSON, "KubeconfigRequest", body)
		if err != nil {
			return // the handler's 400, before the subresource sees anything
		}
		requester := &user.DefaultInfo{Name: "alice", Groups: []string{"team-a", user.AllAuthenticated}}
		if asAdmin {
			requester = &user.DefaultInfo{Name: "admin", Groups: []string{user.AllAuthenticated}}
		}
		ctx := genericapirequest.WithUser(genericapirequest.WithNamespace(t.Context(), "team-a"), requester)
		opts := &metav1.CreateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		in := obj.(*operator.KubeconfigRequest)
		sent := in.DeepCopy()

		out, err := r.Create(ctx, "root", in, nil, opts)
		require.Equal(t, sent, in, "Create changed the request it was given")
		if err != nil {
			status, ok := err.(apierrors.APIStatus)
			require.True(t, ok, "not an API status: %v", err)
			code := status.Status().Code
			require.True(t, code >= 400 && code < 500, "a %d for %s: %v", code, body, err)
			if code == http.StatusUnprocessableEntity {
				require.NotNil(t, status.Status().Details)
				for _, c := range status.Status().Details.Causes {
					require.NotEmpty(t, c.Field, "a cause without a field: %v", c)
				}
			}
			return
		}

		got := out.(*operator.KubeconfigRequest)
		require.Equal(t, "root", got.Name)
		require.Equal(t, "team-a", got.Namespace)
		require.Empty(t, validation.ValidateKubeconfigRequest(got), "the answer is not a valid request")
		seconds := *got.Spec.ExpirationSeconds
		require.True(t, seconds >= 600 && seconds <= maxSeconds, "granted %d seconds", seconds)
		_, err = apiservertest.Encode(runtime.ContentTypeJSON, got)
		require.NoError(t, err, "the answer does not encode")
		if dryRun {
			require.Empty(t, got.Status.Kubeconfig, "a dry run minted")
			return
		}

		cfg, err := clientcmd.Load([]byte(got.Status.Kubeconfig))
		require.NoError(t, err)
		block, _ := pem.Decode(cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].ClientCertificateData)
		require.NotNil(t, block)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		require.Equal(t, fuzzNow.Add(time.Duration(seconds)*time.Second), cert.NotAfter.UTC())
		wantUser := requester.Name
		if sent.Spec.Username != "" {
			wantUser = sent.Spec.Username
		}
		require.Equal(t, wantUser, cert.Subject.CommonName)
	})
}
