package hostcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// WatchNamespaces are the namespaces of the host cluster the server serves
// (--watch-namespaces): its caches hold only their objects, and objects of our kinds are
// created only in them. Empty is every namespace.
type WatchNamespaces []string

// ParseWatchNamespaces reads the comma-separated value of --watch-namespaces: empty is every
// namespace; names are sorted and deduplicated.
func ParseWatchNamespaces(value string) (WatchNamespaces, error) {
	var out WatchNamespaces
	for _, ns := range strings.Split(value, ",") {
		ns = strings.TrimSpace(ns)
		if ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("--watch-namespaces: %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
		}
		out = append(out, ns)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// All tells whether every namespace is served.
func (w WatchNamespaces) All() bool { return len(w) == 0 }

// Serves tells whether objects in namespace are served.
func (w WatchNamespaces) Serves(namespace string) bool {
	return w.All() || slices.Contains(w, namespace)
}

// NamespacedList lists one namespace's objects; NamespacedWatch watches them.
type (
	NamespacedList  func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error)
	NamespacedWatch func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
)

// ListWatch is a cache.ListerWatcher of the objects of the namespaces w, or of every
// namespace when w is All (namespace "" to list and watch). Over several namespaces it
// lists each and merges the lists, and merges one watch per namespace, each resumed from
// the last version seen in its namespace: resource versions of different lists are not to be
// compared, so the version the reflector passes is not used.
func (w WatchNamespaces) ListWatch(list NamespacedList, watchFunc NamespacedWatch) cache.ListerWatcher {
	if w.All() {
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return list(ctx, metav1.NamespaceAll, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return watchFunc(ctx, metav1.NamespaceAll, opts)
			},
		}
	}
	return &namespacesListWatch{namespaces: w, list: list, watch: watchFunc, versions: map[string]string{}}
}

// namespacesListWatch lists and watches several namespaces as one.
type namespacesListWatch struct {
	namespaces []string
	list       NamespacedList
	watch      NamespacedWatch

	mu sync.Mutex
	// versions is the last resource version seen in each namespace.
	versions map[string]string
}

var (
	_ cache.ListerWatcherWithContext = &namespacesListWatch{}
	_ cache.ListerWatcher            = &namespacesListWatch{}
)

// IsWatchListSemanticsUnSupported tells the reflector to list, then watch: a streamed list
// would need one initial-events bookmark over every namespace.
func (*namespacesListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// List implements cache.Lister.
func (l *namespacesListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// Watch implements cache.Watcher.
func (l *namespacesListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists every namespace in full (no pages: a continue token is a single
// list's) and returns the first list holding every item.
func (l *namespacesListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Limit, opts.Continue = 0, ""
	var merged runtime.Object
	var items []runtime.Object
	versions := map[string]string{}
	for _, ns := range l.namespaces {
		list, err := l.list(ctx, ns, opts)
		if err != nil {
			return nil, err
		}
		listMeta, err := meta.ListAccessor(list)
		if err != nil {
			return nil, err
		}
		versions[ns] = listMeta.GetResourceVersion()
		nsItems, err := meta.ExtractListWithAlloc(list)
		if err != nil {
			return nil, err
		}
		items = append(items, nsItems...)
		if merged == nil {
			merged = list
		}
	}
	if err := meta.SetList(merged, items); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.versions = versions
	l.mu.Unlock()
	return merged, nil
}

// WatchWithContext watches every namespace from the version last seen in it.
func (l *namespacesListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	merged := &mergedWatch{result: make(chan watch.Event), stop: make(chan struct{})}
	for _, ns := range l.namespaces {
		nsOpts := opts
		l.mu.Lock()
		nsOpts.ResourceVersion = l.versions[ns]
		l.mu.Unlock()
		w, err := l.watch(ctx, ns, nsOpts)
		if err != nil {
			merged.Stop()
			return nil, err
		}
		merged.watches = append(merged.watches, w)
	}
	for i, w := range merged.watches {
		ns := l.namespaces[i]
		merged.wg.Add(1)
		go func() {
			defer merged.wg.Done()
			// The first watch to end ends them all: the reflector watches again.
			defer merged.Stop()
			for ev := range w.ResultChan() {
				if ev.Type != watch.Error {
					if m, err := meta.Accessor(ev.Object); err == nil && m.GetResourceVersion() != "" {
						l.mu.Lock()
						l.versions[ns] = m.GetResourceVersion()
						l.mu.Unlock()
					}
				}
				select {
				case merged.result <- ev:
				case <-merged.stop:
					return
				}
			}
		}()
	}
	go func() {
		merged.wg.Wait()
		close(merged.result)
	}()
	return merged, nil
}

// mergedWatch is the events of several watches in one channel.
type mergedWatch struct {
	watches []watch.Interface
	result  chan watch.Event
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

// Stop stops every watch; the result channel closes once their events are drained.
func (m *mergedWatch) Stop() {
	m.once.Do(func() {
		close(m.stop)
		for _, w := range m.watches {
			w.Stop()
		}
	})
}

// ResultChan implements watch.Interface.
func (m *mergedWatch) ResultChan() <-chan watch.Event { return m.result }
