package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// The crud benchmark's sizes: objects per operation and the clients that share them, and
// the objects of the large LIST and how often it is measured. BENCH_QUICK divides them.
var (
	crudObjects   = 300
	crudClients   = 8
	crudLists     = 40
	bigList       = 5000
	bigListRounds = 10
)

const (
	crudNamespace    = "bench-crud"
	bigListNamespace = "bench-crud-list"
	// crdGroup is the group of the CRD that stands next to the RootShards.
	crdGroup = "bench.kcp.io"
)

var (
	crds       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crdShards  = schema.GroupVersionResource{Group: crdGroup, Version: "v1alpha1", Resource: "rootshards"}
	crudOps    = []string{"create", "get", "update", "list", "watch"}
	protobuf   = "application/vnd.kubernetes.protobuf"
	crdName    = crdShards.Resource + "." + crdGroup
	apiVersion = map[schema.GroupVersionResource]string{rootShards: rootShards.GroupVersion().String(), crdShards: crdShards.GroupVersion().String()}
)

// crudKind is one of the two kinds measured: RootShards through kube-apiserver's
// aggregation, and the CRD of the same schema.
type crudKind struct {
	name string
	gvr  schema.GroupVersionResource
	// clients have a connection each.
	clients []dynamic.NamespaceableResourceInterface
	// created are the objects as create returned them, which update changes.
	created []*unstructured.Unstructured
}

// BenchmarkCrud measures create, get, update, list and watch (from a create to its watch
// event) of RootShards through kube-apiserver, next to a CRD on the same kube-apiserver whose
// schema is made from this server's OpenAPI, with a few hundred objects from a handful of
// clients; then a LIST of 5000 of each. The controllers are paused while it runs, so that
// what is measured is the API, as it is for the CRD, which has no controller.
func BenchmarkCrud(b *testing.B) {
	if quick {
		crudObjects, bigList, crudLists, bigListRounds = crudObjects/10, bigList/10, crudLists/4, 3
	}
	ctx := b.Context()
	// Cleanup runs on a context of its own: b's ends before deferred calls run.
	cleanupCtx := context.WithoutCancel(ctx)
	for _, ns := range []string{crudNamespace, bigListNamespace} {
		if err := createNamespace(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
	}
	if err := createCRD(ctx); err != nil {
		b.Fatal(err)
	}
	defer deleteCRD(b, cleanupCtx)
	resume, err := pauseControllers(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer resume()
	ours := newCrudKind("aggregated", rootShards)
	crd := newCrudKind("crd", crdShards)
	defer cleanUpRootShards(b, cleanupCtx, ours)

	e := newEntry("crud")
	outcomes := map[string]map[string]outcome{}
	for i, op := range crudOps {
		outcomes[op] = map[string]outcome{}
		// The two kinds take turns at going first, so that neither always runs on a machine
		// the other warmed up, or left busy.
		kinds := []*crudKind{crd, ours}
		if i%2 == 1 {
			kinds = []*crudKind{ours, crd}
		}
		for _, k := range kinds {
			name := op + "-" + k.name
			b.Run(name, func(b *testing.B) {
				o := k.measure(ctx, op)
				o.report(b, e, name)
				outcomes[op][k.name] = o
			})
		}
	}
	for _, op := range crudOps {
		c, a := outcomes[op]["crd"], outcomes[op]["aggregated"]
		if c.percentile(0.50) > 0 {
			e.ratio("%s: p50 %.1f ms through aggregation = %.2f× the CRD's (%.1f ms); p99 %.1f ms against %.1f ms", op,
				a.percentile(0.50), a.percentile(0.50)/c.percentile(0.50), c.percentile(0.50), a.percentile(0.99), c.percentile(0.99))
		}
	}
	listBig(b, ctx, e, crd, ours)
	createInAFullNamespace(b, ctx, e, crd, ours, outcomes["create"])
	e.save(b)
}

func newCrudKind(name string, gvr schema.GroupVersionResource) *crudKind {
	k := &crudKind{name: name, gvr: gvr}
	for _, c := range connections(stack.AdminConfig, crudClients) {
		k.clients = append(k.clients, dynamic.NewForConfigOrDie(c).Resource(gvr))
	}
	return k
}

// rootShard is the object of the benchmark, the same for both kinds.
func (k *crudKind) rootShard(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion[k.gvr], "kind": "RootShard",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"bench": "crud"}},
		"spec": map[string]any{
			"external": map[string]any{"hostname": "kcp.example.com", "port": int64(6443)},
			"etcd":     map[string]any{"endpoints": []any{"https://etcd.example.com:2379"}},
		},
	}}
}

// measure runs one operation over crudObjects objects ("c-0000"…, which create makes and
// the others use), or crudLists lists of them.
func (k *crudKind) measure(ctx context.Context, op string) outcome {
	name := func(i int) string { return fmt.Sprintf("c-%04d", i) }
	ns := func(c int) dynamic.ResourceInterface { return k.clients[c].Namespace(crudNamespace) }
	switch op {
	case "create":
		k.created = make([]*unstructured.Unstructured, crudObjects)
		return k.spread(ctx, crudObjects, func(ctx context.Context, c, i int) error {
			var err error
			k.created[i], err = ns(c).Create(ctx, k.rootShard(name(i)), metav1.CreateOptions{})
			return err
		})
	case "get":
		return k.spread(ctx, crudObjects, func(ctx context.Context, c, i int) error {
			_, err := ns(c).Get(ctx, name(i), metav1.GetOptions{})
			return err
		})
	case "update":
		// The objects as created, with their resourceVersion (a CRD refuses an update
		// without one); nothing else writes them.
		return k.spread(ctx, crudObjects, func(ctx context.Context, c, i int) error {
			rs := k.created[i]
			if rs == nil {
				return fmt.Errorf("%s was not created", name(i))
			}
			rs = rs.DeepCopy()
			_ = unstructured.SetNestedField(rs.Object, int64(7443), "spec", "external", "port")
			_, err := ns(c).Update(ctx, rs, metav1.UpdateOptions{})
			return err
		})
	case "list":
		return k.spread(ctx, crudLists, func(ctx context.Context, c, _ int) error {
			l, err := ns(c).List(ctx, metav1.ListOptions{})
			if err == nil && len(l.Items) != crudObjects {
				err = fmt.Errorf("listed %d objects, not %d", len(l.Items), crudObjects)
			}
			return err
		})
	case "watch":
		return k.watchLatency(ctx)
	}
	panic("unknown operation " + op)
}

// spread calls op on n items from the clients, item i on client i % clients, and times each
// call. Each client first lists (unmeasured), so that connecting is not part of the figures.
func (k *crudKind) spread(ctx context.Context, n int, op func(ctx context.Context, client, item int) error) outcome {
	var (
		mu  sync.Mutex
		out outcome
		wg  sync.WaitGroup
	)
	for c := range k.clients {
		if _, err := k.clients[c].Namespace(crudNamespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			return outcome{errors: 1, firstErr: err}
		}
	}
	begin := time.Now()
	for c := range k.clients {
		wg.Go(func() {
			var own []time.Duration
			var failed []error
			for i := c; i < n; i += len(k.clients) {
				t := time.Now()
				if err := op(ctx, c, i); err != nil {
					failed = append(failed, err)
					continue
				}
				own = append(own, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			out.latencies = append(out.latencies, own...)
			out.errors += len(failed)
			if len(failed) > 0 && out.firstErr == nil {
				out.firstErr = failed[0]
			}
		})
	}
	wg.Wait()
	out.elapsed = time.Since(begin)
	slices.Sort(out.latencies)
	return out
}

// watchLatency watches the namespace and creates crudObjects more objects ("w-0000"…) from
// the clients: each latency is from the moment its create was sent to the moment the watch
// delivered its ADDED event. An event that does not come within a minute is an error.
func (k *crudKind) watchLatency(ctx context.Context) outcome {
	ns := k.clients[0].Namespace(crudNamespace)
	l, err := ns.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return outcome{errors: 1, firstErr: err}
	}
	w, err := ns.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if err != nil {
		return outcome{errors: 1, firstErr: err}
	}
	defer w.Stop()
	var (
		sent    sync.Map // name → time.Time
		mu      sync.Mutex
		seen    []time.Duration
		arrived = make(chan struct{})
	)
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			at, ok := sent.Load(m.GetName())
			if !ok {
				continue
			}
			mu.Lock()
			seen = append(seen, time.Since(at.(time.Time)))
			if len(seen) == crudObjects {
				close(arrived)
			}
			mu.Unlock()
		}
	}()
	created := k.spread(ctx, crudObjects, func(ctx context.Context, c, i int) error {
		name := fmt.Sprintf("w-%04d", i)
		sent.Store(name, time.Now())
		_, err := k.clients[c].Namespace(crudNamespace).Create(ctx, k.rootShard(name), metav1.CreateOptions{})
		return err
	})
	select {
	case <-arrived:
	case <-time.After(time.Minute):
	case <-ctx.Done():
	}
	w.Stop()
	mu.Lock()
	defer mu.Unlock()
	out := outcome{elapsed: created.elapsed, latencies: slices.Clone(seen), errors: created.errors, firstErr: created.firstErr}
	if missing := crudObjects - created.errors - len(seen); missing > 0 {
		out.errors += missing
		if out.firstErr == nil {
			out.firstErr = fmt.Errorf("%d ADDED events did not come within a minute", missing)
		}
	}
	slices.Sort(out.latencies)
	return out
}

// listBig creates bigList objects of each kind (unmeasured), then lists them all
// bigListRounds times from one client as raw bytes, which the client does not decode: in
// JSON, and in protobuf where the server answers a protobuf Accept in protobuf (RootShards
// do; a CRD has no protobuf, so its JSON is the anchor of both).
func listBig(b *testing.B, ctx context.Context, e *entry, crd, ours *crudKind) {
	p50, p50Protobuf := map[string]float64{}, map[string]float64{}
	for _, k := range []*crudKind{crd, ours} {
		t := time.Now()
		created := k.spread(ctx, bigList, func(ctx context.Context, c, i int) error {
			_, err := k.clients[c].Namespace(bigListNamespace).Create(ctx, k.rootShard(fmt.Sprintf("l-%05d", i)), metav1.CreateOptions{})
			return err
		})
		if created.errors > 0 {
			b.Fatalf("creating %d objects of %s: %d failed, the first with: %v", bigList, k.name, created.errors, created.firstErr)
		}
		fmt.Printf("crud: created %d objects of %s in %.1fs (%.0f/s), unmeasured\n", bigList, k.name, time.Since(t).Seconds(), float64(bigList)/time.Since(t).Seconds())
	}
	client, err := rest.HTTPClientFor(stack.AdminConfig)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []*crudKind{crd, ours} {
		path := "/apis/" + k.gvr.GroupVersion().String() + "/namespaces/" + bigListNamespace + "/" + k.gvr.Resource
		contentType, _, err := rawGet(ctx, client, path, protobuf+", application/json")
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasPrefix(contentType, protobuf) {
			fmt.Printf("crud: %s answers a protobuf Accept in protobuf\n", k.name)
			name := fmt.Sprintf("list-%d-protobuf-%s", bigList, k.name)
			b.Run(name, func(b *testing.B) { p50Protobuf[k.name] = listRounds(b, ctx, e, client, name, path, protobuf) })
		} else {
			fmt.Printf("crud: %s answers a protobuf Accept (%s, application/json) with %s: protobuf is not served\n", k.name, protobuf, contentType)
		}
		name := fmt.Sprintf("list-%d-json-%s", bigList, k.name)
		b.Run(name, func(b *testing.B) { p50[k.name] = listRounds(b, ctx, e, client, name, path, "application/json") })
	}
	if c, a := p50["crd"], p50["aggregated"]; c > 0 {
		e.ratio("list of %d in JSON: p50 %.0f ms through aggregation = %.2f× the CRD's (%.0f ms)", bigList, a, a/c, c)
		if pb := p50Protobuf["aggregated"]; pb > 0 {
			e.ratio("list of %d in protobuf: p50 %.0f ms through aggregation = %.2f× its JSON (%.0f ms), %.2f× the CRD's JSON (%.0f ms)",
				bigList, pb, pb/a, a, pb/c, c)
		}
	}
}

// createInAFullNamespace measures crudObjects more creates ("m-0000"…) in the namespace of
// the large LIST, which holds bigList objects of each kind by then, next to the creates in
// the namespace of crudObjects (atFew): a create must not cost more as its namespace fills
// (the check of derived names answers from an index, not from a list of the namespace).
func createInAFullNamespace(b *testing.B, ctx context.Context, e *entry, crd, ours *crudKind, atFew map[string]outcome) {
	full := map[string]outcome{}
	for _, k := range []*crudKind{crd, ours} {
		name := fmt.Sprintf("create-among-%d-%s", bigList, k.name)
		b.Run(name, func(b *testing.B) {
			o := k.spread(ctx, crudObjects, func(ctx context.Context, c, i int) error {
				_, err := k.clients[c].Namespace(bigListNamespace).Create(ctx, k.rootShard(fmt.Sprintf("m-%04d", i)), metav1.CreateOptions{})
				return err
			})
			o.report(b, e, name)
			full[k.name] = o
		})
	}
	a, few := full["aggregated"].percentile(0.50), atFew["aggregated"].percentile(0.50)
	if c := full["crd"].percentile(0.50); c > 0 && few > 0 {
		e.ratio("create among %d objects of a namespace: p50 %.1f ms through aggregation = %.2f× the p50 among %d (%.1f ms), %.2f× the CRD's among %d (%.1f ms)",
			bigList, a, a/few, crudObjects, few, a/c, bigList, c)
	}
}

// listRounds measures bigListRounds GETs of path with accept, and returns the p50 in ms.
func listRounds(b *testing.B, ctx context.Context, e *entry, client *http.Client, name, path, accept string) float64 {
	var out outcome
	size := 0
	begin := time.Now()
	for range bigListRounds {
		t := time.Now()
		_, n, err := rawGet(ctx, client, path, accept)
		if err != nil {
			out.errors++
			out.firstErr = err
			continue
		}
		out.latencies = append(out.latencies, time.Since(t))
		size = n
	}
	out.elapsed = time.Since(begin)
	slices.Sort(out.latencies)
	out.report(b, e, name)
	e.add(b, name+"/size", float64(size)/(1<<20), "MiB")
	return out.percentile(0.50)
}

// rawGet reads path whole with accept, and returns the response's Content-Type and size.
func rawGet(ctx context.Context, client *http.Client, path, accept string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.AdminConfig.Host+path, nil)
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return resp.Header.Get("Content-Type"), int(n), err
}

// createCRD makes the CRD of RootShards in crdGroup, with the schema of this server's
// RootShard as kube-apiserver publishes it, and waits until it is served.
func createCRD(ctx context.Context) error {
	raw, err := stack.Kube.Discovery().RESTClient().Get().AbsPath("/openapi/v3/apis/" + operatorv1alpha1.SchemeGroupVersion.String()).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("reading the OpenAPI of %s: %w", operatorv1alpha1.SchemeGroupVersion, err)
	}
	s, err := structuralSchema(raw, operatorv1alpha1.GroupName, "RootShard")
	if err != nil {
		return err
	}
	crd := rootShardCRD(s)
	if _, err := stack.Dynamic.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the CRD %s from the RootShard's OpenAPI schema: %w", crdName, err)
	}
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := stack.Dynamic.Resource(crds).Get(ctx, crdName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conditions {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				_, err := stack.Dynamic.Resource(crdShards).Namespace(crudNamespace).List(ctx, metav1.ListOptions{Limit: 1})
				return err == nil, nil
			}
		}
		return false, nil
	})
}

// rootShardCRD is the CRD of RootShards in crdGroup with the schema s.
func rootShardCRD(s map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crdName},
		"spec": map[string]any{
			"group": crdGroup, "scope": "Namespaced",
			"names": map[string]any{"plural": crdShards.Resource, "singular": "rootshard", "kind": "RootShard", "listKind": "RootShardList"},
			"versions": []any{map[string]any{"name": crdShards.Version, "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": s},
				"subresources": map[string]any{"status": map[string]any{}}}},
		},
	}}
}

// deleteCRD deletes the CRD, and its objects with it, and waits until it is gone, so that
// the next benchmark does not share the machine with the deletion.
func deleteCRD(b *testing.B, ctx context.Context) {
	t := time.Now()
	client := stack.Dynamic.Resource(crds)
	err := client.Delete(ctx, crdName, metav1.DeleteOptions{})
	if err == nil {
		err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := client.Get(ctx, crdName, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		b.Errorf("deleting the CRD %s: %v", crdName, err)
		return
	}
	fmt.Printf("crud: deleted the CRD and its objects in %.1fs\n", time.Since(t).Seconds())
}

// cleanUpRootShards deletes the benchmark's RootShards, one request each from the clients
// (a DeleteCollection of thousands outlasts a request's timeout), and checks that they are
// gone: the controllers, once resumed, must not find any.
func cleanUpRootShards(b *testing.B, ctx context.Context, k *crudKind) {
	t := time.Now()
	for _, ns := range []string{crudNamespace, bigListNamespace} {
		l, err := k.clients[0].Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Errorf("listing the RootShards of %s: %v", ns, err)
			continue
		}
		deleted := k.spread(ctx, len(l.Items), func(ctx context.Context, c, i int) error {
			err := k.clients[c].Namespace(ns).Delete(ctx, l.Items[i].GetName(), metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
		if deleted.errors > 0 {
			b.Errorf("deleting the RootShards of %s: %d failed, the first with: %v", ns, deleted.errors, deleted.firstErr)
		}
		if l, err := k.clients[0].Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil || len(l.Items) > 0 {
			b.Errorf("RootShards are left in %s (%v)", ns, err)
		}
	}
	fmt.Printf("crud: deleted the RootShards in %.1fs\n", time.Since(t).Seconds())
}
