package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"
)

// The clients apart from the controllers', as kube-controller-manager has them: each has a
// rate limiter of its own, so that a burst of controller writes or of Events cannot delay a
// lease renewal past the renew deadline.
const (
	// LeaderElectionUserAgent is the suffix of the leader election client's user agent.
	LeaderElectionUserAgent = "leader-election"
	// EventsUserAgent is the suffix of the Event recorder's client's user agent.
	EventsUserAgent = "events"
	// ClaimsUserAgent is the suffix of the user agent of the reads before a first write.
	ClaimsUserAgent = "claims"
	// leaderElectionQPS and leaderElectionBurst bound the leader election client, which
	// sends one GET and one UPDATE per retry period (client-go's defaults).
	leaderElectionQPS   = 5
	leaderElectionBurst = 10
	// maxRestartBackoff bounds the wait before campaigning again after the controllers
	// failed to start.
	maxRestartBackoff = 5 * time.Minute
)

// leaderElectionConfig is the configuration of the client the lease is held with: a copy of
// host with a rate limiter of its own, its own user agent, and a timeout of half the renew
// deadline (at least a second), so that one hung request cannot lose the lease, as
// resourcelock.NewFromKubeconfig sets it.
func leaderElectionConfig(host *rest.Config, renewDeadline time.Duration) *rest.Config {
	out := ownClientConfig(host, LeaderElectionUserAgent)
	out.QPS, out.Burst = leaderElectionQPS, leaderElectionBurst
	out.Timeout = max(renewDeadline/2, time.Second)
	return out
}

// eventsConfig is the configuration of the client Events are recorded with: a copy of host,
// with the same --kube-api-qps and --kube-api-burst but a rate limiter of its own.
func eventsConfig(host *rest.Config) *rest.Config {
	return ownClientConfig(host, EventsUserAgent)
}

// ownClientConfig is a copy of host whose clients get a rate limiter of their own (a
// RateLimiter of host's would be shared), with agent appended to the user agent.
func ownClientConfig(host *rest.Config, agent string) *rest.Config {
	out := rest.CopyConfig(host)
	out.RateLimiter = nil
	userAgent := out.UserAgent
	if userAgent == "" {
		userAgent = rest.DefaultKubernetesUserAgent()
	}
	out.UserAgent = userAgent + "/" + agent
	return out
}

// StatusCheckName is the name of the readyz check the Status is: /readyz/controllers.
const StatusCheckName = "controllers"

// Status says whether the controllers of this replica failed to start. It is the readyz
// check "controllers": it fails with the error from the last start that failed, until a
// start succeeds. A replica that is not leading has started nothing and has not failed.
type Status struct {
	mu  sync.Mutex
	err error
}

// NewStatus returns a Status that has not failed.
func NewStatus() *Status { return &Status{} }

// Name is the name of the check.
func (s *Status) Name() string { return StatusCheckName }

// Check fails while the last start of the controllers failed.
func (s *Status) Check(*http.Request) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// started records that the controllers started.
func (s *Status) started() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = nil
}

// failed records that the controllers failed to start, or stopped, with err.
func (s *Status) failed(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// startFunc runs the controllers until ctx is done; it calls started once they are set up
// and their workers start. An error before that is a failed start.
type startFunc func(ctx context.Context, started func()) error

// runAndRecord runs start until ctx is done, and records in status whether it started.
// Controllers that return before ctx is done (failed to start, or stopped by themselves)
// yield the error that says so, recorded in status too; nil once ctx is done.
func runAndRecord(ctx context.Context, start startFunc, status *Status) error {
	started := false
	err := start(ctx, func() {
		if ctx.Err() == nil {
			started = true
			status.started()
		}
	})
	if ctx.Err() != nil {
		if err != nil {
			klog.FromContext(ctx).Error(err, "Controllers stopped")
		}
		return nil
	}
	switch {
	case !started && err != nil:
		err = fmt.Errorf("the controllers failed to start: %w", err)
	case err != nil:
		err = fmt.Errorf("the controllers stopped: %w", err)
	default:
		err = errors.New("the controllers stopped")
	}
	status.failed(err)
	return err
}

// elector campaigns for the lease and runs the controllers while it holds it.
type elector struct {
	config componentbaseconfig.LeaderElectionConfiguration
	lock   resourcelock.Interface
	start  startFunc
	status *Status
	// backoff is the first wait before campaigning again after a failed start, doubled at
	// each failure in a row up to maxBackoff; zero is the lease duration.
	backoff, maxBackoff time.Duration
}

// run campaigns until ctx is done. Losing the lease (a renewal that failed, as while
// kube-apiserver restarts) stops the controllers, not the process: this server also serves
// the API, so it campaigns again, where a built-in controller manager would exit and be
// restarted. Controllers that fail to start (or stop by themselves) end the term: the lease
// is released at once rather than renewed with nothing running, Status says why, and the
// replica campaigns again after a backoff, leaving the lease to another replica meanwhile.
func (e *elector) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("lease", e.config.ResourceNamespace+"/"+e.config.ResourceName, "identity", e.lock.Identity())
	backoff := e.backoff
	if backoff <= 0 {
		backoff = e.config.LeaseDuration.Duration
	}
	maxBackoff := e.maxBackoff
	if maxBackoff <= 0 {
		maxBackoff = maxRestartBackoff
	}
	wait := backoff
	for ctx.Err() == nil {
		termCtx, endTerm := context.WithCancel(ctx)
		term := newTerm()
		leaderelection.RunOrDie(termCtx, leaderelection.LeaderElectionConfig{
			Lock:            e.lock,
			Name:            e.config.ResourceName,
			LeaseDuration:   e.config.LeaseDuration.Duration,
			RenewDeadline:   e.config.RenewDeadline.Duration,
			RetryPeriod:     e.config.RetryPeriod.Duration,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					defer term.end()
					term.begin()
					logger.Info("Leading: starting the controllers")
					err := runAndRecord(ctx, e.start, e.status)
					if err == nil {
						return
					}
					// Nothing runs any more while the lease would still be renewed.
					term.fail(err)
					logger.Error(err, "Ending the term: releasing the lease")
					endTerm()
				},
				OnStoppedLeading: func() { logger.Info("Not leading: the controllers are stopped") },
			},
		})
		term.wait()
		endTerm()
		if term.failure() == nil {
			wait = backoff
			continue
		}
		logger.Info("Campaigning again after a backoff", "backoff", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}
