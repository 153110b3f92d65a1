package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// UnlabelledCopyHandler is the handler, on the cache of every Secret's metadata, that
// enqueues the keys referencing returns for the Secrets the informer of copies does not see:
// one that comes or goes without the reference label, or that gains or loses it (which that
// informer sees too, but maybe before this cache has caught up). Their consumers'
// ReferenceValid then says ReferenceSecretNotLabelled, or no longer does. A labelled copy's
// own events are the informer of copies'.
func (l *Loop) UnlabelledCopyHandler(referencing func(namespace, name string) []string) cache.ResourceEventHandler {
	labelled := func(obj any) (metav1.Object, bool) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, false
		}
		_, ok := m.GetLabels()[pki.LabelReference]
		return m, ok
	}
	enqueue := func(m metav1.Object) {
		for _, key := range referencing(m.GetNamespace(), m.GetName()) {
			l.Queue.Add(key)
		}
	}
	enqueueUnlabelled := func(obj any) {
		if m, ok := labelled(obj); m != nil && !ok {
			enqueue(m)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueUnlabelled,
		UpdateFunc: func(old, obj any) {
			_, was := labelled(old)
			if m, is := labelled(obj); m != nil && was != is {
				enqueue(m)
			}
		},
		DeleteFunc: enqueueUnlabelled,
	}
}
