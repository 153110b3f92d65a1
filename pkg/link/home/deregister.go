package home

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/link"
)

// NoKcp is the 409 of POST /v1/deregister/{kind} when the home reaches no kcp of the Link's
// RootShard: it dials none (--kcp-dialer=none), or the RootShard is gone, or is being
// deleted and its kcp does not answer.
const NoKcp link.Reason = "NoKcp"

// kcpTimeout bounds what one request of a remote asks the home's kcp.
const kcpTimeout = 10 * time.Second

// retryKcp is when a remote whose deregistration met an unreachable kcp may ask again.
const retryKcp = 10 * time.Second

// KcpShards is a client of kcp's Shard objects in the root workspace of the RootShard
// namespace/name.
type KcpShards func(namespace, rootShard string) (dynamic.ResourceInterface, error)

// ErrNoRootShard is the error of KcpShards for a RootShard that is gone or being deleted.
var ErrNoRootShard = errors.New("the RootShard is gone or being deleted")

// KcpRootShards is the KcpShards of the server's kcp clients: the RootShard's own kcp, as the
// Shard controller deregisters a local Shard.
func KcpRootShards(clients *kcpclient.Clients, rootShards operatorlisters.RootShardLister) KcpShards {
	return func(namespace, name string) (dynamic.ResourceInterface, error) {
		rs, err := rootShards.RootShards(namespace).Get(name)
		if apierrors.IsNotFound(err) || (err == nil && rs.DeletionTimestamp != nil) {
			return nil, ErrNoRootShard
		}
		if err != nil {
			return nil, err
		}
		cfg, err := clients.RootShard(rs, kcphealth.RootWorkspace)
		if err != nil {
			return nil, err
		}
		c, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return c.Resource(kcphealth.Shards), nil
	}
}

// Registrations ties kcp's Shard objects of the home's root workspace to the linked Shards
// that registered them, and deletes one for its Shard (docs/talking-to-kcp.md): it marks kcp's
// Shard with the linked Shard's UID (kcphealth.AnnotationShardUID) the first time the remote
// reports the Shard Available at the base URL kcp's Shard routes to, and deletes it only
// while it carries that mark and routes there, for a consumer the Link lists under that UID.
type Registrations struct {
	// Links reads the Link's status.consumers, live (the server's own client).
	Links LinkStatusClient
	// Kcp reaches kcp's Shard objects of a RootShard.
	Kcp KcpShards
}

// consumerEntry is the entry of status.consumers of the consumer key asked under uid, and
// the refusal (403) or the 409 when there is none to deregister.
func consumerEntry(consumers []operatorv1alpha1.LinkConsumerStatus, key link.ConsumerKey, uid string) (*operatorv1alpha1.LinkConsumerStatus, link.Reason, int) {
	i := slices.IndexFunc(consumers, func(c operatorv1alpha1.LinkConsumerStatus) bool { return keyOf(c) == key })
	switch {
	case i < 0:
		return nil, link.UnknownConsumer, http.StatusForbidden
	case uid == "" || consumers[i].UID != uid:
		return nil, link.ConsumerMismatch, http.StatusForbidden
	case consumers[i].KcpShard == "" || consumers[i].BaseURL == "":
		return nil, link.NotRegistered, http.StatusConflict
	}
	return &consumers[i], "", 0
}

// registration is the verdict on kcp's Shard got (nil: not there) for the consumer c: 204
// when it is not there, 200 when it is c's (it carries c's UID and routes to c's base URL)
// and may be deleted, else 409 and why.
func registration(c *operatorv1alpha1.LinkConsumerStatus, got *unstructured.Unstructured) (link.Reason, int) {
	if got == nil {
		return "", http.StatusNoContent
	}
	if got.GetAnnotations()[kcphealth.AnnotationShardUID] != c.UID {
		return link.NotMarked, http.StatusConflict
	}
	if url, _, _ := unstructured.NestedString(got.Object, "spec", "baseURL"); url != c.BaseURL {
		return link.BaseURLMismatch, http.StatusConflict
	}
	return "", http.StatusOK
}

// toMark reports whether kcp's Shard got is to be marked as the linked Shard c's: c is
// Available with a kcp shard and base URL the Link d may register (link.MayRegister), and
// got exists, is not being deleted, routes to c's base URL and carries no mark yet.
func toMark(d link.Declaration, c *operatorv1alpha1.LinkConsumerStatus, got *unstructured.Unstructured) bool {
	if c == nil || !c.Available || c.UID == "" || !link.MayRegister(d, c.KcpShard, c.BaseURL) || got == nil || got.GetDeletionTimestamp() != nil {
		return false
	}
	url, _, _ := unstructured.NestedString(got.Object, "spec", "baseURL")
	_, marked := got.GetAnnotations()[kcphealth.AnnotationShardUID]
	return url == c.BaseURL && !marked
}

// entryOf is the Link d, read live; errReplaced when it is gone or was made again.
func (g *Registrations) entryOf(ctx context.Context, d link.Declaration) (*operatorv1alpha1.Link, error) {
	l, err := g.Links.Get(ctx, d.Namespace, d.Name)
	if apierrors.IsNotFound(err) || (err == nil && string(l.UID) != d.UID) {
		return nil, errReplaced
	}
	return l, err
}

// get is kcp's Shard name, nil when kcp has none.
func get(ctx context.Context, shards dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	got, err := shards.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return got, err
}

// Mark marks kcp's Shard of the linked Shard key of the Link d with its UID, when toMark says
// so; the patch holds only if kcp's Shard is still the one read (its resourceVersion).
func (g *Registrations) Mark(ctx context.Context, d link.Declaration, key link.ConsumerKey) error {
	l, err := g.entryOf(ctx, d)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(l.Status.Consumers, func(c operatorv1alpha1.LinkConsumerStatus) bool { return keyOf(c) == key })
	if i < 0 {
		return nil
	}
	c := &l.Status.Consumers[i]
	if !c.Available || !link.MayRegister(d, c.KcpShard, c.BaseURL) {
		return nil
	}
	shards, err := g.Kcp(d.Namespace, d.RootShard)
	if err != nil {
		return err
	}
	got, err := get(ctx, shards, c.KcpShard)
	if err != nil || !toMark(d, c, got) {
		return err
	}
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, got.GetResourceVersion(), kcphealth.AnnotationShardUID, c.UID)
	if _, err := shards.Patch(ctx, c.KcpShard, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	klog.FromContext(ctx).WithName("link-listener").Info("Marked kcp's Shard as a linked Shard's", "link", d.Namespace+"/"+d.Name,
		"consumer", key, "uid", c.UID, "kcpShard", c.KcpShard)
	return nil
}

// Deregister deletes kcp's Shard of the linked Shard key, asked under uid, of the Link d: the
// verdict's status is 200 or 204 once kcp has it no more, 403 with a refusal, 409 with the
// reason it is left in place; an error is kcp not answering.
func (g *Registrations) Deregister(ctx context.Context, d link.Declaration, key link.ConsumerKey, uid string) (link.Reason, int, error) {
	l, err := g.entryOf(ctx, d)
	if errors.Is(err, errReplaced) {
		return link.Replaced, http.StatusConflict, nil
	}
	if err != nil {
		return "", 0, err
	}
	c, reason, status := consumerEntry(l.Status.Consumers, key, uid)
	if c == nil {
		return reason, status, nil
	}
	shards, err := g.Kcp(d.Namespace, d.RootShard)
	if err != nil {
		return noKcp(err)
	}
	got, err := get(ctx, shards, c.KcpShard)
	if err != nil {
		return noKcp(err)
	}
	if reason, status := registration(c, got); status != http.StatusOK {
		return reason, status, nil
	}
	kcpUID := got.GetUID()
	err = shards.Delete(ctx, c.KcpShard, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &kcpUID}})
	switch {
	case err == nil:
		return "", http.StatusOK, nil
	case apierrors.IsNotFound(err):
		return "", http.StatusNoContent, nil
	case apierrors.IsConflict(err):
		return link.Replaced, http.StatusConflict, nil
	}
	return noKcp(err)
}

// noKcp is the verdict of a kcp that cannot be asked: 409 NoKcp when none will be, else the
// error (503, asked again).
func noKcp(err error) (link.Reason, int, error) {
	if errors.Is(err, ErrNoRootShard) || errors.Is(err, kcpclient.ErrNoDialer) {
		return NoKcp, http.StatusConflict, nil
	}
	return "", 0, err
}

// deregister serves POST /v1/deregister/{kind}: Registrations.Deregister of the consumer
// the body names. A refusal is the listener's bare 403, told to the log and the Link; a 409
// carries its reason, as {"reason":...}; a kcp that does not answer is a 503 with Retry-After.
func (s *Server) deregister(w http.ResponseWriter, r *http.Request) {
	a, _ := link.AuthorizedFrom(r.Context())
	var req link.DeregisterRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() || req.Consumer.Namespace == "" || req.Consumer.Name == "" || req.Consumer.UID == "" {
		http.Error(w, "the body is no DeregisterRequest naming a consumer", http.StatusBadRequest)
		return
	}
	key := link.ConsumerKey{Kind: a.Request.Kind, Namespace: req.Consumer.Namespace, Name: req.Consumer.Name}
	ctx, cancel := context.WithTimeout(r.Context(), kcpTimeout)
	defer cancel()
	reason, status, err := s.cfg.Registrations.Deregister(ctx, a.Declaration, key, req.Consumer.UID)
	switch {
	case err != nil:
		s.log(r.Context(), a, "The link listener could not deregister a linked Shard from kcp", "consumer", key, "err", err.Error())
		w.Header().Set("Retry-After", retryAfterSeconds(retryKcp))
		http.Error(w, "", http.StatusServiceUnavailable)
	case status == http.StatusForbidden:
		s.refuse(w, r, a, reason, fmt.Sprintf("deregistering %s %s/%s (uid %s)", key.Kind, key.Namespace, key.Name, req.Consumer.UID))
	case status == http.StatusConflict:
		s.log(r.Context(), a, "Left kcp's Shard of a linked Shard in place", "consumer", key, "reason", reason)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = fmt.Fprintf(w, `{"reason":%q}`, reason)
	default:
		s.log(r.Context(), a, "Deregistered a linked Shard from kcp", "consumer", key)
		if l := s.linkToTell(a.Declaration); l != nil && status == http.StatusOK {
			s.cfg.Recorder.Eventf(l, corev1.EventTypeNormal, "Deregistered", "kcp's Shard of the linked %s %s/%s was deleted from the root workspace",
				key.Kind, key.Namespace, key.Name)
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// linkToTell is the Link d to record an Event on, nil when there is no recorder or no such Link.
func (s *Server) linkToTell(d link.Declaration) *operatorv1alpha1.Link {
	if s.cfg.Recorder == nil {
		return nil
	}
	return s.link(d)
}

func retryAfterSeconds(d time.Duration) string { return fmt.Sprint(int(d.Seconds())) }

// Marking is events, the handler of POST /v1/events/{kind}, followed, once it recorded a
// Shard's report (204), by Mark of that Shard, bounded by kcpTimeout; a failure is logged, and
// the next report tries again. It forgets what events forgets.
func (g *Registrations) Marking(events http.Handler) http.Handler { return marking{next: events, g: g} }

type marking struct {
	next http.Handler
	g    *Registrations
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (m marking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &statusRecorder{ResponseWriter: w}
	m.next.ServeHTTP(rec, r)
	a, ok := link.AuthorizedFrom(r.Context())
	var key link.ConsumerKey
	if rec.status != http.StatusNoContent || !ok || a.Request.Kind != link.Shard || json.Unmarshal(body, &key) != nil || key.Kind != link.Shard {
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), kcpTimeout)
	defer cancel()
	if err := m.g.Mark(ctx, a.Declaration, key); err != nil {
		klog.FromContext(ctx).WithName("link-listener").V(2).Info("Could not mark kcp's Shard of a linked Shard; the next report tries again",
			"link", a.Declaration.Namespace+"/"+a.Declaration.Name, "consumer", key, "err", err.Error())
	}
}

// Forget forwards to events.
func (m marking) Forget(uid string) {
	if f, ok := m.next.(interface{ Forget(uid string) }); ok {
		f.Forget(uid)
	}
}
