package home

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/link"
)

// refused is link.Listener's Refused: each refusal of its checks and limits.
func (s *Server) refused(r link.Refusal) { s.tell(r, "") }

// tell writes a refusal to the log (reason, Link, remote address, what was asked, and the
// detail of a CSR's refusal) and, when it has a declaration that is still the Link's (by
// its UID), to a Warning Event on the Link whose reason is the refusal's. Neither holds a
// certificate or a key: a CSR's refusal names only its subject, SANs or usages.
func (s *Server) tell(r link.Refusal, detail string) {
	kv := []any{"reason", r.Reason, "status", r.Status, "remoteAddr", r.RemoteAddr, "operation", r.Request.Operation}
	if r.Request.Kind != "" {
		kv = append(kv, "kind", r.Request.Kind)
	}
	if r.Request.Role != "" {
		kv = append(kv, "role", r.Request.Role)
	}
	if r.Declaration != nil {
		kv = append(kv, "link", r.Declaration.Namespace+"/"+r.Declaration.Name)
	}
	if detail != "" {
		kv = append(kv, "detail", detail)
	}
	klog.Background().WithName("link-listener").Info("Refused a link request", kv...)
	if r.Declaration == nil || s.cfg.Recorder == nil {
		return
	}
	l := s.link(*r.Declaration)
	if l == nil {
		return
	}
	msg := fmt.Sprintf("The link listener refused a %s from %s", asked(r.Request), r.RemoteAddr)
	if detail != "" {
		msg += ": " + detail
	}
	s.cfg.Recorder.Event(l, corev1.EventTypeWarning, string(r.Reason), msg)
}

// asked says what a request asked, for a message.
func asked(r link.Request) string {
	switch r.Operation {
	case link.Sign:
		return fmt.Sprintf("signature of a %s certificate by the %s CA", r.Kind, r.Role)
	case "":
		return "request of no known route"
	}
	if r.Kind != "" {
		return fmt.Sprintf("%s request for a %s", r.Operation, r.Kind)
	}
	return string(r.Operation) + " request"
}

// log logs a failure of a request a Link's remote made.
func (s *Server) log(ctx context.Context, a link.Authorized, msg string, kv ...any) {
	klog.FromContext(ctx).WithName("link-listener").Info(msg,
		append([]any{"link", a.Declaration.Namespace + "/" + a.Declaration.Name, "operation", a.Request.Operation}, kv...)...)
}
