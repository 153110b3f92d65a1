package controller

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
		{"no error", nil, ReasonReconciled},
		{"RBAC denies a verb", wrapped(apierrors.NewForbidden(deployments, "root-kcp", errors.New(`cannot patch resource "deployments"`))), ReasonForbidden},
		{"credentials refused", wrapped(apierrors.NewUnauthorized("token expired")), ReasonUnauthorized},
		{"throttled", wrapped(apierrors.NewTooManyRequests("too many requests", 1)), ReasonTooManyRequests},
		{"server timeout", wrapped(apierrors.NewServerTimeout(deployments, "patch", 1)), ReasonTimeout},
		{"gateway timeout", wrapped(apierrors.NewTimeoutError("request did not complete", 1)), ReasonTimeout},
		{"client deadline", wrapped(context.DeadlineExceeded), ReasonTimeout},
		{"transport timeout", wrapped(&net.OpError{Op: "dial", Err: timeoutError{}}), ReasonTimeout},
		{"conflict", wrapped(apierrors.NewConflict(deployments, "root-kcp", errors.New("the object has been modified"))), ReasonConflict},
		{"invalid", wrapped(apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "root-kcp",
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be positive")})), ReasonInvalid},
		{"webhook denied", wrapped(apierrors.NewBadRequest("admission webhook denied the request")), ReasonInvalid},
		{"unavailable", wrapped(apierrors.NewServiceUnavailable("shutting down")), ReasonHostUnavailable},
		{"internal error", wrapped(apierrors.NewInternalError(errors.New("etcd is down"))), ReasonHostUnavailable},
		{"connection refused", wrapped(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), ReasonHostUnavailable},
		{"a user's CA bundle Secret missing", fmt.Errorf("realizing bundles: %w", &MissingCABundleError{Name: "partner-ca"}), ReasonCABundleSecretNotFound},
		{"anything else", errors.New("reading the CA Secret root-ca: no certificate"), ReasonReconcileFailed},
		{"not found is not a refusal", wrapped(apierrors.NewNotFound(deployments, "root-kcp")), ReasonReconcileFailed},
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
