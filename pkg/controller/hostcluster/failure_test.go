package hostcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// timeoutError is a transport error that timed out, as net/http returns one.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var _ net.Error = timeoutError{}

func TestFailureReason(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	// wrapped is err as ApplyIfChanged returns it: with the object's kind and name around it.
	wrapped := func(err error) error { return fmt.Errorf("applying Deployment ns/root-kcp: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no error", nil, operatorv1alpha1.ReasonReconciled},
		{"RBAC denies a verb", wrapped(apierrors.NewForbidden(deployments, "root-kcp", errors.New(`cannot patch resource "deployments"`))), operatorv1alpha1.ReasonForbidden},
		{"credentials refused", wrapped(apierrors.NewUnauthorized("token expired")), operatorv1alpha1.ReasonUnauthorized},
		{"throttled", wrapped(apierrors.NewTooManyRequests("too many requests", 1)), operatorv1alpha1.ReasonTooManyRequests},
		{"server timeout", wrapped(apierrors.NewServerTimeout(deployments, "patch", 1)), operatorv1alpha1.ReasonTimeout},
		{"gateway timeout", wrapped(apierrors.NewTimeoutError("request did not complete", 1)), operatorv1alpha1.ReasonTimeout},
		{"client deadline", wrapped(context.DeadlineExceeded), operatorv1alpha1.ReasonTimeout},
		{"transport timeout", wrapped(&net.OpError{Op: "dial", Err: timeoutError{}}), operatorv1alpha1.ReasonTimeout},
		{"conflict", wrapped(apierrors.NewConflict(deployments, "root-kcp", errors.New("the object has been modified"))), operatorv1alpha1.ReasonConflict},
		{"invalid", wrapped(apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "root-kcp",
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be positive")})), operatorv1alpha1.ReasonInvalid},
		{"webhook denied", wrapped(apierrors.NewBadRequest("admission webhook denied the request")), operatorv1alpha1.ReasonInvalid},
		{"unavailable", wrapped(apierrors.NewServiceUnavailable("shutting down")), operatorv1alpha1.ReasonHostUnavailable},
		{"internal error", wrapped(apierrors.NewInternalError(errors.New("etcd is down"))), operatorv1alpha1.ReasonHostUnavailable},
		{"connection refused", wrapped(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), operatorv1alpha1.ReasonHostUnavailable},
		{"a user's CA bundle Secret missing", fmt.Errorf("realizing bundles: %w", &MissingCABundleError{Name: "partner-ca"}), operatorv1alpha1.ReasonCABundleSecretNotFound},
		{"anything else", errors.New("reading the CA Secret root-ca: no certificate"), operatorv1alpha1.ReasonReconcileFailed},
		{"not found is not a refusal", wrapped(apierrors.NewNotFound(deployments, "root-kcp")), operatorv1alpha1.ReasonReconcileFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, FailureReason(tc.err))
		})
	}
}

func TestFailureMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want func(t *testing.T, msg string)
	}{{
		name: "a 403 names the verb and the resource",
		err: fmt.Errorf("applying Deployment ns/root-kcp: %w", apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "root-kcp",
			errors.New(`User "system:serviceaccount:kcp-setups:kcp-setups" cannot patch resource "deployments" in API group "apps" in the namespace "ns"`))),
		want: func(t *testing.T, msg string) {
			assert.Contains(t, msg, `applying Deployment ns/root-kcp: deployments.apps "root-kcp" is forbidden`)
			assert.Contains(t, msg, `cannot patch resource "deployments" in API group "apps"`)
		},
	}, {
		name: "a long error is cut on a character boundary",
		err:  errors.New(strings.Repeat("é", maxFailureMessage)),
		want: func(t *testing.T, msg string) {
			assert.LessOrEqual(t, len(msg), maxFailureMessage)
			assert.True(t, strings.HasSuffix(msg, "é..."), "ends with a whole character: %q", msg[len(msg)-8:])
		},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.want(t, FailureMessage(tc.err)) })
	}
}
