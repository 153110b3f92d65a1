package home

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// LastSeenResolution is how stale status.consumers[].lastSeen may be: a report that changes
// nothing else writes the status only when the last write is older.
const LastSeenResolution = time.Minute

// LinkStatusClient reads and writes a Link and its status: the server's own client, whose
// user alone may change status.consumers.
type LinkStatusClient interface {
	Get(ctx context.Context, namespace, name string) (*operatorv1alpha1.Link, error)
	UpdateStatus(ctx context.Context, l *operatorv1alpha1.Link) (*operatorv1alpha1.Link, error)
}

// OperatorLinks is the LinkStatusClient of the server's own clientset, as its loopback user.
func OperatorLinks(c clientset.Interface) LinkStatusClient { return operatorLinks{c} }

type operatorLinks struct{ c clientset.Interface }

func (o operatorLinks) Get(ctx context.Context, namespace, name string) (*operatorv1alpha1.Link, error) {
	return o.c.OperatorV1alpha1().Links(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (o operatorLinks) UpdateStatus(ctx context.Context, l *operatorv1alpha1.Link) (*operatorv1alpha1.Link, error) {
	return o.c.OperatorV1alpha1().Links(l.Namespace).UpdateStatus(ctx, l, metav1.UpdateOptions{})
}

// Events serves POST /v1/events/{kind}: it merges what a remote reports of one of its
// consumers (link.Merge) into the Link's status.consumers. A replayed or older report
// changes nothing; a report that changes nothing but the sequence is written at most once a
// LastSeenResolution. The RootShard's controller watches its Links, so a change requeues it.
type Events struct {
	Links LinkStatusClient
	// Cached, when set, is the cache of the Links a report is first merged against: Links
	// reads a Link only on a conflict (the cache behind the status), or when the cache does
	// not hold the Link of the report's UID.
	Cached operatorlisters.LinkLister
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// retired are the UIDs each Link's consumers replaced, which link.Merge remembers so that
	// a late report of a replaced consumer changes nothing; kept in memory, by the Link's UID.
	retired map[string]map[link.ConsumerKey][]string
}

// ServeHTTP answers 204 once the report is merged (whether it changed anything or not), 400
// for a report that is malformed or of another kind than its route's, 409 when the Link was
// replaced, and 503 when the status could not be written.
func (e *Events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := link.AuthorizedFrom(r.Context())
	if !ok || a.Request.Operation != link.ReportEvent {
		http.Error(w, "", http.StatusForbidden)
		return
	}
	ev, errs := decodeEvent(r, a.Request.Kind)
	if len(errs) > 0 {
		http.Error(w, errs.ToAggregate().Error(), http.StatusBadRequest)
		return
	}
	err := e.record(r.Context(), a.Declaration, ev)
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, errReplaced):
		http.Error(w, "the Link was deleted or replaced", http.StatusConflict)
	case errors.Is(err, errTooMany):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		klog.FromContext(r.Context()).Error(err, "Recording a linked consumer's report", "link", a.Declaration.Namespace+"/"+a.Declaration.Name,
			"consumer", ev.ConsumerKey)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "", http.StatusServiceUnavailable)
	}
}

var (
	errReplaced = errors.New("the Link was replaced")
	errTooMany  = fmt.Errorf("the Link lists %d consumers already", validation.MaxLinkConsumers)
)

// decodeEvent reads the Event of the request's body, strictly, and checks it as the status
// does; its kind must be the route's.
func decodeEvent(r *http.Request, kind link.ConsumerKind) (link.Event, field.ErrorList) {
	var ev link.Event
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil || dec.More() {
		return ev, field.ErrorList{field.Invalid(field.NewPath("body"), "", fmt.Sprintf("not one Event: %v", err))}
	}
	if ev.Kind != kind {
		return ev, field.ErrorList{field.Invalid(field.NewPath("kind"), ev.Kind, fmt.Sprintf("the route's kind is %s", kind))}
	}
	for ca, t := range ev.State.CAs {
		// A set, in the order the status keeps it: the same report is the same entry.
		ev.State.CAs[ca] = link.CATrust{Trusted: slices.Sorted(slices.Values(t.Trusted)), Served: slices.Sorted(slices.Values(t.Served))}
	}
	c := statusOf(ev, time.Time{})
	in := &operator.LinkConsumerStatus{}
	if err := operatorv1alpha1.Convert_v1alpha1_LinkConsumerStatus_To_operator_LinkConsumerStatus(&c, in, nil); err != nil {
		return ev, field.ErrorList{field.InternalError(field.NewPath("body"), err)}
	}
	return ev, validation.ValidateLinkConsumerStatus(in, field.NewPath("event"))
}

// record merges ev into the status of the Link d.
func (e *Events) record(ctx context.Context, d link.Declaration, ev link.Event) error {
	now := time.Now()
	if e.Now != nil {
		now = e.Now()
	}
	conflicted := false
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := e.link(ctx, d, conflicted)
		conflicted = true
		if apierrors.IsNotFound(err) {
			return errReplaced
		}
		if err != nil {
			return err
		}
		if string(l.UID) != d.UID {
			return errReplaced
		}
		consumers := l.Status.Consumers
		i := slices.IndexFunc(consumers, func(c operatorv1alpha1.LinkConsumerStatus) bool { return keyOf(c) == ev.ConsumerKey })
		var prev link.ConsumerState
		if i >= 0 {
			prev.Last = eventOf(consumers[i])
		}
		prev.Retired = e.retiredOf(d.UID, ev.ConsumerKey)
		next, changed := link.Merge(prev, ev)
		e.setRetired(d.UID, ev.ConsumerKey, next.Retired)
		fresh := i >= 0 && now.Sub(consumers[i].LastSeen.Time) < LastSeenResolution
		replay := next.Last.Sequence == prev.Last.Sequence && next.Last.UID == prev.Last.UID
		if replay || (!changed && fresh) {
			// A replay, an older report, or one that says what the status says already.
			return nil
		}
		entry := statusOf(next.Last, now)
		l = l.DeepCopy()
		if i >= 0 {
			l.Status.Consumers[i] = entry
		} else {
			if len(consumers) >= validation.MaxLinkConsumers {
				return errTooMany
			}
			l.Status.Consumers = append(l.Status.Consumers, entry)
		}
		_, err = e.Links.UpdateStatus(ctx, l)
		return err
	})
}

// link is the Link of d: from the cache unless fresh, or the cache does not hold it with d's
// UID; else from the API.
func (e *Events) link(ctx context.Context, d link.Declaration, fresh bool) (*operatorv1alpha1.Link, error) {
	if e.Cached != nil && !fresh {
		if l, err := e.Cached.Links(d.Namespace).Get(d.Name); err == nil && string(l.UID) == d.UID {
			return l, nil
		}
	}
	return e.Links.Get(ctx, d.Namespace, d.Name)
}

func (e *Events) retiredOf(uid string, k link.ConsumerKey) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.retired[uid][k])
}

func (e *Events) setRetired(uid string, k link.ConsumerKey, retired []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(retired) == 0 {
		return
	}
	if e.retired == nil {
		e.retired = map[string]map[link.ConsumerKey][]string{}
	}
	if e.retired[uid] == nil {
		e.retired[uid] = map[link.ConsumerKey][]string{}
	}
	e.retired[uid][k] = retired
}

// Forget drops what is kept in memory of the Link uid: it is gone.
func (e *Events) Forget(uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.retired, uid)
}

func keyOf(c operatorv1alpha1.LinkConsumerStatus) link.ConsumerKey {
	return link.ConsumerKey{Kind: link.ConsumerKind(c.Kind), Namespace: c.Namespace, Name: c.Name}
}

// eventOf is the last accepted report a status entry records.
func eventOf(c operatorv1alpha1.LinkConsumerStatus) link.Event {
	ev := link.Event{ConsumerKey: keyOf(c), UID: c.UID, Generation: c.Generation, Sequence: c.Sequence,
		State: link.ConsumerReport{Realized: c.Realized, Available: c.Available, KcpShard: c.KcpShard, BaseURL: c.BaseURL}}
	for _, ca := range c.Trust {
		if ev.State.CAs == nil {
			ev.State.CAs = map[pki.CA]link.CATrust{}
		}
		ev.State.CAs[pki.CA(ca.CA)] = link.CATrust{Trusted: ca.Trusted, Served: ca.Served}
	}
	return ev
}

// statusOf is the status entry of the report ev, accepted at seen, its CAs sorted.
func statusOf(ev link.Event, seen time.Time) operatorv1alpha1.LinkConsumerStatus {
	c := operatorv1alpha1.LinkConsumerStatus{Kind: string(ev.Kind), Namespace: ev.Namespace, Name: ev.Name, UID: ev.UID,
		Generation: ev.Generation, Sequence: ev.Sequence, LastSeen: metav1.NewTime(seen.Truncate(time.Second)),
		Realized: ev.State.Realized, Available: ev.State.Available, KcpShard: ev.State.KcpShard, BaseURL: ev.State.BaseURL}
	for ca, t := range ev.State.CAs {
		c.Trust = append(c.Trust, operatorv1alpha1.LinkConsumerCA{CA: string(ca), Trusted: t.Trusted, Served: t.Served})
	}
	slices.SortFunc(c.Trust, func(a, b operatorv1alpha1.LinkConsumerCA) int { return strings.Compare(a.CA, b.CA) })
	return c
}
