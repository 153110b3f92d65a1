package framework

import (
	"errors"
	"regexp"
	"strings"
)

// reconcileLine is the server's log line of one reconcile (pkg/controller's Loop, at
// --vmodule=queue=4): the controller, the object's key and the result.
var reconcileLine = regexp.MustCompile(`"Finished syncing" controller="([^"]+)" key="([^"]+)" result="([^"]+)"`)

// Reconciles counts the reconciles of the stack's server, in every run of it so far (its
// log is appended to across restarts), of the objects in namespace: by "<controller>/<name>"
// and result ("rootshard/root/success"), and by result alone ("success", "error"). It needs
// Options.LogReconciles.
func (s *Stack) Reconciles(namespace string) (map[string]int, error) {
	if !s.Options().LogReconciles {
		return nil, errors.New("the stack's server does not log its reconciles: start the stack with Options.LogReconciles")
	}
	return countReconciles(s.ServerLog(), namespace), nil
}

// countReconciles counts the reconcile lines of log for objects in namespace.
func countReconciles(log, namespace string) map[string]int {
	counts := map[string]int{}
	for _, m := range reconcileLine.FindAllStringSubmatch(log, -1) {
		ns, name, ok := strings.Cut(m[2], "/")
		if !ok || ns != namespace {
			continue
		}
		counts[m[1]+"/"+name+"/"+m[3]]++
		counts[m[3]]++
	}
	return counts
}
