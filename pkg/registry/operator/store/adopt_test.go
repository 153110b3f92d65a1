package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestTheAdoptAnnotationOnlyOnCreate: the adopt annotation is kept by an update of an object
// created with it, and refused (422 at the annotation) on one stored without it.
func TestTheAdoptAnnotationOnlyOnCreate(t *testing.T) {
	with := func(annotations map[string]string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "root", Annotations: annotations}
	}
	adopt := map[string]string{operatorv1alpha1.AnnotationAdopt: operatorv1alpha1.AdoptKcpOperator}
	for _, tc := range []struct {
		name     string
		old, new *metav1.ObjectMeta
		refused  []string
	}{
		{name: "kept from the create", old: with(adopt), new: with(adopt)},
		{name: "removed", old: with(adopt), new: with(nil)},
		{name: "never set", old: with(nil), new: with(map[string]string{"team": "a"})},
		{name: "added by an update", old: with(nil), new: with(adopt), refused: []string{"Invalid value"}},
		{name: "added by an update after its removal", old: with(map[string]string{"team": "a"}), new: with(adopt), refused: []string{"Invalid value"}},
		{name: "another value added", old: with(nil), new: with(map[string]string{operatorv1alpha1.AnnotationAdopt: "yes"}),
			refused: []string{"Unsupported value", "Invalid value"}},
		{name: "another value kept", old: with(map[string]string{operatorv1alpha1.AnnotationAdopt: "yes"}),
			new: with(map[string]string{operatorv1alpha1.AnnotationAdopt: "yes"}), refused: []string{"Unsupported value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateAdoptUpdate(tc.new, tc.old)
			var got []string
			for _, e := range errs {
				assert.Equal(t, "metadata.annotations[operator.kcp.io/adopt]", e.Field)
				got = append(got, e.Type.String())
			}
			assert.Equal(t, tc.refused, got)
		})
	}
}
