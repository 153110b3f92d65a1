package home

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// links is a LinkStatusClient over one stored Link, which counts reads and status writes,
// refuses a write of a stale read with a conflict, and can answer a conflict first.
type links struct {
	stored    *operatorv1alpha1.Link
	writes    int
	conflicts int
	gets      int
}

func (f *links) Get(_ context.Context, namespace, name string) (*operatorv1alpha1.Link, error) {
	f.gets++
	if f.stored == nil || f.stored.Namespace != namespace || f.stored.Name != name {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "operator.kcp.io", Resource: "links"}, name)
	}
	return f.stored.DeepCopy(), nil
}

func (f *links) UpdateStatus(_ context.Context, l *operatorv1alpha1.Link) (*operatorv1alpha1.Link, error) {
	if f.conflicts > 0 {
		f.conflicts--
		return nil, apierrors.NewConflict(schema.GroupResource{Group: "operator.kcp.io", Resource: "links"}, l.Name, nil)
	}
	if l.ResourceVersion != f.stored.ResourceVersion {
		// Written from a stale read, as the API refuses it.
		return nil, apierrors.NewConflict(schema.GroupResource{Group: "operator.kcp.io", Resource: "links"}, l.Name, nil)
	}
	f.writes++
	f.stored = l.DeepCopy()
	f.stored.ResourceVersion = strconv.Itoa(f.writes)
	return f.stored.DeepCopy(), nil
}

var (
	fpOld = strings.Repeat("0a", 32)
	fpNew = strings.Repeat("0b", 32)
)

func report(uid string, generation, sequence int64, trusted ...string) link.Event {
	return link.Event{ConsumerKey: link.ConsumerKey{Kind: link.Shard, Namespace: "b", Name: "s-1"}, UID: uid, Generation: generation, Sequence: sequence,
		State: link.ConsumerReport{Realized: true, CAs: map[pki.CA]link.CATrust{pki.ServerCA: {Trusted: trusted}}}}
}

// post sends ev (or the raw body) as the remote of the Link eu-1 reporting a consumer of kind.
func post(t *testing.T, e *Events, kind link.ConsumerKind, body any) *httptest.ResponseRecorder {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		raw = string(b)
	}
	r := httptest.NewRequest(http.MethodPost, link.EventsPath+string(kind), strings.NewReader(raw))
	d := link.Declaration{Namespace: "a", Name: "eu-1", UID: "link-uid", RootShard: "root", Consumers: []link.ConsumerKind{link.Shard}}
	r = r.WithContext(link.WithAuthorized(r.Context(), link.Authorized{Declaration: d, Request: link.Request{Operation: link.ReportEvent, Kind: kind}}))
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

func TestEventsMergeIntoTheLinksStatus(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f := &links{stored: &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eu-1", UID: "link-uid"}}}
	e := &Events{Links: f, Now: func() time.Time { return now }}
	consumer := func() operatorv1alpha1.LinkConsumerStatus {
		require.Len(t, f.stored.Status.Consumers, 1)
		return f.stored.Status.Consumers[0]
	}

	require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, report("u-1", 2, 10, fpOld)).Code)
	assert.Equal(t, 1, f.writes, "the first report is recorded")
	c := consumer()
	assert.Equal(t, operatorv1alpha1.LinkConsumerStatus{Kind: "Shard", Namespace: "b", Name: "s-1", UID: "u-1", Generation: 2, Sequence: 10,
		LastSeen: metav1.NewTime(now), Realized: true, Trust: []operatorv1alpha1.LinkConsumerCA{{CA: "server", Trusted: []string{fpOld}}}}, c)

	for name, ev := range map[string]link.Event{
		"a replay":             report("u-1", 2, 10, fpOld),
		"an older sequence":    report("u-1", 2, 9, fpNew),
		"an older generation":  report("u-1", 1, 11, fpNew),
		"the same, soon after": report("u-1", 2, 11, fpOld),
	} {
		require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, ev).Code, name)
		assert.Equal(t, 1, f.writes, "%s writes nothing", name)
	}

	now = now.Add(LastSeenResolution)
	post(t, e, link.Shard, report("u-1", 2, 12, fpOld))
	assert.Equal(t, 2, f.writes, "the same report a LastSeenResolution later marks it seen")
	assert.Equal(t, now, consumer().LastSeen.Time)

	f.conflicts = 1
	post(t, e, link.Shard, report("u-1", 3, 13, fpNew, fpOld))
	assert.Equal(t, 3, f.writes, "a new trust is written, after a conflict")
	assert.Equal(t, []string{fpOld, fpNew}, consumer().Trust[0].Trusted, "fingerprints as a sorted set")
	post(t, e, link.Shard, report("u-1", 3, 14, fpOld, fpNew))
	assert.Equal(t, 3, f.writes, "the same set in another order is the same report")

	post(t, e, link.Shard, report("u-2", 1, 1, fpNew))
	assert.Equal(t, "u-2", consumer().UID, "a consumer made again replaces the one before, whatever its numbers")
	post(t, e, link.Shard, report("u-1", 9, 99, fpOld))
	assert.Equal(t, "u-2", consumer().UID, "a late report of the replaced consumer changes nothing")
	assert.Equal(t, 4, f.writes)

	f.stored.UID = "another"
	assert.Equal(t, http.StatusConflict, post(t, e, link.Shard, report("u-2", 1, 2, fpOld)).Code, "the Link was made again")
	assert.Equal(t, 4, f.writes)
}

func TestEventsRefuseMalformedReports(t *testing.T) {
	f := &links{stored: &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eu-1", UID: "link-uid"}}}
	e := &Events{Links: f}
	badFingerprint := report("u-1", 1, 1, "AA")
	noUID := report("", 1, 1, fpOld)
	for name, tc := range map[string]struct {
		kind link.ConsumerKind
		body any
		want string
	}{
		"another kind than the route's": {link.FrontProxy, report("u-1", 1, 1, fpOld), "kind"},
		"an unknown field":              {link.Shard, `{"kind":"Shard","namespace":"b","name":"s-1","uid":"u","generation":1,"sequence":1,"state":{},"admin":true}`, "unknown field"},
		"two events":                    {link.Shard, `{"kind":"Shard"} {"kind":"Shard"}`, "not one Event"},
		"no JSON":                       {link.Shard, `kind: Shard`, "not one Event"},
		"a fingerprint that is none":    {link.Shard, badFingerprint, "event.trust[0].trusted[0]"},
		"no UID":                        {link.Shard, noUID, "event.uid"},
	} {
		w := post(t, e, tc.kind, tc.body)
		assert.Equal(t, http.StatusBadRequest, w.Code, name)
		assert.Contains(t, w.Body.String(), tc.want, name)
	}
	assert.Zero(t, f.writes)
	assert.Empty(t, f.stored.Status.Consumers)
}

// TestEventsReadTheLinkFromTheCache: with a cache, a report is merged against the cached
// Link; the API is read only on a conflict (the cache behind), or when the cache does not
// hold the Link of the report's UID.
func TestEventsReadTheLinkFromTheCache(t *testing.T) {
	f := &links{stored: &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eu-1", UID: "link-uid"}}}
	cached := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	e := &Events{Links: f, Cached: operatorlisters.NewLinkLister(cached)}
	sync := func() { require.NoError(t, cached.Update(f.stored.DeepCopy())) }
	sync()

	require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, report("u-1", 1, 1, fpOld)).Code)
	assert.Equal(t, 1, f.writes)
	assert.Zero(t, f.gets, "read from the cache")
	sync()
	require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, report("u-1", 1, 2, fpOld)).Code)
	assert.Equal(t, 1, f.writes, "the same report soon after writes nothing")
	assert.Zero(t, f.gets)

	f.conflicts = 1
	require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, report("u-1", 2, 3, fpNew)).Code)
	assert.Equal(t, 2, f.writes, "written after the conflict")
	assert.Equal(t, 1, f.gets, "the conflict reads the Link from the API, once")

	// The cache behind our own write: the merge against it conflicts, and the API decides.
	require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, report("u-1", 2, 3, fpNew)).Code)
	assert.Equal(t, 2, f.writes, "a replay, by the API's status")

	cached.Delete(f.stored)
	gets := f.gets
	require.Equal(t, http.StatusNoContent, post(t, e, link.Shard, report("u-1", 2, 4, fpNew)).Code)
	assert.Equal(t, gets+1, f.gets, "not in the cache: read from the API")
}
