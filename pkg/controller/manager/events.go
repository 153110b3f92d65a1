package manager

import (
	"context"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// NewEventRecorder records Events on the server's objects in the host cluster of host, as
// the controllers do, with a client and a rate limiter of its own: for what serves on every
// replica, beside the controllers (the link listener). shutdown stops it.
func NewEventRecorder(ctx context.Context, host *rest.Config) (r record.EventRecorder, shutdown func(), err error) {
	events, err := kubernetes.NewForConfig(ProtobufConfig(eventsConfig(host)))
	if err != nil {
		return nil, nil, err
	}
	rec, err := newRecorder(ctx, events.CoreV1())
	if err != nil {
		return nil, nil, err
	}
	return rec.EventRecorder, rec.shutdown, nil
}
