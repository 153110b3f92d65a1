package kcphealth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
)

// TestEtcdHealth: etcd's /health answer, or why it could not be asked, makes EtcdReady.
func TestEtcdHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   int
		body   string
		status metav1.ConditionStatus
		reason string
	}{
		{"healthy", http.StatusOK, `{"health":"true","reason":""}`, metav1.ConditionTrue, operatorv1alpha1.ReasonEtcdHealthy},
		{"no leader", http.StatusServiceUnavailable, `{"health":"false","reason":"RAFT NO LEADER"}`, metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy},
		{"200 but not healthy", http.StatusOK, `{"health":"false"}`, metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy},
		{"not etcd", http.StatusOK, `<html>`, metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "/health", r.URL.Path)
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			r := Etcd(context.Background(), func() (*rest.Config, error) { return &rest.Config{Host: srv.URL}, nil })
			assert.Equal(t, tc.status, r.Status, r.Message)
			assert.Equal(t, tc.reason, r.Reason, r.Message)
		})
	}
	t.Run("credentials not issued", func(t *testing.T) {
		r := Etcd(context.Background(), func() (*rest.Config, error) {
			return nil, &kcpclient.NotReadyError{Reason: "Secret team-a/root-etcd-client is not issued yet"}
		})
		assert.Equal(t, operatorv1alpha1.ReasonWaitingForCredentials, r.Reason)
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		r := Etcd(context.Background(), func() (*rest.Config, error) { return &rest.Config{Host: url}, nil })
		assert.Equal(t, operatorv1alpha1.ReasonEtcdUnreachable, r.Reason)
		r = Etcd(context.Background(), func() (*rest.Config, error) { return nil, errors.New("no dialer") })
		assert.Equal(t, operatorv1alpha1.ReasonEtcdUnreachable, r.Reason)
	})
}
