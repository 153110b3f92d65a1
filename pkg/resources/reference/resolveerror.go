package reference

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// What is wrong with a reference Secret, for errors.Is.
var (
	// ErrNotFound: there is no Secret.
	ErrNotFound = errors.New("reference Secret not found")
	// ErrNotLabelled: a Secret is there, without the label Label.
	ErrNotLabelled = errors.New("reference Secret not labelled")
	// ErrWrongType: the Secret's type is not the expected reference's. Such a Secret is
	// refused whatever its content: it was not written as this kind of reference.
	ErrWrongType = errors.New("reference Secret of another type")
	// ErrMissingKey: a key of the reference is absent or empty.
	ErrMissingKey = errors.New("reference Secret key missing")
	// ErrMalformed: a key holds no https URL, no PEM certificate or no private key.
	ErrMalformed = errors.New("reference Secret key malformed")
	// ErrKeyMismatch: a private key is not the key of the certificate it comes with.
	ErrKeyMismatch = errors.New("reference Secret key pair mismatch")
	// ErrNotCA: a certificate that must be a CA's is not.
	ErrNotCA = errors.New("reference Secret certificate not a CA")
)

// Error is why a reference Secret cannot be used, shaped for a status condition: Reason is
// operatorv1alpha1.ReasonReferenceSecretNotFound, operatorv1alpha1.ReasonReferenceSecretNotLabelled or operatorv1alpha1.ReasonReferenceSecretInvalid, and the message names
// the Secret and the key at fault (or the command that labels it). It never quotes a key's
// content, so it may go to status, Events and logs.
type Error struct {
	Reason  string
	Message string
	// cause is one of the Err* sentinels.
	cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the sentinel (ErrMissingKey, ErrWrongType, ...) saying what is wrong.
func (e *Error) Unwrap() error { return e.cause }

// NotFound is the error of a consumer whose referenced Secret namespace/name is not there.
func NotFound(namespace, name string) *Error {
	return &Error{Reason: operatorv1alpha1.ReasonReferenceSecretNotFound, Message: fmt.Sprintf("Secret %s/%s not found", namespace, name), cause: ErrNotFound}
}

// NotLabelled is the error of a consumer whose referenced Secret namespace/name is there
// without the label Label: its message names the Secret and the command that labels it as
// a copy of r.
func NotLabelled(namespace, name string, r Reference) *Error {
	return &Error{Reason: operatorv1alpha1.ReasonReferenceSecretNotLabelled, Message: fmt.Sprintf(
		"Secret %s/%s exists but is not labelled %s, and the server reads only labelled copies: kubectl label secret %s -n %s %s=%s",
		namespace, name, Label, name, namespace, Label, r), cause: ErrNotLabelled}
}

// Invalid is a operatorv1alpha1.ReasonReferenceSecretInvalid error about the Secret s, whose
// cause is one of the Err* sentinels (or another package's, such as a link bootstrap's). Its
// message must name keys, never quote their content.
func Invalid(s *corev1.Secret, cause error, format string, args ...any) *Error {
	return &Error{Reason: operatorv1alpha1.ReasonReferenceSecretInvalid, Message: fmt.Sprintf("Secret %s/%s ", s.Namespace, s.Name) + fmt.Sprintf(format, args...), cause: cause}
}

// Problem is an error shaped like the resolver's, with reason and cause of another package's
// (a link's bundles not received yet): its message must name Secrets and keys, never quote
// their content.
func Problem(reason string, cause error, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...), cause: cause}
}
