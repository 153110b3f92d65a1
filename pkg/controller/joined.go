package controller

import "github.com/kcp-setups/apiserver/pkg/controller/hostcluster"

// ReferenceInvalid reports a copy that cannot be used: ReferenceValid=False with the
// resolver's reason and message (they name the Secret and the key, never content), and an
// Event the first time. Anything else is an error to retry.
func (l Lifecycle[T, S]) ReferenceInvalid(obj T, status *S, err error) error {
	p, ok := hostcluster.ReferenceProblem(err)
	if !ok {
		return err
	}
	l.ReferenceMissing(obj, status, p.Reason, p.Message, "Secret")
	return nil
}
