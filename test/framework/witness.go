package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// statusGVRs are the kinds whose every status the leak scan reads: ours, and cert-manager's
// that ours create.
var statusGVRs = []schema.GroupVersionResource{
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "rootshards"},
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "shards"},
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "frontproxies"},
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "cacheservers"},
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "kubeconfigs"},
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "virtualworkspaces"},
	{Group: "operator.kcp.io", Version: "v1alpha1", Resource: "links"},
	{Group: "cert-manager.io", Version: "v1", Resource: "certificates"},
	{Group: "cert-manager.io", Version: "v1", Resource: "certificaterequests"},
	{Group: "cert-manager.io", Version: "v1", Resource: "issuers"},
	{Group: "cert-manager.io", Version: "v1", Resource: "clusterissuers"},
}

// witness watches the host cluster for the whole life of the stack, because the tests delete
// their namespaces, and with them their Secrets, Events and objects: it keeps every private
// key any Secret held, and writes every Event and every status it sees to files under the
// stack's directory, one line each, for the leak scan.
type witness struct {
	keys   *keySet
	cancel context.CancelFunc

	mu               sync.Mutex
	events, statuses *os.File
}

// startWitness starts watching with cfg, which must not record: the Secrets it reads would
// only be excluded.
func startWitness(ctx context.Context, cfg *rest.Config, keys *keySet, eventsFile, statusesFile string) (*witness, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	w := &witness{keys: keys}
	if w.events, err = os.OpenFile(eventsFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, err
	}
	if w.statuses, err = os.OpenFile(statusesFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		_ = w.events.Close()
		return nil, err
	}
	ctx, w.cancel = context.WithCancel(ctx)

	factory := informers.NewSharedInformerFactory(kube, 0)
	if err := factory.Core().V1().Secrets().Informer().SetTransform(w.secret); err != nil {
		return nil, err
	}
	if err := factory.Core().V1().Events().Informer().SetTransform(w.event); err != nil {
		return nil, err
	}
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	for _, gvr := range statusGVRs {
		if err := dynFactory.ForResource(gvr).Informer().SetTransform(w.status(gvr.Resource)); err != nil {
			return nil, err
		}
	}
	factory.Start(ctx.Done())
	dynFactory.Start(ctx.Done())
	return w, nil
}

// stop ends the watches.
func (w *witness) stop() {
	w.cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.events.Close()
	_ = w.statuses.Close()
}

// secret harvests a Secret's keys and keeps only its name in the informer's cache.
func (w *witness) secret(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	for name, value := range s.Data {
		w.keys.harvest(fmt.Sprintf("Secret %s/%s[%s]", s.Namespace, s.Name, name), value)
	}
	return &corev1.Secret{ObjectMeta: thin(s.ObjectMeta)}, nil
}

// event records an Event whole: its reason, message and note are what users read.
func (w *witness) event(obj any) (any, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	w.record(w.events, fmt.Sprintf("Event %s/%s", e.Namespace, e.Name), e)
	return &corev1.Event{ObjectMeta: thin(e.ObjectMeta)}, nil
}

// status records an object's status.
func (w *witness) status(resource string) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		if status, ok := u.Object["status"]; ok {
			w.record(w.statuses, fmt.Sprintf("%s %s/%s", resource, u.GetNamespace(), u.GetName()), status)
		}
		thinned := &unstructured.Unstructured{}
		thinned.SetGroupVersionKind(u.GroupVersionKind())
		thinned.SetNamespace(u.GetNamespace())
		thinned.SetName(u.GetName())
		thinned.SetResourceVersion(u.GetResourceVersion())
		return thinned, nil
	}
}

// record writes one line: what, a tab, and v as JSON.
func (w *witness) record(f *os.File, what string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(err.Error())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = fmt.Fprintf(f, "%s\t%s\n", what, data)
}

// thin is what an informer's cache needs of an object's metadata.
func thin(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion}
}
