package remote

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kcp-setups/apiserver/pkg/link"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// linkHome is a home whose stream sends what the test pushes, and whose renew route signs.
type linkHome struct {
	*home
	mu sync.Mutex
	// next are the messages each new stream sends first, then what is pushed.
	current link.StreamMessage
	push    chan link.StreamMessage
	// serials are the client certificates' serial numbers, per stream opened.
	serials []string
	// streams are closed when a stream ends.
	ended chan struct{}
}

func newLinkHome(t *testing.T) *linkHome {
	l := &linkHome{push: make(chan link.StreamMessage), ended: make(chan struct{}, 16), current: bundles("1")}
	l.home = newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case link.BundlesPath:
			l.mu.Lock()
			l.serials = append(l.serials, r.TLS.PeerCertificates[0].SerialNumber.String())
			first := l.current
			l.mu.Unlock()
			defer func() { l.ended <- struct{}{} }()
			send(w, first)
			for {
				select {
				case <-r.Context().Done():
					return
				case m := <-l.push:
					send(w, m)
				}
			}
		case link.RenewPath:
			var req link.SignRequest
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			csr, err := x509.ParseCertificateRequest(pemBytes(t, req.Request))
			require.NoError(t, err)
			require.NoError(t, link.CheckRenewal(csr, testLink))
			tmpl := clientTemplate(t, time.Now().Add(-time.Minute), time.Now().Add(2*time.Hour))
			writeJSON(w, link.SignResponse{Certificate: l.ca.sign(t, tmpl, csr.PublicKey), CA: l.ca.pem})
		default:
			http.NotFound(w, r)
		}
	}))
	return l
}

// managed runs a Manager of the bootstrap Secret of h, in a fake cluster that holds it and
// objects, until the test ends.
func (h *linkHome) managed(t *testing.T, objects ...runtime.Object) (*corev1.Secret, *fake.Clientset, types.NamespacedName, *Manager) {
	bootstrap := h.bootstrap()
	kube := fake.NewClientset(append([]runtime.Object{bootstrap}, objects...)...)
	key := types.NamespacedName{Namespace: bootstrap.Namespace, Name: bootstrap.Name}
	return bootstrap, kube, key, manage(t, kube, key)
}

// manage runs a Manager of kube over the bootstrap Secret until the test ends.
func manage(t *testing.T, kube *fake.Clientset, key types.NamespacedName) *Manager {
	m := NewManager(kube)
	m.Backoff = wait.Backoff{Duration: 20 * time.Millisecond, Factor: 1, Steps: 1 << 30}
	m.Recheck = 50 * time.Millisecond
	m.WriteAttempts = wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1, Steps: 2}
	m.configure = func(c *Client) { c.Backoff = m.Backoff }
	m.Set(context.Background(), []types.NamespacedName{key})
	t.Cleanup(m.Stop)
	return m
}

// waitState waits until the State of the link key is as check wants.
func waitState(t *testing.T, m *Manager, key types.NamespacedName, check func(*assert.CollectT, State)) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, ok := m.State(key.Namespace, key.Name)
		assert.True(c, ok)
		check(c, st)
	}, 10*time.Second, 10*time.Millisecond)
}

func bundleWrites(kube *fake.Clientset) int {
	n := 0
	for _, a := range kube.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok && p.GetResource().Resource == "secrets" && strings.HasSuffix(p.GetName(), "-bundles") {
			n++
		}
	}
	return n
}

// TestManagerWritesWhatTheStreamSends: each new revision is written into the bundles
// Secret, owned by the bootstrap Secret; the same revision again writes nothing.
func TestManagerWritesWhatTheStreamSends(t *testing.T) {
	h := newLinkHome(t)
	bootstrap, kube, key, m := h.managed(t)

	bundlesSecret := func(c *assert.CollectT) *corev1.Secret {
		s, err := kube.CoreV1().Secrets("remote").Get(context.Background(), linkpki.BundlesName(bootstrap.Name), metav1.GetOptions{})
		if !assert.NoError(c, err) {
			return nil
		}
		return s
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s := bundlesSecret(c)
		if s == nil {
			return
		}
		assert.Equal(c, "1", s.Annotations[linkpki.RevisionAnnotation])
		assert.Equal(c, []byte("https://root"), s.Data["shard-join.root-shard-url"])
		assert.Equal(c, []byte("ca"), s.Data[linkpki.BundlesLinkCAKey])
		assert.Equal(c, types.UID("uid-bootstrap"), s.OwnerReferences[0].UID)
		st, _ := m.State(key.Namespace, key.Name)
		assert.Equal(c, State{Connected: true, Revision: "1", Since: st.Since}, st)
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, bundleWrites(kube))

	h.push <- bundles("1")
	h.push <- link.StreamMessage{Type: link.HeartbeatMessage}
	h.push <- bundles("2")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if s := bundlesSecret(c); s != nil {
			assert.Equal(c, "2", s.Annotations[linkpki.RevisionAnnotation])
		}
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 2, bundleWrites(kube), "the same revision again writes nothing")
}

// TestManagerKeepsWhatItHasWhenTheListenerIsDown: the listener gone, the bundles Secret
// stays, the State says the link is down and why, and the link is retried.
func TestManagerKeepsWhatItHasWhenTheListenerIsDown(t *testing.T) {
	h := newLinkHome(t)
	bootstrap, kube, key, m := h.managed(t)
	waitState(t, m, key, func(c *assert.CollectT, st State) {
		assert.True(c, st.Connected)
		assert.Equal(c, "1", st.Revision)
	})
	told := make(chan types.NamespacedName, 16)
	m.OnChange(func(namespace, name string) { told <- types.NamespacedName{Namespace: namespace, Name: name} })

	h.CloseClientConnections()
	h.Close()
	select {
	case got := <-told:
		assert.Equal(t, key, got, "OnChange is told of the link that went down")
	case <-time.After(5 * time.Second):
		t.Fatal("OnChange was not told that the link went down")
	}
	waitState(t, m, key, func(c *assert.CollectT, st State) {
		assert.False(c, st.Connected)
		assert.NotEmpty(c, st.Error)
		assert.Equal(c, "1", st.Revision)
	})
	s, err := kube.CoreV1().Secrets("remote").Get(context.Background(), linkpki.BundlesName(bootstrap.Name), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "1", s.Annotations[linkpki.RevisionAnnotation])
	_, err = m.Client(key)
	assert.NoError(t, err, "the client stays, for the issuer to try and fail as an outage")
}

// TestManagerStopsALinkNoLongerWanted: a bootstrap Secret no consumer names any more has its
// stream closed and no State.
func TestManagerStopsALinkNoLongerWanted(t *testing.T) {
	h := newLinkHome(t)
	_, _, key, m := h.managed(t)
	waitState(t, m, key, func(c *assert.CollectT, st State) { assert.True(c, st.Connected) })
	m.Set(context.Background(), nil)
	select {
	case <-h.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open")
	}
	_, ok := m.State(key.Namespace, key.Name)
	assert.False(t, ok)
	_, err := m.Client(key)
	assert.ErrorIs(t, err, ErrNoLink)
}

// TestManagerLeavesAnotherSecretAlone: a Secret of the bundles Secret's name that the
// bootstrap Secret does not own is not written.
func TestManagerLeavesAnotherSecretAlone(t *testing.T) {
	h := newLinkHome(t)
	bootstrap := h.bootstrap()
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: linkpki.BundlesName(bootstrap.Name), Namespace: "remote",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: bootstrap.Name, UID: "uid-of-a-deleted-one"}}}}
	_, kube, key, m := h.managed(t, foreign)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, _ := m.State(key.Namespace, key.Name)
		assert.Contains(c, st.Error, "not the bundles Secret")
	}, 10*time.Second, 20*time.Millisecond)
	assert.Zero(t, bundleWrites(kube))
}

// TestManagerSaysWhatItHeldBeforeARestart: started with the listener down, a link's State
// has the revision of the bundles Secret it wrote before.
func TestManagerSaysWhatItHeldBeforeARestart(t *testing.T) {
	h := newLinkHome(t)
	bootstrap := h.bootstrap()
	h.Close()
	written := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: linkpki.BundlesName(bootstrap.Name), Namespace: "remote",
		Annotations:     map[string]string{linkpki.RevisionAnnotation: "41"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: bootstrap.Name, UID: bootstrap.UID}}}}
	_, _, key, m := h.managed(t, written)
	waitState(t, m, key, func(c *assert.CollectT, st State) {
		assert.False(c, st.Connected)
		assert.NotEmpty(c, st.Error)
		assert.Equal(c, "41", st.Revision)
	})
}

// TestManagerFollowsTheWantedNames: Follow starts the links named, and stops one that is
// named no more once told of a change.
func TestManagerFollowsTheWantedNames(t *testing.T) {
	h := newLinkHome(t)
	bootstrap := h.bootstrap()
	kube := fake.NewClientset(bootstrap)
	key := types.NamespacedName{Namespace: bootstrap.Namespace, Name: bootstrap.Name}
	m := NewManager(kube)
	var mu sync.Mutex
	wanted := []types.NamespacedName{key}
	changed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Follow(ctx, func() []types.NamespacedName {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(wanted)
		}, changed, time.Hour)
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitState(t, m, key, func(c *assert.CollectT, st State) { assert.True(c, st.Connected) })

	mu.Lock()
	wanted = nil
	mu.Unlock()
	changed <- struct{}{}
	select {
	case <-h.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open")
	}
	require.Eventually(t, func() bool { _, ok := m.State(key.Namespace, key.Name); return !ok }, 5*time.Second, 10*time.Millisecond)
}

// TestManagerWithoutBootstrap: a bootstrap Secret that is not there is a link down that
// says why, with no client for the issuer.
func TestManagerWithoutBootstrap(t *testing.T) {
	kube := fake.NewClientset()
	key := types.NamespacedName{Namespace: "remote", Name: "missing"}
	m := manage(t, kube, key)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, ok := m.State(key.Namespace, key.Name)
		assert.True(c, ok)
		assert.Contains(c, st.Error, "reading the bootstrap Secret")
	}, 5*time.Second, 10*time.Millisecond)
	_, err := m.Client(key)
	assert.ErrorIs(t, err, ErrNoLink)
}
