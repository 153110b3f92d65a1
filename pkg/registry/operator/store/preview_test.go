package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// warnings records the warnings of one request.
type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// TestPreviewWarnings: a write the checks allow answers with the preview as warnings, the
// full list for a dry run; a refused write with none; before the preview is bound, with the
// warning that it is not available yet.
func TestPreviewWarnings(t *testing.T) {
	p := &Preview{NotAvailable: "preview: not available yet"}
	r := &REST{preview: p}
	obj := &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: "new"}}
	old := &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: "old"}}
	allow := func(context.Context, runtime.Object) error { return nil }
	allowUpdate := func(context.Context, runtime.Object, runtime.Object) error { return nil }
	refuse := func(context.Context, runtime.Object, runtime.Object) error { return errors.New("no") }
	write := func(f func(ctx context.Context) error) (warnings, error) {
		var w warnings
		err := f(warning.WithWarningRecorder(context.Background(), &w))
		return w, err
	}

	got, err := write(func(ctx context.Context) error { return r.previewCreate(nil, allow)(ctx, obj) })
	assert.NoError(t, err)
	assert.Equal(t, warnings{"preview: not available yet"}, got, "before the controllers' caches synced")

	var calls []string
	p.Set(func(_ context.Context, o, prev runtime.Object, full bool) []string {
		name := "-"
		if prev != nil {
			name = prev.(*operator.Shard).Name
		}
		calls = append(calls, o.(*operator.Shard).Name+" from "+name)
		if full {
			return []string{"preview: full"}
		}
		return []string{"preview: summary"}
	})
	got, _ = write(func(ctx context.Context) error { return r.previewCreate(nil, allow)(ctx, obj) })
	assert.Equal(t, warnings{"preview: summary"}, got)
	got, _ = write(func(ctx context.Context) error { return r.previewCreate([]string{metav1.DryRunAll}, nil)(ctx, obj) })
	assert.Equal(t, warnings{"preview: full"}, got, "a dry run gets the full list")
	got, _ = write(func(ctx context.Context) error {
		return r.previewUpdate([]string{metav1.DryRunAll}, allowUpdate)(ctx, obj, old)
	})
	assert.Equal(t, warnings{"preview: full"}, got)
	assert.Equal(t, []string{"new from -", "new from -", "new from old"}, calls, "an update is previewed from the stored object")

	// The controllers' own writes (finalizers, a maintenance window's spec.version) plan
	// nothing; a user of the same name with another UID is previewed.
	p.SkipFor(&user.DefaultInfo{Name: user.APIServerUser, UID: "loopback-uid"})
	as := func(u user.Info) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			return r.previewUpdate(nil, allowUpdate)(genericapirequest.WithUser(ctx, u), obj, old)
		}
	}
	got, _ = write(as(&user.DefaultInfo{Name: user.APIServerUser, UID: "loopback-uid"}))
	assert.Empty(t, got, "the controllers' write")
	got, _ = write(as(&user.DefaultInfo{Name: user.APIServerUser, UID: "another"}))
	assert.Equal(t, warnings{"preview: summary"}, got, "an impostor of the controllers' name")
	assert.Len(t, calls, 4, "one plan, for the impostor's write")

	got, err = write(func(ctx context.Context) error { return r.previewUpdate(nil, refuse)(ctx, obj, old) })
	assert.EqualError(t, err, "no")
	assert.Empty(t, got, "a refused write is not previewed")

	p.Set(nil)
	got, _ = write(func(ctx context.Context) error { return r.previewUpdate(nil, allowUpdate)(ctx, obj, old) })
	assert.Equal(t, warnings{"preview: not available yet"}, got, "once the controllers stopped")

	got, _ = write(func(ctx context.Context) error { return (&REST{}).previewCreate(nil, allow)(ctx, obj) })
	assert.Empty(t, got, "a kind without a preview (Kubeconfig, Link)")
}
