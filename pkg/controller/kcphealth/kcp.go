package kcphealth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
)

// Shards is kcp's Shard API, served in its root workspace: one cluster-scoped object per
// shard, named as the shard (--shard-name), which front proxies route by.
var Shards = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "shards"}

// RootWorkspace is the workspace kcp's Shard objects live in.
const RootWorkspace = "root"

// Result is what kcp answered to a check: the KcpReady condition it makes.
type Result struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// maxKcpMessage bounds a condition's message made of what kcp answered.
const maxKcpMessage = 512

// Config returns a client config for a kcp server, or the error that keeps the server
// from building one (a *kcpclient.NotReadyError while its credentials are not issued).
type Config func() (*rest.Config, error)

// Failure is the reason and message of a failed request to kcp, what is the request in
// words ("asking kcp's /readyz").
func Failure(what string, err error) Result {
	var notReady *kcpclient.NotReadyError
	switch {
	case errors.As(err, &notReady):
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonWaitingForCredentials,
			truncate(fmt.Sprintf("%s: waiting for the server's credentials toward kcp: %v", what, err))}
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonKcpRefused,
			truncate(fmt.Sprintf("%s: kcp refused the server's identity: %v", what, err))}
	}
	// Everything else, a dial error, a timeout, a 5xx or a throttled request, passes with time.
	return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonKcpUnreachable,
		truncate(fmt.Sprintf("%s: kcp cannot be reached: %v", what, err))}
}

// NoDialer is what a health condition says on a server that is told that no kcp or
// managed etcd can be reached (--kcp-dialer=none, Host.NoKcpDialer), which asks neither:
// Unknown, and why.
func NoDialer(what string) Result {
	return Result{metav1.ConditionUnknown, operatorv1alpha1.ReasonNoKcpDialer, what + ": " + kcpclient.ErrNoDialer.Error()}
}

// Readyz asks a kcp server's /readyz: Ready on 200, NotReady with its failing checks on
// any other status, or why it could not be asked.
func Readyz(ctx context.Context, config Config) Result {
	const what = "asking kcp's /readyz"
	cfg, err := config()
	if err != nil {
		return Failure(what, err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Failure(what, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/readyz", nil)
	if err != nil {
		return Failure(what, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Failure(what, err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusOK:
		return Result{metav1.ConditionTrue, operatorv1alpha1.ReasonKcpReady, "kcp's /readyz answers 200"}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonKcpRefused,
			fmt.Sprintf("%s: kcp refused the server's identity (%d)", what, resp.StatusCode)}
	}
	return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonKcpNotReady,
		truncate(fmt.Sprintf("kcp's /readyz answered %d: %s", resp.StatusCode, readyzSummary(resp.Body)))}
}

// readyzSummary is what a failing /readyz says: its failing checks ("[-]etcd failed: …"),
// which are what an admin needs, else its first lines.
func readyzSummary(body io.Reader) string {
	var failing, first []string
	scanner := bufio.NewScanner(io.LimitReader(body, 16<<10))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[-]") {
			failing = append(failing, line)
		}
		if len(first) < 5 {
			first = append(first, line)
		}
	}
	lines := first
	if len(failing) > 0 {
		lines = failing
	}
	if len(lines) == 0 {
		return "(no body)"
	}
	return strings.Join(lines, "; ")
}

// AnnotationShardUID marks kcp's Shard object in the root workspace with the UID of the
// Shard it was registered for. kcp's shard creates the object on start, or updates the spec of
// one that exists and keeps its metadata; the server marks it the first time it sees it route
// to the shard's own base URL (ShardRegistered), and deletes it only while it carries that
// UID (DeleteShard): a Shard named after a shard registered elsewhere never deletes it.
const AnnotationShardUID = "operator.kcp.io/shard-uid"

// ShardRegistered checks kcp's Shard object name in the root workspace: it must exist,
// not be being deleted, and route to baseURL, the address the shard registers itself with
// (--shard-base-url), else front proxies send its workspaces elsewhere. It must carry the
// Shard's uid: one that carries none yet is marked with it (the registration is recorded);
// one that carries another's is another Shard's registration.
func ShardRegistered(ctx context.Context, root Config, name, baseURL, uid string) Result {
	what := fmt.Sprintf("reading kcp's Shard %q in the root workspace", name)
	shards, err := kcpShards(root)
	if err != nil {
		return Failure(what, err)
	}
	got, err := shards.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonShardNotRegistered,
			fmt.Sprintf("kcp's root workspace has no Shard %q: the shard has not registered itself", name)}
	case err != nil:
		return Failure(what, err)
	case got.GetDeletionTimestamp() != nil:
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonShardNotRegistered,
			fmt.Sprintf("kcp's Shard %q in the root workspace is being deleted", name)}
	}
	if url, _, _ := unstructured.NestedString(got.Object, "spec", "baseURL"); url != baseURL {
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonShardNotRegistered,
			truncate(fmt.Sprintf("kcp's Shard %q in the root workspace routes to %q, not to this shard's %q", name, url, baseURL))}
	}
	switch mark := got.GetAnnotations()[AnnotationShardUID]; {
	case uid == "":
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonShardNotRegistered,
			fmt.Sprintf("the Shard %q has no UID to mark kcp's Shard with", name)}
	case mark == "":
		// kcp's shard registered itself at this shard's address: record whose it is.
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, got.GetResourceVersion(), AnnotationShardUID, uid)
		if _, err := shards.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return Failure(fmt.Sprintf("marking kcp's Shard %q in the root workspace with the Shard's UID", name), err)
		}
	case mark != uid:
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonShardNotRegistered,
			truncate(fmt.Sprintf("kcp's Shard %q in the root workspace was registered for another Shard (%s %s), not for this one", name, AnnotationShardUID, mark))}
	}
	return Result{metav1.ConditionTrue, operatorv1alpha1.ReasonKcpReady,
		fmt.Sprintf("kcp's /readyz answers 200 and its Shard %q is registered in the root workspace", name)}
}

// NotThisShardsError is kcp's Shard object of a Shard's name that does not carry the Shard's
// UID: another shard's registration (the root shard registers itself as root, a shard
// joined elsewhere registers under its own name), which deregistering must leave in place.
type NotThisShardsError struct {
	Name, Mark, UID string
}

func (e *NotThisShardsError) Error() string {
	if e.Mark == "" {
		return fmt.Sprintf("kcp's Shard %q in the root workspace carries no %s: it was not registered for this Shard, and is left in place",
			e.Name, AnnotationShardUID)
	}
	return fmt.Sprintf("kcp's Shard %q in the root workspace carries %s %s, not this Shard's %s: it is another shard's registration, left in place",
		e.Name, AnnotationShardUID, e.Mark, e.UID)
}

// DeleteShard deletes kcp's Shard object name from the root workspace, if it carries uid,
// the Shard's, in AnnotationShardUID: one without it is another shard's, and is left (a
// NotThisShardsError), whatever it routes to. That it was not there is no error. The
// delete is held to the UID of kcp's object read, so that a registration made meanwhile is
// not deleted.
func DeleteShard(ctx context.Context, root Config, name, uid string) error {
	shards, err := kcpShards(root)
	if err != nil {
		return err
	}
	got, err := shards.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if mark := got.GetAnnotations()[AnnotationShardUID]; uid == "" || mark != uid {
		return &NotThisShardsError{Name: name, Mark: mark, UID: uid}
	}
	kcpUID := got.GetUID()
	if err := shards.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &kcpUID}}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// kcpShards is a client of kcp's Shard API in the workspace root points at.
func kcpShards(root Config) (dynamic.ResourceInterface, error) {
	cfg, err := root()
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return client.Resource(Shards), nil
}

// truncate bounds a message made of what kcp answered, on a character boundary.
func truncate(msg string) string {
	if len(msg) <= maxKcpMessage {
		return msg
	}
	cut := maxKcpMessage - 3
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "..."
}
