package controller

import (
	"context"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Loop is the informer → rate-limited workqueue → sync(key) loop every kind's controller
// runs. sync is level-triggered: it reads the current state and may be called any number of
// times for a key.
type Loop struct {
	Kind  string
	Queue workqueue.TypedRateLimitingInterface[string]
	Sync  func(ctx context.Context, key string) error
}

// NewLoop returns a loop for kind with the default exponential per-item backoff.
func NewLoop(kind string, sync func(ctx context.Context, key string) error) *Loop {
	return &Loop{
		Kind: kind,
		Queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: kind}),
		Sync: sync,
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

// Run processes keys with workers until ctx is done, after the given caches synced.
func (l *Loop) Run(ctx context.Context, workers int, synced ...cache.InformerSynced) error {
	defer l.Queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", l.Kind)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, synced...) {
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
	err := l.Sync(klog.NewContext(ctx, klog.FromContext(ctx).WithValues("controller", l.Kind, "key", key)), key)
	observe(l.Kind, start, err)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Reconcile failed, retrying with backoff", "controller", l.Kind, "key", key)
		l.Queue.AddRateLimited(key)
		return true
	}
	l.Queue.Forget(key)
	return true
}
