package controller

import (
	"context"
	"errors"
	"net"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// The reasons of the Synced condition, and of the Warning Event of a failed reconcile. They
// are part of the API: keep them stable. A failure's reason says what kind of refusal it
// was, so that a user (or an alert) tells a missing RBAC rule from an overloaded or
// unreachable host cluster without reading the message.
const (
	// ReasonReconciled is Synced=True: the last reconcile wrote what it had to.
	ReasonReconciled = "Reconciled"
	// ReasonForbidden: the host cluster's RBAC denies the server a verb on a resource.
	ReasonForbidden = "Forbidden"
	// ReasonUnauthorized: the host cluster does not accept the server's credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonTooManyRequests: API priority and fairness, or --max-requests-inflight, throttled us.
	ReasonTooManyRequests = "TooManyRequests"
	// ReasonTimeout: the host cluster did not answer in time.
	ReasonTimeout = "Timeout"
	// ReasonConflict: someone else wrote the object between our read and our write.
	ReasonConflict = "Conflict"
	// ReasonInvalid: the host cluster refused an object as invalid (a webhook or a policy).
	ReasonInvalid = "Invalid"
	// ReasonHostUnavailable: the host cluster is unreachable or failing.
	ReasonHostUnavailable = "HostUnavailable"
	// ReasonReconcileFailed is any other failure.
	ReasonReconcileFailed = "ReconcileFailed"
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
		return ReasonReconciled
	case errors.As(err, &missing):
		return ReasonCABundleSecretNotFound
	case errors.As(err, &conflict):
		return ReasonNameConflict
	case apierrors.IsForbidden(err):
		return ReasonForbidden
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized
	case apierrors.IsTooManyRequests(err):
		return ReasonTooManyRequests
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), errors.Is(err, context.DeadlineExceeded), isNetTimeout(err):
		return ReasonTimeout
	case apierrors.IsConflict(err):
		return ReasonConflict
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return ReasonInvalid
	case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return ReasonHostUnavailable
	}
	return ReasonReconcileFailed
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
