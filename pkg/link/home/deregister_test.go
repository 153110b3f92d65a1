package home

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/link"
)

const (
	remoteBaseURL = "https://shard-1-shard-kcp.remote.svc.cluster.local:6443"
	remoteUID     = "uid-remote-shard-1"
)

var (
	deregLink = link.Declaration{Namespace: "a", Name: "eu-1", UID: "uid-eu-1", RootShard: "root", Identity: "eu-1.links.example.com",
		Consumers: []link.ConsumerKind{link.Shard}, DNSNames: []string{"*.remote.svc.cluster.local"}}
	otherLink = link.Declaration{Namespace: "a", Name: "eu-2", UID: "uid-eu-2", RootShard: "root", Identity: "eu-2.links.example.com",
		Consumers: []link.ConsumerKind{link.Shard}, DNSNames: []string{"*.remote.svc.cluster.local"}}
	shardKey    = link.ConsumerKey{Kind: link.Shard, Namespace: "remote", Name: "shard-1"}
	listedShard = operatorv1alpha1.LinkConsumerStatus{Kind: "Shard", Namespace: "remote", Name: "shard-1", UID: remoteUID,
		Available: true, KcpShard: "shard-1", BaseURL: remoteBaseURL}
)

// statusLinks is a LinkStatusClient of Links held in memory.
type statusLinks map[string]*operatorv1alpha1.Link

func (s statusLinks) Get(_ context.Context, namespace, name string) (*operatorv1alpha1.Link, error) {
	if l, ok := s[namespace+"/"+name]; ok {
		return l.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "operator.kcp.io", Resource: "links"}, name)
}

func (s statusLinks) UpdateStatus(_ context.Context, l *operatorv1alpha1.Link) (*operatorv1alpha1.Link, error) {
	s[l.Namespace+"/"+l.Name] = l.DeepCopy()
	return l, nil
}

// linkListing is the Link d whose status lists consumers.
func linkListing(d link.Declaration, consumers ...operatorv1alpha1.LinkConsumerStatus) *operatorv1alpha1.Link {
	return &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name, UID: types.UID(d.UID)},
		Status: operatorv1alpha1.LinkStatus{Consumers: consumers}}
}

// kcpShard is kcp's Shard name at baseURL, marked with mark unless empty.
func kcpShard(name, baseURL, mark string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.kcp.io/v1alpha1", "kind": "Shard",
		"metadata": map[string]any{"name": name, "uid": "kcp-uid-" + name}, "spec": map[string]any{"baseURL": baseURL}}}
	if mark != "" {
		u.SetAnnotations(map[string]string{kcphealth.AnnotationShardUID: mark})
	}
	return u
}

// registrations are Registrations over the Links links and a kcp holding objects.
func registrations(links statusLinks, objects ...runtime.Object) (*Registrations, dynamic.ResourceInterface) {
	kcp := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{kcphealth.Shards: "ShardList"},
		objects...).Resource(kcphealth.Shards)
	return &Registrations{Links: links, Kcp: func(namespace, rootShard string) (dynamic.ResourceInterface, error) {
		if namespace != "a" || rootShard != "root" {
			return nil, ErrNoRootShard
		}
		return kcp, nil
	}}, kcp
}

// TestDeregisterDecides: kcp's Shard is deleted only for a consumer the Link lists under the
// UID asked, while it carries that UID and routes to the base URL recorded; every other case
// leaves it, with a 403 refusal or a 409 and why.
func TestDeregisterDecides(t *testing.T) {
	another := listedShard
	another.Name, another.UID = "shard-2", "uid-remote-shard-2"
	unregistered := listedShard
	unregistered.BaseURL = ""
	for _, tc := range []struct {
		name    string
		d       link.Declaration
		listed  []operatorv1alpha1.LinkConsumerStatus
		uid     string
		kcp     *unstructured.Unstructured
		reason  link.Reason
		status  int
		deleted bool
	}{
		{name: "its own registration", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), status: http.StatusOK, deleted: true},
		{name: "already gone", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			status: http.StatusNoContent},
		{name: "unknown consumer", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{another}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), reason: link.UnknownConsumer, status: http.StatusForbidden},
		{name: "another Link's consumer", d: otherLink, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), reason: link.UnknownConsumer, status: http.StatusForbidden},
		{name: "UID mismatch", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: "uid-of-a-shard-before",
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), reason: link.ConsumerMismatch, status: http.StatusForbidden},
		{name: "no base URL recorded", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{unregistered}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), reason: link.NotRegistered, status: http.StatusConflict},
		{name: "base URL mismatch", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			kcp: kcpShard("shard-1", "https://elsewhere.example.com:6443", remoteUID), reason: link.BaseURLMismatch, status: http.StatusConflict},
		{name: "mark missing", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, ""), reason: link.NotMarked, status: http.StatusConflict},
		{name: "another mark", d: deregLink, listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, "uid-of-a-local-shard"), reason: link.NotMarked, status: http.StatusConflict},
		{name: "the Link made again", d: link.Declaration{Namespace: "a", Name: "eu-1", UID: "uid-of-the-link-before", RootShard: "root"},
			listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), reason: link.Replaced, status: http.StatusConflict},
		{name: "no RootShard", d: link.Declaration{Namespace: "a", Name: "eu-3", UID: "uid-eu-3", RootShard: "gone"},
			listed: []operatorv1alpha1.LinkConsumerStatus{listedShard}, uid: remoteUID,
			kcp: kcpShard("shard-1", remoteBaseURL, remoteUID), reason: NoKcp, status: http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			links := statusLinks{
				"a/eu-1": linkListing(deregLink, tc.listed...),
				"a/eu-2": linkListing(otherLink),
				"a/eu-3": linkListing(link.Declaration{Namespace: "a", Name: "eu-3", UID: "uid-eu-3"}, tc.listed...),
			}
			var objects []runtime.Object
			if tc.kcp != nil {
				objects = append(objects, tc.kcp)
			}
			g, kcp := registrations(links, objects...)
			reason, status, err := g.Deregister(t.Context(), tc.d, shardKey, tc.uid)
			require.NoError(t, err)
			assert.Equal(t, tc.reason, reason)
			assert.Equal(t, tc.status, status)
			_, err = kcp.Get(t.Context(), "shard-1", metav1.GetOptions{})
			assert.Equal(t, tc.deleted || tc.kcp == nil, apierrors.IsNotFound(err), "kcp's Shard deleted: %v", err)
		})
	}
}

// TestDeregisterWhenKcpDoesNotAnswer: a kcp that does not answer is an error (503, asked
// again); a home that dials no kcp is a 409.
func TestDeregisterWhenKcpDoesNotAnswer(t *testing.T) {
	links := statusLinks{"a/eu-1": linkListing(deregLink, listedShard)}
	g := &Registrations{Links: links, Kcp: func(string, string) (dynamic.ResourceInterface, error) {
		return nil, &kcpclient.NotReadyError{Reason: "the server's identity toward kcp is not issued yet"}
	}}
	_, _, err := g.Deregister(t.Context(), deregLink, shardKey, remoteUID)
	assert.Error(t, err)
	g.Kcp = func(string, string) (dynamic.ResourceInterface, error) { return nil, kcpclient.ErrNoDialer }
	reason, status, err := g.Deregister(t.Context(), deregLink, shardKey, remoteUID)
	require.NoError(t, err)
	assert.Equal(t, NoKcp, reason)
	assert.Equal(t, http.StatusConflict, status)
}

// TestMarkTiesARegistrationToItsShard: kcp's Shard is marked with the linked Shard's UID only
// when the Shard is Available at the base URL kcp's Shard routes to, which is within the
// Link's dnsNames, under a name other than root's, and carries no mark yet.
func TestMarkTiesARegistrationToItsShard(t *testing.T) {
	notAvailable := listedShard
	notAvailable.Available = false
	outside := listedShard
	outside.BaseURL = "https://root-kcp.a.svc.cluster.local:6443"
	root := listedShard
	root.KcpShard = "root"
	for _, tc := range []struct {
		name   string
		listed operatorv1alpha1.LinkConsumerStatus
		kcp    *unstructured.Unstructured
		mark   string
	}{
		{name: "registered at its base URL", listed: listedShard, kcp: kcpShard("shard-1", remoteBaseURL, ""), mark: remoteUID},
		{name: "marked already", listed: listedShard, kcp: kcpShard("shard-1", remoteBaseURL, "uid-of-a-local-shard"), mark: "uid-of-a-local-shard"},
		{name: "another base URL", listed: listedShard, kcp: kcpShard("shard-1", "https://elsewhere.example.com:6443", "")},
		{name: "not Available", listed: notAvailable, kcp: kcpShard("shard-1", remoteBaseURL, "")},
		{name: "a base URL outside the Link's dnsNames", listed: outside, kcp: kcpShard("shard-1", outside.BaseURL, "")},
		{name: "the root shard's name", listed: root, kcp: kcpShard("root", remoteBaseURL, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, kcp := registrations(statusLinks{"a/eu-1": linkListing(deregLink, tc.listed)}, tc.kcp)
			require.NoError(t, g.Mark(t.Context(), deregLink, shardKey))
			got, err := kcp.Get(t.Context(), tc.kcp.GetName(), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, tc.mark, got.GetAnnotations()[kcphealth.AnnotationShardUID])
		})
	}
}

// TestDeregisterRoute: the route answers 204 once kcp's Shard is gone, the bare 403 for a
// refusal, a 409 with its reason, a 503 with Retry-After when kcp does not answer, and a 400
// for a body that names no consumer.
func TestDeregisterRoute(t *testing.T) {
	links := statusLinks{"a/eu-1": linkListing(deregLink, listedShard)}
	g, _ := registrations(links, kcpShard("shard-1", remoteBaseURL, remoteUID))
	s := New(Config{Registrations: g})
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, link.DeregisterPath+"Shard", strings.NewReader(body))
		r = r.WithContext(link.WithAuthorized(r.Context(), link.Authorized{Declaration: deregLink,
			Request: link.Request{Operation: link.Deregister, Kind: link.Shard}}))
		w := httptest.NewRecorder()
		s.deregister(w, r)
		return w
	}
	consumer := `{"consumer":{"namespace":"remote","name":"shard-1","uid":"` + remoteUID + `"}}`
	assert.Equal(t, http.StatusNoContent, post(consumer).Code)
	assert.Equal(t, http.StatusNoContent, post(consumer).Code, "already gone")

	w := post(`{"consumer":{"namespace":"remote","name":"shard-1","uid":"another"}}`)
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.JSONEq(t, `{"reason":"Forbidden"}`, w.Body.String(), "a refusal says nothing")

	links["a/eu-1"].Status.Consumers[0].BaseURL = ""
	w = post(consumer)
	assert.Equal(t, http.StatusConflict, w.Code)
	assert.JSONEq(t, `{"reason":"NotRegistered"}`, w.Body.String())

	links["a/eu-1"].Status.Consumers[0].BaseURL = remoteBaseURL
	g.Kcp = func(string, string) (dynamic.ResourceInterface, error) { return nil, errors.New("connection refused") }
	w = post(consumer)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "10", w.Header().Get("Retry-After"))

	assert.Equal(t, http.StatusBadRequest, post(`{"consumer":{"namespace":"remote","name":"shard-1"}}`).Code)
	assert.Equal(t, http.StatusBadRequest, post(`{"consumer":{"namespace":"remote","name":"shard-1","uid":"u"},"more":1}`).Code)
}

// TestMarkingFollowsRecordedShardReports: a Shard's report that the events handler recorded
// (204) marks its kcp Shard; one it did not record marks nothing, and Forget reaches it.
func TestMarkingFollowsRecordedShardReports(t *testing.T) {
	links := statusLinks{"a/eu-1": linkListing(deregLink, listedShard)}
	g, kcp := registrations(links, kcpShard("shard-1", remoteBaseURL, ""))
	answer := http.StatusBadRequest
	events := &forgetful{status: &answer}
	h := g.Marking(events)
	report := func() {
		r := httptest.NewRequest(http.MethodPost, link.EventsPath+"Shard", strings.NewReader(`{"kind":"Shard","namespace":"remote","name":"shard-1"}`))
		r = r.WithContext(link.WithAuthorized(r.Context(), link.Authorized{Declaration: deregLink,
			Request: link.Request{Operation: link.ReportEvent, Kind: link.Shard}}))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	markOf := func() string {
		got, err := kcp.Get(t.Context(), "shard-1", metav1.GetOptions{})
		require.NoError(t, err)
		return got.GetAnnotations()[kcphealth.AnnotationShardUID]
	}
	report()
	assert.Empty(t, markOf(), "a report not recorded marks nothing")
	answer = http.StatusNoContent
	report()
	assert.Equal(t, remoteUID, markOf())
	assert.Equal(t, `{"kind":"Shard","namespace":"remote","name":"shard-1"}`, events.body, "the handler reads the whole body")
	h.(interface{ Forget(string) }).Forget("uid-eu-1")
	assert.Equal(t, "uid-eu-1", events.forgot)
}

// forgetful is an events handler answering status, which remembers the body it read and
// what it was told to forget.
type forgetful struct {
	status       *int
	body, forgot string
}

func (f *forgetful) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.body = string(b)
	w.WriteHeader(*f.status)
}

func (f *forgetful) Forget(uid string) { f.forgot = uid }
