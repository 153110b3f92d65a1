package remote

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// StatusError is an answer of the listener other than the route's success: it keeps the
// HTTP status, so that a caller tells the home's refusal (403, and any other 4xx but 408
// and 429, which asking again does not change) from an outage (429, 5xx), and a network
// error, which is not a StatusError, from both.
type StatusError struct {
	// Route is what was asked, such as "POST /v1/renew".
	Route string
	// Code is the HTTP status.
	Code int
	// Reason is the body's reason, such as Forbidden: the listener never says more.
	Reason string
	// RetryAfter is the Retry-After of a 429 or a 503, zero when there is none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("the link's listener answered %s with %d %s", e.Route, e.Code, http.StatusText(e.Code))
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(", retry after %s", e.RetryAfter)
	}
	return s
}

// IsRefused reports whether err is the home's refusal of the request itself: a 403 (the
// link is not, or no longer, admitted for what was asked), or another 4xx but 408 and 429.
// Asking again the same does not change the answer.
func IsRefused(err error) bool {
	var s *StatusError
	if !errors.As(err, &s) {
		return false
	}
	return s.Code >= 400 && s.Code < 500 && s.Code != http.StatusRequestTimeout && s.Code != http.StatusTooManyRequests
}

// IsForbidden reports whether err is a 403 of the listener.
func IsForbidden(err error) bool {
	var s *StatusError
	return errors.As(err, &s) && s.Code == http.StatusForbidden
}

// RetryAfter is the wait the listener asked for in err (a 429 or 503 with Retry-After).
func RetryAfter(err error) (time.Duration, bool) {
	var s *StatusError
	if errors.As(err, &s) && s.RetryAfter > 0 {
		return s.RetryAfter, true
	}
	return 0, false
}

// retryAfterHeader reads a Retry-After of whole seconds, as the listener writes it; zero for
// none or another form.
func retryAfterHeader(h http.Header) time.Duration {
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}
