package store

import (
	"context"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
)

// claimIndex holds the host names every stored object derives, by namespace and name, so
// that a create's check looks up the names it derives instead of listing its namespace: the
// check then costs the same in a namespace of 3000 objects as in one of 3. It is kept current
// by each kind's storage watch (Claims.Run), across every replica of the server, and at once
// by this replica's own writes (Claims.Observe, Claims.Forget), so that a create that follows
// another on this replica sees it. Until every kind's first list is in, the checks list the
// namespace as before.
type claimIndex struct {
	mu sync.RWMutex
	// objects are the indexed objects, by namespace, then Kind/name.
	objects map[string]map[string]indexedObject
	// names are the owners (Kind/name) of each derived host name, by namespace.
	names map[string]map[string]map[string]struct{}
	// synced counts the kinds whose first list is in.
	synced int
	// gone are the UIDs of the objects this replica deleted whose watch event of the
	// deletion has not come yet: a watch event of theirs from before the deletion, which
	// comes after it, indexes them no more.
	gone map[types.UID]string
}

// indexedObject is what the index holds of an object: the names it derives, as of its UID and
// generation (the derived names come from metadata.name and the spec alone, and a spec
// change bumps the generation; a status write does not, so it derives nothing again).
type indexedObject struct {
	uid        types.UID
	generation int64
	names      []DerivedName
}

// put indexes obj, of kind, unless the index holds it at this UID and generation already.
func (x *claimIndex) put(kind string, obj runtime.Object, derive func(runtime.Object) ([]DerivedName, error)) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	ns, key := m.GetNamespace(), kind+"/"+m.GetName()
	x.mu.RLock()
	held, ok := x.objects[ns][key]
	_, deleted := x.gone[m.GetUID()]
	x.mu.RUnlock()
	if deleted {
		return nil
	}
	// The same generation derives the same names; an older one is a watch event that comes
	// after this replica's own write of a newer one (Observe), and the newer stays.
	if ok && held.uid == m.GetUID() && held.generation >= m.GetGeneration() {
		return nil
	}
	names, err := derive(obj)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if held, ok := x.objects[ns][key]; ok && held.uid == m.GetUID() && held.generation >= m.GetGeneration() {
		return nil // a newer one came in meanwhile
	}
	if _, deleted := x.gone[m.GetUID()]; deleted {
		return nil // deleted meanwhile
	}
	x.removeLocked(ns, key)
	if x.objects == nil {
		x.objects, x.names = map[string]map[string]indexedObject{}, map[string]map[string]map[string]struct{}{}
	}
	if x.objects[ns] == nil {
		x.objects[ns], x.names[ns] = map[string]indexedObject{}, map[string]map[string]struct{}{}
	}
	x.objects[ns][key] = indexedObject{uid: m.GetUID(), generation: m.GetGeneration(), names: names}
	for _, n := range names {
		if x.names[ns][n.Name] == nil {
			x.names[ns][n.Name] = map[string]struct{}{}
		}
		x.names[ns][n.Name][key] = struct{}{}
	}
	return nil
}

// remove drops obj, of kind, from the index: its deletion as the watch tells it, or, with
// deleted, as this replica made it (before its watch event comes).
func (x *claimIndex) remove(kind string, obj runtime.Object, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if deleted {
		if x.gone == nil {
			x.gone = map[types.UID]string{}
		}
		x.gone[m.GetUID()] = kind
	} else {
		delete(x.gone, m.GetUID())
	}
	if held, ok := x.objects[m.GetNamespace()][kind+"/"+m.GetName()]; ok && held.uid == m.GetUID() {
		x.removeLocked(m.GetNamespace(), kind+"/"+m.GetName())
	}
}

func (x *claimIndex) removeLocked(ns, key string) {
	held, ok := x.objects[ns][key]
	if !ok {
		return
	}
	for _, n := range held.names {
		delete(x.names[ns][n.Name], key)
		if len(x.names[ns][n.Name]) == 0 {
			delete(x.names[ns], n.Name)
		}
	}
	delete(x.objects[ns], key)
}

// keep drops the objects of kind that keys (Kind/name by namespace) does not name: what a
// new list of the kind no longer holds.
func (x *claimIndex) keep(kind string, keys map[string]map[string]bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	// A new list of the kind holds none of its deleted objects, and its watch goes on from
	// after it.
	for uid, k := range x.gone {
		if k == kind {
			delete(x.gone, uid)
		}
	}
	prefix := kind + "/"
	for ns, objects := range x.objects {
		for key := range objects {
			if len(key) > len(prefix) && key[:len(prefix)] == prefix && !keys[ns][key] {
				x.removeLocked(ns, key)
			}
		}
	}
}

// owners are the objects (Kind/name) of namespace ns that derive one of wanted, each with
// the names of wanted it derives, in a stable order.
func (x *claimIndex) owners(ns string, wanted map[string]DerivedName) ([]string, map[string][]DerivedName) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	clashes := map[string][]DerivedName{}
	for name, n := range wanted {
		for key := range x.names[ns][name] {
			clashes[key] = append(clashes[key], n)
		}
	}
	keys := make([]string, 0, len(clashes))
	for key, names := range clashes {
		sort.Slice(names, func(i, j int) bool { return names[i].Name < names[j].Name })
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys, clashes
}

// ready reports whether every one of kinds kinds has had its first list indexed.
func (x *claimIndex) ready(kinds int) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return kinds > 0 && x.synced >= kinds
}

// Indexed reports whether the checks answer from the index: every kind's first list is in.
func (c *Claims) Indexed() bool { return c.index.ready(len(c.Kinds)) }

// Run keeps the index of derived names current from each kind's storage until ctx is done:
// a list of every namespace, then a watch from the list's resourceVersion, again from a new
// list whenever the watch ends. It is started once the server serves.
func (c *Claims) Run(ctx context.Context) {
	for _, k := range c.Kinds {
		go c.follow(ctx, k)
	}
}

// follow indexes kind k's objects from its storage until ctx is done.
func (c *Claims) follow(ctx context.Context, k ClaimingKind) {
	first := true
	for ctx.Err() == nil {
		rv, err := c.relist(ctx, k)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Listing for the index of derived names", "resource", k.Resource)
			wait(ctx, time.Second)
			continue
		}
		if first {
			c.index.mu.Lock()
			c.index.synced++
			c.index.mu.Unlock()
			first = false
		}
		c.watch(ctx, k, rv)
	}
}

// relist indexes every object of k and drops what it no longer holds; it returns the list's
// resourceVersion.
func (c *Claims) relist(ctx context.Context, k ClaimingKind) (string, error) {
	list, err := k.List.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), &metainternalversion.ListOptions{})
	if err != nil {
		return "", err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return "", err
	}
	keys := map[string]map[string]bool{}
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return "", err
		}
		if keys[m.GetNamespace()] == nil {
			keys[m.GetNamespace()] = map[string]bool{}
		}
		keys[m.GetNamespace()][k.Kind+"/"+m.GetName()] = true
		if err := c.index.put(k.Kind, item, c.Derive); err != nil {
			return "", err
		}
	}
	c.index.keep(k.Kind, keys)
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return "", err
	}
	return lm.GetResourceVersion(), nil
}

// watch indexes k's changes from resourceVersion rv until the watch ends or ctx is done.
func (c *Claims) watch(ctx context.Context, k ClaimingKind, rv string) {
	watcher, ok := k.List.(rest.Watcher)
	if !ok {
		// A storage without a watch (a test's): list again now and then.
		wait(ctx, time.Second)
		return
	}
	w, err := watcher.Watch(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll),
		&metainternalversion.ListOptions{ResourceVersion: rv, Watch: true, AllowWatchBookmarks: true})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Watching for the index of derived names", "resource", k.Resource)
		wait(ctx, time.Second)
		return
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, open := <-w.ResultChan():
			if !open {
				return
			}
			// The watch cache hands one serialization-caching wrapper to all its watchers
			// of an event; the index reads the object inside.
			if co, ok := ev.Object.(runtime.CacheableObject); ok {
				ev.Object = co.GetObject()
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if err := c.index.put(k.Kind, ev.Object, c.Derive); err != nil {
					klog.FromContext(ctx).Error(err, "Indexing derived names", "resource", k.Resource)
				}
			case watch.Deleted:
				c.index.remove(k.Kind, ev.Object, false)
			case watch.Error:
				return
			}
		}
	}
}

// Observe indexes obj, of resource, as this replica stored it, before its watch event comes.
func (c *Claims) Observe(resource string, obj runtime.Object) {
	if kind := c.kindOfResource(resource); kind != "" {
		_ = c.index.put(kind, obj, c.Derive)
	}
}

// Forget drops obj, of resource, which this replica deleted, before its watch event comes.
func (c *Claims) Forget(resource string, obj runtime.Object) {
	if kind := c.kindOfResource(resource); kind != "" {
		c.index.remove(kind, obj, true)
	}
}

func (c *Claims) kindOfResource(resource string) string {
	for _, k := range c.Kinds {
		if k.Resource.Resource == resource {
			return k.Kind
		}
	}
	return ""
}

// wait waits for d or ctx.
func wait(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
