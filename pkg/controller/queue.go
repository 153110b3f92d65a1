package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// Loop is the informer → rate-limited workqueue → sync(key) loop every kind's controller
// runs. sync is level-triggered: it reads the current state and may be called any number of
// times for a key.
type Loop struct {
	Kind  string
	Queue workqueue.TypedRateLimitingInterface[string]
	Sync  func(ctx context.Context, key string) error

	limiter workqueue.TypedRateLimiter[string]
	synced  []cache.InformerSynced
}

// NewLoop returns a loop for kind with exponential per-item backoff, capped at MaxBackoff.
func NewLoop(kind string, sync func(ctx context.Context, key string) error) *Loop {
	limiter := newRateLimiter()
	return &Loop{
		Kind: kind,
		Queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[string]{Name: kind}),
		Sync:    sync,
		limiter: limiter,
	}
}

// Enqueue adds the key of an object, or of a deleted object's last state.
func (l *Loop) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	l.Queue.Add(key)
}

// Handler enqueues the object itself on every event.
func (l *Loop) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    l.Enqueue,
		UpdateFunc: func(_, obj any) { l.Enqueue(obj) },
		DeleteFunc: l.Enqueue,
	}
}

// HandlerFor enqueues, on every event of an object, the keys that keys returns for it; for a
// deletion, for its last known state.
func (l *Loop) HandlerFor(keys func(metav1.Object) []string) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		for _, key := range keys(m) {
			l.Queue.Add(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		// Both states of an update, in case the object moved from one owner to another.
		UpdateFunc: func(old, obj any) { enqueue(old); enqueue(obj) },
		DeleteFunc: enqueue,
	}
}

// MembershipHandler enqueues the keys that keys returns for an object when it is added or
// deleted, not when it changes: for what depends on which objects exist, such as the set of
// a RootShard's shards, without a reconcile of every sibling on each status update.
func (l *Loop) MembershipHandler(keys func(metav1.Object) []string) cache.ResourceEventHandler {
	h := l.HandlerFor(keys).(cache.ResourceEventHandlerFuncs)
	h.UpdateFunc = nil
	return h
}

// Watch is an informer and what its events enqueue.
type Watch struct {
	Informer cache.SharedIndexInformer
	Handler  cache.ResourceEventHandler
	// certManager is set for cert-manager's informers, whose caches the loop does not wait for.
	certManager bool
}

// Watch adds handler to informer; Run waits for the informer's cache before it starts.
func (l *Loop) Watch(informer cache.SharedIndexInformer, handler cache.ResourceEventHandler) error {
	if _, err := informer.AddEventHandler(handler); err != nil {
		return fmt.Errorf("%s: watching: %w", l.Kind, err)
	}
	l.synced = append(l.synced, informer.HasSynced)
	return nil
}

// Run processes keys with workers until ctx is done, once the watched caches synced.
func (l *Loop) Run(ctx context.Context, workers int) error {
	defer l.Queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", l.Kind)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, l.synced...) {
		return fmt.Errorf("%s: caches did not sync", l.Kind)
	}
	logger.Info("Starting workers", "workers", workers)
	for range workers {
		go wait.UntilWithContext(ctx, l.worker, time.Second)
	}
	<-ctx.Done()
	logger.Info("Stopping workers")
	return nil
}

func (l *Loop) worker(ctx context.Context) {
	for l.next(ctx) {
	}
}

func (l *Loop) next(ctx context.Context) bool {
	key, quit := l.Queue.Get()
	if quit {
		return false
	}
	defer l.Queue.Done(key)
	start := time.Now()
	logger := klog.FromContext(ctx).WithValues("controller", l.Kind, "key", key)
	err := l.Sync(klog.NewContext(ctx, logger), key)
	observe(l.Kind, start, err)
	// One line per reconcile, at the verbosity kube-controller-manager's controllers log
	// theirs: the metrics count a kind's reconciles, this says which object's they were.
	logger.V(4).Info("Finished syncing", "result", reconcileResult(err), "duration", time.Since(start))
	switch {
	case apierrors.IsConflict(err):
		// Routine: the object changed since the cache read it (the server's own status write,
		// a user's edit); the retry reads it again. Not worth an error line each time.
		logger.V(2).Info("Reconcile met a newer version of an object, retrying", "err", err)
	case err != nil:
		logger.Error(err, "Reconcile failed, retrying with backoff")
	}
	if err != nil {
		var later *RetryLater
		var conflict *hostcluster.NameConflictError
		if errors.As(err, &conflict) {
			// Nothing the controllers watch tells when someone else's object goes: look
			// again at a steady pace, one read by name, so that the setup heals soon after.
			l.Queue.Forget(key)
			l.Queue.AddAfter(key, NameConflictRetry)
			return true
		}
		if errors.As(err, &later) {
			// The key's backoff grows as for any failure, but never starts below the floor.
			l.Queue.AddAfter(key, max(l.limiter.When(key), later.After))
			return true
		}
		l.Queue.AddRateLimited(key)
		return true
	}
	l.Queue.Forget(key)
	return true
}

// NameConflictRetry is how often a setup blocked by an object it did not create looks
// whether that object is gone.
const NameConflictRetry = 10 * time.Second

// KcpRetryFloor is the shortest wait before a reconcile that failed to reach a kcp or etcd
// the server realized is tried again: a server that did not answer within its timeout is not
// cured by retrying after milliseconds, which would only fill the log and the metrics.
const KcpRetryFloor = 5 * time.Second

// RetryLater is a failure whose retry waits at least After, with the key's backoff growing
// above that as for any failure.
type RetryLater struct {
	Err   error
	After time.Duration
}

func (e *RetryLater) Error() string { return e.Err.Error() }
func (e *RetryLater) Unwrap() error { return e.Err }

// RetryKcpLater marks err, a failure to reach or write a kcp, to be retried no sooner than
// KcpRetryFloor.
func RetryKcpLater(err error) error {
	if err == nil {
		return nil
	}
	return &RetryLater{Err: err, After: KcpRetryFloor}
}
