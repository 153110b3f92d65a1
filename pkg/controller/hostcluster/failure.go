package hostcluster

import (
	"context"
	"errors"
	"net"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// maxFailureMessage bounds the message of a failure in a condition and an Event: an error
// that aggregates many may be long, and the status is read by every watcher.
const maxFailureMessage = 1024

// FailureReason is the stable reason of a reconcile's error, from the API status the host
// cluster answered with, or from the transport when it answered nothing.
func FailureReason(err error) string {
	var missing *MissingCABundleError
	var conflict *NameConflictError
	switch {
	case err == nil:
		return operatorv1alpha1.ReasonReconciled
	case errors.As(err, &missing):
		return operatorv1alpha1.ReasonCABundleSecretNotFound
	case errors.As(err, &conflict):
		return operatorv1alpha1.ReasonNameConflict
	case apierrors.IsForbidden(err):
		return operatorv1alpha1.ReasonForbidden
	case apierrors.IsUnauthorized(err):
		return operatorv1alpha1.ReasonUnauthorized
	case apierrors.IsTooManyRequests(err):
		return operatorv1alpha1.ReasonTooManyRequests
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), errors.Is(err, context.DeadlineExceeded), isNetTimeout(err):
		return operatorv1alpha1.ReasonTimeout
	case apierrors.IsConflict(err):
		return operatorv1alpha1.ReasonConflict
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return operatorv1alpha1.ReasonInvalid
	case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return operatorv1alpha1.ReasonHostUnavailable
	}
	return operatorv1alpha1.ReasonReconcileFailed
}

// FailureMessage is the message of a reconcile's error in a condition and an Event.
func FailureMessage(err error) string {
	msg := err.Error()
	if len(msg) > maxFailureMessage {
		cut := maxFailureMessage - 3
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}

func isNetTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}
