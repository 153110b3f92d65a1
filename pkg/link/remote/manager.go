package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/link"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// State is what the remote server knows of the link of one bootstrap Secret, for the
// consumers that name it (their LinkReady condition).
type State struct {
	// Connected is true while a bundle stream is open and has spoken.
	Connected bool
	// Error is the last failure since the stream last connected: the bootstrap Secret
	// unreadable, the listener unreachable or refusing, a write of the bundles Secret, a
	// renewal. Empty when there was none.
	Error string
	// Revision is the revision of the Bundles the bundles Secret holds, as last written or
	// found there; empty before any.
	Revision string
	// Since is when Connected last changed.
	Since time.Time
}

// Manager holds the remote server's links: for each bootstrap Secret wanted, one Client and
// one bundle stream, whose Bundles it writes into the bundles Secret; it renews the client
// certificate at two thirds of its life. A listener down or refusing changes nothing
// already written: the link is retried, and its State says why it is not connected.
type Manager struct {
	kube kubernetes.Interface
	now  func() time.Time

	// Backoff is the wait between two attempts of a link that failed before streaming (the
	// bootstrap Secret unreadable or not valid) and between two renewals that failed.
	Backoff wait.Backoff
	// Recheck is how often a link reads its bootstrap Secret again, to follow a new copy of
	// it.
	Recheck time.Duration
	// WriteAttempts are the attempts at writing a Bundles received before the link waits
	// for the next one (each reconnection of the stream sends the current one first).
	WriteAttempts wait.Backoff
	// configure, when set, adjusts each Client made (the tests' heartbeat and backoff).
	configure func(*Client)

	mu    sync.Mutex
	links map[types.NamespacedName]*held
	// listeners are told of each link whose State's Connected or Error changed.
	listeners []func(namespace, name string)
}

// OnChange registers f, told of each link whose State's Connected or Error changed (the
// controllers' LinkReady follows it).
func (m *Manager) OnChange(f func(namespace, name string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.listeners = append(m.listeners, f)
}

// held is a link the Manager runs.
type held struct {
	key    types.NamespacedName
	stop   context.CancelFunc
	done   chan struct{}
	client *Client
	state  State
	// trust and clientCert are the PEM link CA trust and client certificate of the session's
	// Client (LinkTrust).
	trust, clientCert []byte
}

// NewManager is a Manager that reads and writes Secrets through kube.
func NewManager(kube kubernetes.Interface) *Manager {
	return &Manager{kube: kube, now: time.Now, Backoff: DefaultBackoff, WriteAttempts: DefaultWriteAttempts, Recheck: time.Minute, links: map[types.NamespacedName]*held{}}
}

// Set makes the wanted bootstrap Secrets the ones linked: a link starts for each new one,
// within ctx, and stops for each no longer wanted (what it wrote stays).
func (m *Manager) Set(ctx context.Context, wanted []types.NamespacedName) {
	want := map[types.NamespacedName]bool{}
	for _, k := range wanted {
		want[k] = true
	}
	m.mu.Lock()
	var stopped []*held
	for k, h := range m.links {
		if !want[k] {
			h.stop()
			stopped = append(stopped, h)
			delete(m.links, k)
		}
	}
	for k := range want {
		if _, ok := m.links[k]; ok {
			continue
		}
		linkCtx, stop := context.WithCancel(ctx)
		h := &held{key: k, stop: stop, done: make(chan struct{})}
		m.links[k] = h
		go func() {
			defer close(h.done)
			m.run(linkCtx, k, h)
		}()
	}
	m.mu.Unlock()
	for _, h := range stopped {
		<-h.done
	}
}

// Follow keeps the links those wanted names until ctx is done: it calls Set with wanted()
// now, at each signal of changed (the consumers' informer says a consumer changed), and
// every resync, then stops every link.
func (m *Manager) Follow(ctx context.Context, wanted func() []types.NamespacedName, changed <-chan struct{}, resync time.Duration) {
	defer m.Stop()
	tick := time.NewTicker(resync)
	defer tick.Stop()
	for {
		m.Set(ctx, wanted())
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// Stop stops every link and waits for them.
func (m *Manager) Stop() { m.Set(context.Background(), nil) }

// State is the State of the link of the bootstrap Secret namespace/name, if it is held.
func (m *Manager) State(namespace, name string) (State, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.links[types.NamespacedName{Namespace: namespace, Name: name}]
	if !ok {
		return State{}, false
	}
	return h.state, true
}

// LinkTrust is what the link of the bootstrap Secret key trusts the listener by (the PEM
// link CA bundle, linkpki.LinkTrust) and the client certificate it presents (PEM, the leaf
// first), as its current session resolved them: what the consumers that name it report of
// the CA link, so that a rotation of the link CA waits for it (docs/rotation.md). False while
// the link has no session.
func (m *Manager) LinkTrust(key types.NamespacedName) (trust, client []byte, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.links[key]
	if !ok || h.client == nil {
		return nil, nil, false
	}
	return h.trust, h.clientCert, true
}

// ErrNoLink is the error of Client for a bootstrap Secret no consumer names, or whose link
// has no client yet (its Secret missing or not valid: its State says why).
var ErrNoLink = errors.New("no link of this bootstrap Secret is up")

// Client is the Client of the link of the bootstrap Secret key.
func (m *Manager) Client(key types.NamespacedName) (*Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.links[key]
	if !ok || h.client == nil {
		return nil, fmt.Errorf("the bootstrap Secret %s: %w", key, ErrNoLink)
	}
	return h.client, nil
}

// Signer is the Client of the link of the bootstrap Secret key as the Issuer signs with it.
func (m *Manager) Signer(key types.NamespacedName) (Signer, error) {
	c, err := m.Client(key)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// update changes the state of h under the lock.
func (m *Manager) update(h *held, change func(*State)) {
	m.mu.Lock()
	was, wasError := h.state.Connected, h.state.Error
	change(&h.state)
	if h.state.Connected != was {
		h.state.Since = m.now()
	}
	var tell []func(namespace, name string)
	if h.state.Connected != was || h.state.Error != wasError {
		tell = slices.Clone(m.listeners)
	}
	m.mu.Unlock()
	for _, f := range tell {
		f(h.key.Namespace, h.key.Name)
	}
}

func (m *Manager) failed(h *held, err error) {
	m.update(h, func(s *State) { s.Error = err.Error() })
}

// run runs the link of the bootstrap Secret key until ctx is done: one session after
// another, each on the bootstrap Secret as it is then.
func (m *Manager) run(ctx context.Context, key types.NamespacedName, h *held) {
	logger := klog.FromContext(ctx).WithValues("bootstrapSecret", key)
	backoff := m.Backoff
	for ctx.Err() == nil {
		err := m.session(klog.NewContext(ctx, logger), key, h)
		if ctx.Err() != nil {
			break
		}
		if err == nil {
			backoff = m.Backoff
			continue
		}
		logger.Info("The link is down", "err", err)
		m.update(h, func(s *State) { s.Connected, s.Error = false, err.Error() })
		select {
		case <-ctx.Done():
		case <-time.After(backoff.Step()):
		}
	}
	m.mu.Lock()
	if h.client != nil {
		h.client.Close()
	}
	m.mu.Unlock()
}

// session runs one Client of the bootstrap Secret as it is now, and its stream, until the
// client certificate was renewed or the Secret changed (nil: a new session follows at once),
// or ctx is done; an error when the Secret cannot be read or used.
func (m *Manager) session(ctx context.Context, key types.NamespacedName, h *held) error {
	secret, err := m.kube.CoreV1().Secrets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the bootstrap Secret: %w", err)
	}
	// What the stream delivered before: the link CA bundle the link trusts, and the revision.
	bundles, err := m.kube.CoreV1().Secrets(key.Namespace).Get(ctx, linkpki.BundlesName(key.Name), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		bundles = nil
	case err != nil:
		return fmt.Errorf("reading the bundles Secret: %w", err)
	}
	b, err := linkpki.ResolveLinkedBootstrap(secret, bundles, m.now())
	if err != nil {
		return err
	}
	c, err := NewClient(b)
	if err != nil {
		return err
	}
	m.readRevision(secret, bundles, h)
	if m.configure != nil {
		m.configure(c)
	}
	m.mu.Lock()
	old := h.client
	h.client, h.trust, h.clientCert = c, b.Trust.PEM, b.Client.PEM.Cert
	m.mu.Unlock()
	if old != nil {
		old.Close()
	}

	streamCtx, stopStream := context.WithCancel(ctx)
	streaming := make(chan struct{})
	// got holds the last Bundles the bundles Secret holds, for the session to follow the
	// link CA by.
	got := make(chan link.Bundles, 1)
	go func() {
		defer close(streaming)
		c.Stream(streamCtx, func(bundles link.Bundles) {
			if m.received(streamCtx, secret, h, bundles) {
				select {
				case <-got:
				default:
				}
				got <- bundles
			}
		}, func(err error) {
			m.update(h, func(s *State) {
				s.Connected = err == nil
				if err != nil {
					s.Error = err.Error()
				} else {
					s.Error = ""
				}
			})
		})
	}()
	defer func() { stopStream(); <-streaming }()
	return m.renewWhenDue(ctx, c, secret, b, h, got)
}
