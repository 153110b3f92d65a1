package cacheserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store/storetest"
)

func cacheServer(ns, name, tag, prefix string, endpoints ...string) operator.CacheServer {
	cs := operator.CacheServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if tag != "" {
		cs.Spec.Image = &operator.ImageSpec{Tag: tag}
	}
	if len(endpoints) > 0 {
		cs.Spec.Etcd = &operator.EtcdConfig{Endpoints: endpoints, Prefix: prefix}
	}
	return cs
}

// TestTwoCacheServersDoNotShareAnEtcdPrefix: a CacheServer whose cache server would keep its
// data in another's etcd under the same prefix is refused with a 422 at spec.etcd naming the
// other; before kcp v0.33 the prefix is always /cache, so a different spec.etcd.prefix does
// not keep them apart.
func TestTwoCacheServersDoNotShareAnEtcdPrefix(t *testing.T) {
	others := storetest.Lister{NewListFunc: func() runtime.Object { return &operator.CacheServerList{} }, Objects: []runtime.Object{
		new(cacheServer("team-a", "alpha", "", "/alpha", "https://etcd.team-a.svc:2379")),
		new(cacheServer("team-a", "embedded", "", "")),
		new(cacheServer("team-a", "next", "main", "/next", "https://etcd-next.team-a.svc:2379")),
		new(cacheServer("team-b", "beta", "", "", "https://etcd.team-b.svc:2379")),
	}}
	tests := []struct {
		name    string
		obj     operator.CacheServer
		refused string
	}{
		{name: "another etcd", obj: cacheServer("team-a", "gamma", "", "", "https://etcd-2.team-a.svc:2379")},
		{name: "an embedded etcd", obj: cacheServer("team-a", "gamma", "", "")},
		{name: "the same etcd, another prefix that v0.32 ignores", obj: cacheServer("team-a", "gamma", "v0.32.3", "/gamma", "etcd.team-a.svc:2379"),
			refused: `spec.etcd: Invalid value: "etcd.team-a.svc:2379": CacheServer alpha keeps its data in the etcd at etcd.team-a.svc:2379 under /cache too`},
		{name: "the same etcd, written otherwise", obj: cacheServer("team-a", "gamma", "", "", "http://ETCD.team-a.svc:2379/", "https://other:2379"),
			refused: "CacheServer alpha keeps its data"},
		{name: "the same etcd, another prefix on a release that honours it", obj: cacheServer("team-a", "gamma", "main", "/gamma", "https://etcd-next.team-a.svc:2379")},
		{name: "the same etcd and prefix on a release that honours it", obj: cacheServer("team-a", "gamma", "main", "/next/", "https://etcd-next.team-a.svc:2379"),
			refused: "CacheServer next keeps its data in the etcd at https://etcd-next.team-a.svc:2379 under /next too"},
		{name: "an etcd of another namespace's CacheServer", obj: cacheServer("team-a", "gamma", "", "", "https://etcd.team-b.svc:2379")},
		{name: "the CacheServer itself, stored (an apply that creates)", obj: cacheServer("team-a", "alpha", "", "/alpha", "https://etcd.team-a.svc:2379")},
	}
	n := store.NeighboursOf(context.Background(), map[string]rest.Lister{"cacheservers": others})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := EtcdUnshared(context.Background(), n, &tc.obj, nil)
			if tc.refused == "" {
				require.NoError(t, err)
				return
			}
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusUnprocessableEntity, status.Status().Code)
			assert.Contains(t, err.Error(), tc.refused)
		})
	}
	// An update that changes neither the etcd nor the image is not checked again.
	shared := cacheServer("team-a", "gamma", "", "", "https://etcd.team-a.svc:2379")
	require.NoError(t, EtcdUnshared(context.Background(), n, &shared, &shared))
	moved := cacheServer("team-a", "gamma", "", "", "https://etcd-2.team-a.svc:2379")
	require.Error(t, EtcdUnshared(context.Background(), n, &shared, &moved), "an update onto another's etcd is")
}
