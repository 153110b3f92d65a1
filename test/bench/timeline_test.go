package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// Milestone is when one object of a setup reached a step: its Ready condition turned True,
// it was created, or it turned Running.
type Milestone struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Event string `json:"event"`
	// Seen is when the benchmark's watch saw it, in seconds after the apply began.
	Seen float64 `json:"seen"`
	// Server is the object's own timestamp of it (lastTransitionTime or creationTimestamp),
	// in seconds after the apply began; the API's timestamps are whole seconds.
	Server float64 `json:"server"`
}

// milestoneOf reads whether obj reached a step, and its own timestamp of it.
type milestoneOf func(obj *unstructured.Unstructured) (event string, at metav1.Time, ok bool)

// watched are the kinds whose milestones make a timeline, and how to read each.
var watched = []struct {
	gvr        schema.GroupVersionResource
	kind       string
	milestones []milestoneOf
}{
	{schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}, "Issuer", []milestoneOf{conditionTrue("Ready")}},
	{schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}, "Certificate", []milestoneOf{conditionTrue("Ready")}},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret", []milestoneOf{created}},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", []milestoneOf{created, conditionTrue("Available")}},
	{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", []milestoneOf{created, conditionTrue("Ready")}},
	{rootShards, "RootShard", []milestoneOf{running}},
	{schema.GroupVersionResource{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "shards"}, "Shard", []milestoneOf{running}},
	{schema.GroupVersionResource{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "frontproxies"}, "FrontProxy", []milestoneOf{running}},
	{schema.GroupVersionResource{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "cacheservers"}, "CacheServer", []milestoneOf{running}},
}

var rootShards = schema.GroupVersionResource{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "rootshards"}

// timeline watches a namespace and notes each object's milestones as they happen, until
// every expected object is Running and every Certificate is Ready.
type timeline struct {
	start time.Time
	// expected are the objects that must turn Running, as "Kind/name"; certificates is how
	// many Certificates must be Ready at least.
	expected     []string
	certificates int

	mu         sync.Mutex
	milestones map[string]Milestone
	// pending are the Certificates not Ready yet.
	pending map[string]bool
	done    chan struct{}
	doneAt  time.Duration
}

func newTimeline(expected []string, certificates int) *timeline {
	return &timeline{expected: expected, certificates: certificates, milestones: map[string]Milestone{},
		pending: map[string]bool{}, done: make(chan struct{})}
}

// watch starts the namespace's informers; they run until ctx ends.
func (t *timeline) watch(ctx context.Context, namespace string) error {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(stack.Dynamic, 0, namespace, nil)
	for _, w := range watched {
		handle := func(obj any) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return
			}
			seen := time.Since(t.start)
			for _, milestone := range w.milestones {
				event, at, reached := milestone(u)
				t.note(w.kind, u.GetName(), event, reached, seen, at)
			}
		}
		_, err := factory.ForResource(w.gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    handle,
			UpdateFunc: func(_, obj any) { handle(obj) },
		})
		if err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	for gvr, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("watching %s in %s did not sync", gvr.Resource, namespace)
		}
	}
	return nil
}

// begin marks the apply.
func (t *timeline) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = time.Now()
}

// note records a milestone the first time it is reached, and closes done once the setup is.
func (t *timeline) note(kind, name, event string, reached bool, seen time.Duration, at metav1.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() {
		return
	}
	if kind == "Certificate" {
		t.pending[name] = !reached
	}
	key := kind + "/" + name + " " + event
	if !reached {
		return
	}
	if _, ok := t.milestones[key]; !ok {
		t.milestones[key] = Milestone{Kind: kind, Name: name, Event: event, Seen: seen.Seconds(), Server: at.Sub(t.start).Seconds()}
	}
	if t.doneAt == 0 && t.complete() {
		t.doneAt = seen
		close(t.done)
	}
}

// complete reports whether every expected object is Running and every Certificate Ready.
func (t *timeline) complete() bool {
	for _, o := range t.expected {
		if _, ok := t.milestones[o+" Running"]; !ok {
			return false
		}
	}
	ready := 0
	for _, pending := range t.pending {
		if pending {
			return false
		}
		ready++
	}
	return ready >= t.certificates
}

// sorted are the milestones in the order they were seen.
func (t *timeline) sorted() []Milestone {
	t.mu.Lock()
	defer t.mu.Unlock()
	var all []Milestone
	for _, m := range t.milestones {
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b Milestone) int {
		if a.Seen < b.Seen {
			return -1
		}
		if a.Seen > b.Seen {
			return 1
		}
		return 0
	})
	return all
}

// print writes the timeline, a line per milestone.
func (t *timeline) print(prefix string) {
	fmt.Printf("%s  %8s %8s  %-12s %-44s %s\n", prefix, "seen", "server", "kind", "name", "event")
	for _, m := range t.sorted() {
		fmt.Printf("%s  %+7.2fs %+7.1fs  %-12s %-44s %s\n", prefix, m.Seen, m.Server, m.Kind, m.Name, m.Event)
	}
}

func conditionTrue(conditionType string) func(obj *unstructured.Unstructured) (string, metav1.Time, bool) {
	return func(obj *unstructured.Unstructured) (string, metav1.Time, bool) {
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conditions {
			m, ok := c.(map[string]any)
			if !ok || m["type"] != conditionType {
				continue
			}
			var at metav1.Time
			if s, ok := m["lastTransitionTime"].(string); ok {
				_ = at.UnmarshalQueryParameter(s)
			}
			return conditionType, at, m["status"] == string(metav1.ConditionTrue)
		}
		return conditionType, metav1.Time{}, false
	}
}

func created(obj *unstructured.Unstructured) (string, metav1.Time, bool) {
	return "created", obj.GetCreationTimestamp(), true
}

// running is a kcp object's phase Running, timed by the later of the two conditions it
// follows from.
func running(obj *unstructured.Unstructured) (string, metav1.Time, bool) {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	_, available, _ := conditionTrue("Available")(obj)
	_, certificates, _ := conditionTrue("CertificatesReady")(obj)
	at := available
	if certificates.After(at.Time) {
		at = certificates
	}
	return "Running", at, phase == "Running"
}
