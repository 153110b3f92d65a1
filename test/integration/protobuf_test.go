package integration

import (
	"bytes"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kcp-setups/apiserver/cmd/apiserver/app"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// protobufMagic starts every object that Kubernetes' protobuf serializer writes, on the wire
// and in etcd.
var protobufMagic = []byte("k8s\x00")

// contentTypes records the Content-Type of every response a client receives.
type contentTypes struct {
	mu   sync.Mutex
	seen []response
}

type response struct{ request, contentType string }

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.seen = append(c.seen, response{req.Method + " " + req.URL.Path, resp.Header.Get("Content-Type")})
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestProtobufClient drives the group with a client that sends and accepts protobuf only, as
// kube-apiserver's own clients do with built-in kinds: every answer must be protobuf.
func TestProtobufClient(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ctx := t.Context()

	seen := &contentTypes{}
	cfg := rest.CopyConfig(s.config)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	cfg.WrapTransport = seen.wrap
	client, err := clientset.NewForConfig(cfg)
	require.NoError(t, err)
	rootShards := client.OperatorV1alpha1().RootShards(namespace)

	w, err := rootShards.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()

	// Resources are core/v1's message, with quantities: types of k8s.io/api in our protobuf.
	rs := newRootShard("root")
	rs.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}
	created, err := rootShards.Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, rs.Spec.Etcd.Endpoints, created.Spec.Etcd.Endpoints, "the spec came through protobuf both ways")
	assert.Equal(t, "2Gi", created.Spec.Resources.Limits.Memory().String())
	assert.EqualValues(t, 6443, created.Spec.External.Port, "defaulted by the server")
	expectEvent(t, w, watch.Added, "root")

	got, err := rootShards.Get(ctx, "root", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created, got)

	list, err := rootShards.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, *created, list.Items[0])

	got.Spec.ExtraArgs = []string{"--v=2"}
	updated, err := rootShards.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"--v=2"}, updated.Spec.ExtraArgs)
	expectEvent(t, w, watch.Modified, "root")

	// The kubeconfig subresource decodes a protobuf KubeconfigRequest and answers in protobuf.
	// This tier has neither users nor a host cluster with CAs, so nothing is signed (the e2e
	// tier mints through the same, protobuf-preferring clientset): a request that fails
	// validation gets its field path back, and a valid one gets through decoding, defaulting
	// and validation to the point where the requester's identity is needed.
	_, err = rootShards.CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{
		Spec: operatorv1alpha1.KubeconfigRequestSpec{Username: "alice", ExpirationSeconds: ptr.To[int64](1)},
	}, metav1.CreateOptions{})
	require.True(t, apierrors.IsInvalid(err), "got %v", err)
	require.Len(t, err.(apierrors.APIStatus).Status().Details.Causes, 1)
	assert.Equal(t, "spec.expirationSeconds", err.(apierrors.APIStatus).Status().Details.Causes[0].Field)
	_, err = rootShards.CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{
		Spec: operatorv1alpha1.KubeconfigRequestSpec{Username: "alice", Groups: []string{"team-a"}},
	}, metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "got %v", err)
	assert.Contains(t, err.Error(), "the request has no user")

	seen.mu.Lock()
	defer seen.mu.Unlock()
	require.Len(t, seen.seen, 7, "watch, create, get, list, update, kubeconfig twice: %v", seen.seen)
	for _, r := range seen.seen {
		assert.Contains(t, r.contentType, runtime.ContentTypeProtobuf, r.request)
	}
}

// TestStorageMediaTypeChange stores objects as JSON, as the server did before protobuf, and
// reads them with a server that stores protobuf: they decode unchanged, and the next write
// stores protobuf. A server set back to JSON reads the protobuf objects as well.
func TestStorageMediaTypeChange(t *testing.T) {
	etcd, err := embeddedetcd.Start(t.Context(), t.TempDir())
	require.NoError(t, err)
	defer etcd.Close()
	raw := rawEtcd(t, etcd)
	stored := func(t *testing.T, name string) []byte {
		resp, err := raw.Get(t.Context(), "/kcp-setups/operator.kcp.io/rootshards/"+namespace+"/"+name)
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
		return resp.Kvs[0].Value
	}
	asJSON := func(o *app.Options) { o.RecommendedOptions.Etcd.DefaultStorageMediaType = runtime.ContentTypeJSON }
	ctx := t.Context()

	s := startServer(t, external(etcd), asJSON)
	rootShards := s.client.OperatorV1alpha1().RootShards(namespace)
	written := map[string]*operatorv1alpha1.RootShard{}
	for _, name := range []string{"root", "other"} {
		written[name], err = rootShards.Create(ctx, newRootShard(name), metav1.CreateOptions{})
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(stored(t, name), []byte("{")), "written as JSON: %q", stored(t, name))
	}
	s.stop()

	s = startServer(t, external(etcd))
	rootShards = s.client.OperatorV1alpha1().RootShards(namespace)
	got, err := rootShards.Get(ctx, "root", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, written["root"], got, "a JSON object read by a protobuf server")
	list, err := rootShards.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 2)
	for _, item := range list.Items {
		assert.Equal(t, *written[item.Name], item)
	}
	got.Spec.ExtraArgs = []string{"--v=2"}
	updated, err := rootShards.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(stored(t, "root"), protobufMagic), "an update rewrites it as protobuf: %q", stored(t, "root"))
	assert.True(t, bytes.HasPrefix(stored(t, "other"), []byte("{")), "an object nobody wrote stays JSON")
	s.stop()

	s = startServer(t, external(etcd), asJSON)
	defer s.stop()
	got, err = s.client.OperatorV1alpha1().RootShards(namespace).Get(ctx, "root", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, updated, got, "a protobuf object read by a JSON server")
}
