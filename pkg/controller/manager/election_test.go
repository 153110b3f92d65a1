package manager

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/flowcontrol"
	componentbaseconfig "k8s.io/component-base/config"
)

const (
	testLeaseNamespace = "kube-system"
	testLeaseName      = "kcp-setups-controllers"
	testIdentity       = "replica-a"
)

// leaseHolders is a fake clientset whose Lease writes are recorded, holder by holder.
type leaseHolders struct {
	*fake.Clientset
	mu      sync.Mutex
	holders []string
}

func newLeaseHolders() *leaseHolders {
	l := &leaseHolders{Clientset: fake.NewClientset()}
	l.PrependReactor("*", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		// Creates and updates; a get has no object.
		if w, ok := action.(interface{ GetObject() runtime.Object }); ok {
			lease := w.GetObject().(*coordinationv1.Lease)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.holders = append(l.holders, holder(lease))
		}
		return false, nil, nil
	})
	return l
}

// written is every holder identity written to the Lease, in order.
func (l *leaseHolders) written() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.holders...)
}

// holderNow is the holder of the stored Lease, or "absent".
func (l *leaseHolders) holderNow() string {
	lease, err := l.CoordinationV1().Leases(testLeaseNamespace).Get(context.Background(), testLeaseName, metav1.GetOptions{})
	if err != nil {
		return "absent"
	}
	return holder(lease)
}

func holder(lease *coordinationv1.Lease) string {
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// testElector is an elector on the fake Lease with short durations, so that the election
// and the release take milliseconds.
func testElector(t *testing.T, leases *leaseHolders, start startFunc, backoff time.Duration) *elector {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, testLeaseNamespace, testLeaseName,
		leases.CoreV1(), leases.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: testIdentity})
	require.NoError(t, err)
	return &elector{
		config: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:       true,
			LeaseDuration:     metav1.Duration{Duration: 3 * time.Second},
			RenewDeadline:     metav1.Duration{Duration: 2 * time.Second},
			RetryPeriod:       metav1.Duration{Duration: 100 * time.Millisecond},
			ResourceLock:      resourcelock.LeasesResourceLock,
			ResourceNamespace: testLeaseNamespace,
			ResourceName:      testLeaseName,
		},
		lock:    lock,
		start:   start,
		status:  NewStatus(),
		backoff: backoff,
	}
}

// runElector runs e until the test ends, and checks that it returns once its context is done.
func runElector(t *testing.T, e *elector) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the elector did not return once its context was done")
		}
	})
	return cancel
}

// TestFailedStartReleasesTheLease: the controllers fail to start after the lease is won. The
// term ends: the Lease is released (its holder emptied) rather than renewed with nothing
// running, and the readyz check "controllers" fails with the start error.
func TestFailedStartReleasesTheLease(t *testing.T) {
	leases := newLeaseHolders()
	startErr := errors.New("setting up the RootShard controller: no cert-manager")
	var heldAtStart []string
	var mu sync.Mutex
	e := testElector(t, leases, func(ctx context.Context, started func()) error {
		mu.Lock()
		defer mu.Unlock()
		heldAtStart = append(heldAtStart, leases.holderNow())
		return startErr
	}, time.Hour)
	runElector(t, e)

	require.Eventually(t, func() bool {
		w := leases.written()
		return len(w) >= 2 && w[len(w)-1] == ""
	}, 10*time.Second, 10*time.Millisecond, "the Lease was not released; holders written: %q", leases.written())
	// The elector renews at once after winning, which may come before the release; after
	// it, several retry periods pass without a write: nothing renews the lease.
	released := leases.written()
	assert.Equal(t, testIdentity, released[0])
	for _, h := range released[:len(released)-1] {
		assert.Equal(t, testIdentity, h)
	}
	time.Sleep(5 * e.config.RetryPeriod.Duration)
	assert.Equal(t, released, leases.written(), "the lease is not written after its release")
	assert.Equal(t, "", leases.holderNow())
	lease, err := leases.CoordinationV1().Leases(testLeaseNamespace).Get(context.Background(), testLeaseName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(1), *lease.Spec.LeaseDurationSeconds, "a released lease expires at once")
	mu.Lock()
	assert.Equal(t, []string{testIdentity}, heldAtStart, "the controllers start once the lease is held, and not again before the backoff")
	mu.Unlock()

	assert.Equal(t, "controllers", e.status.Name())
	err = e.status.Check(nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, startErr)
	assert.Contains(t, err.Error(), "the controllers failed to start: setting up the RootShard controller: no cert-manager")

	// As the server serves it: /readyz/controllers names the error, /readyz fails.
	mux := http.NewServeMux()
	healthz.InstallReadyzHandler(mux, e.status)
	for path, want := range map[string]string{
		"/readyz/controllers": "the controllers failed to start: setting up the RootShard controller: no cert-manager",
		"/readyz":             "[-]controllers failed",
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?verbose", nil))
		assert.Equal(t, http.StatusInternalServerError, rec.Code, path)
		assert.Contains(t, rec.Body.String(), want, path)
	}
}

// TestStartedControllersKeepTheLease: controllers that start hold the lease, renewed, and
// the readyz check passes; the lease is released when the server stops.
func TestStartedControllersKeepTheLease(t *testing.T) {
	leases := newLeaseHolders()
	running := make(chan struct{})
	e := testElector(t, leases, func(ctx context.Context, started func()) error {
		started()
		close(running)
		<-ctx.Done()
		return nil
	}, time.Hour)
	e.status.failed(errors.New("an earlier start failed"))
	stop := runElector(t, e)

	select {
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("the controllers did not start")
	}
	assert.NoError(t, e.status.Check(nil), "a start that succeeds clears the failure")
	// Several renewals, each by this replica.
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, testIdentity, leases.holderNow())
	for _, h := range leases.written() {
		assert.Equal(t, testIdentity, h)
	}

	stop()
	require.Eventually(t, func() bool { return leases.holderNow() == "" }, 10*time.Second, 10*time.Millisecond,
		"the lease is released when the server stops")
	assert.NoError(t, e.status.Check(nil))
}

// TestFailedStartCampaignsAgain: after the backoff, the replica campaigns again; a start
// that then succeeds clears the readyz failure.
func TestFailedStartCampaignsAgain(t *testing.T) {
	leases := newLeaseHolders()
	var mu sync.Mutex
	starts := 0
	e := testElector(t, leases, func(ctx context.Context, started func()) error {
		mu.Lock()
		starts++
		first := starts == 1
		mu.Unlock()
		if first {
			return errors.New("transient")
		}
		started()
		<-ctx.Done()
		return nil
	}, 50*time.Millisecond)
	runElector(t, e)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return starts == 2 && e.status.Check(nil) == nil
	}, 10*time.Second, 10*time.Millisecond)
	w := leases.written()
	i := slices.Index(w, "")
	require.Positive(t, i, "released after the failed start: %q", w)
	assert.Equal(t, testIdentity, w[0])
	assert.Contains(t, w[i:], testIdentity, "won again after the release: %q", w)
}

// TestControllersStoppingEndTheTerm: controllers that return while still leading (they
// stopped by themselves) end the term as a failed start does.
func TestControllersStoppingEndTheTerm(t *testing.T) {
	leases := newLeaseHolders()
	e := testElector(t, leases, func(ctx context.Context, started func()) error {
		started()
		return errors.New("caches did not sync")
	}, time.Hour)
	runElector(t, e)

	require.Eventually(t, func() bool { return e.status.Check(nil) != nil && leases.holderNow() == "" },
		10*time.Second, 10*time.Millisecond)
	assert.Contains(t, e.status.Check(nil).Error(), "the controllers stopped: caches did not sync")
}

// TestStatusIsNilSafe: a Config without a Status records nothing.
func TestStatusIsNilSafe(t *testing.T) {
	var s *Status
	s.failed(errors.New("x"))
	s.started()
	assert.NoError(t, s.Check(nil))
}

// TestClientsOfTheirOwn: the lease and the Events are written through copies of the host
// configuration whose clients get a rate limiter of their own (never the host's), and a user
// agent that tells them apart.
func TestClientsOfTheirOwn(t *testing.T) {
	shared := flowcontrol.NewTokenBucketRateLimiter(50, 100)
	host := &rest.Config{Host: "https://host.example", QPS: 50, Burst: 100, UserAgent: "kcp-setups-apiserver", RateLimiter: shared}

	le := leaderElectionConfig(host, 10*time.Second)
	assert.Nil(t, le.RateLimiter, "the host's rate limiter is not shared")
	assert.Equal(t, float32(leaderElectionQPS), le.QPS)
	assert.Equal(t, leaderElectionBurst, le.Burst)
	assert.Equal(t, "kcp-setups-apiserver/leader-election", le.UserAgent)
	assert.Equal(t, 5*time.Second, le.Timeout, "half the renew deadline")
	assert.Equal(t, "https://host.example", le.Host)
	assert.Equal(t, time.Second, leaderElectionConfig(host, time.Second).Timeout, "at least a second")

	ev := eventsConfig(host)
	assert.Nil(t, ev.RateLimiter, "the host's rate limiter is not shared")
	assert.Equal(t, float32(50), ev.QPS)
	assert.Equal(t, 100, ev.Burst)
	assert.Equal(t, "kcp-setups-apiserver/events", ev.UserAgent)

	assert.Same(t, shared, host.RateLimiter, "the host configuration is left alone")
	assert.Equal(t, "kcp-setups-apiserver", host.UserAgent)
	assert.Zero(t, host.Timeout)

	anonymous := leaderElectionConfig(&rest.Config{}, 10*time.Second)
	assert.True(t, strings.HasPrefix(anonymous.UserAgent, rest.DefaultKubernetesUserAgent()+"/"), anonymous.UserAgent)
	assert.True(t, strings.HasSuffix(anonymous.UserAgent, "/leader-election"), anonymous.UserAgent)
}
