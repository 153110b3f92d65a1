package store_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/link"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/virtualworkspace"
)

// kindUnderTest is one kind's spec type and its Permissions, run on a spec that mutate
// fills in.
type kindUnderTest struct {
	spec        reflect.Type
	permissions func(mutate func(spec reflect.Value)) []store.Permission
}

func kindOf[T store.Object, Spec, Status any](k *store.Kind[T, Spec, Status]) kindUnderTest {
	return kindUnderTest{
		spec: reflect.TypeFor[Spec](),
		permissions: func(mutate func(reflect.Value)) []store.Permission {
			o := k.New()
			mutate(reflect.ValueOf(k.Spec(o)).Elem())
			return k.Permissions(o)
		},
	}
}

// runField is a field that chooses what a container runs: an image, a command, arguments.
type runField struct {
	path  string // as a field path, such as spec.initContainers[0].image
	steps []int  // field indexes from the spec; a slice is entered at its first element
}

var imageSpecType = reflect.TypeFor[operator.ImageSpec]()

// runFields walks t, a type of the operator API, for every ImageSpec and every []string
// field named Command, Args or ExtraArgs, below path.
func runFields(t reflect.Type, path string, steps []int, depth int) []runField {
	if depth > 8 {
		return nil
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			path += "[0]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != imageSpecType.PkgPath() {
		return nil
	}
	var out []runField
	for i := range t.NumField() {
		f := t.Field(i)
		fPath, fSteps := path, append(append([]int{}, steps...), i)
		if !f.Anonymous {
			r, size := utf8.DecodeRuneInString(f.Name)
			fPath += "." + string(unicode.ToLower(r)) + f.Name[size:]
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == imageSpecType:
			out = append(out, runField{fPath, fSteps})
		case f.Type == reflect.TypeFor[[]string]() && (f.Name == "Command" || f.Name == "Args" || f.Name == "ExtraArgs"):
			out = append(out, runField{fPath, fSteps})
		default:
			out = append(out, runFields(f.Type, fPath, fSteps, depth+1)...)
		}
	}
	return out
}

// set gives the field at steps below v a value that is not the server's default: an image of
// another repository, or one argument.
func set(v reflect.Value, steps []int) {
	for _, i := range steps {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				}
				v = v.Elem()
				continue
			}
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
		}
		v = v.Field(i)
	}
	switch {
	case v.Type() == reflect.TypeFor[[]string]():
		v.Set(reflect.ValueOf([]string{"--anything"}))
	default:
		if v.Kind() == reflect.Pointer {
			v.Set(reflect.New(imageSpecType))
			v = v.Elem()
		}
		v.FieldByName("Repository").SetString("registry.example.com/anything")
	}
}

// TestEveryRunFieldNeedsAPermission walks every kind's spec by reflection: any image,
// command or arguments field, wherever it is and whatever it is added to the API later, must
// make the kind's Permissions ask for a right at that field's path. A field that no
// permission covers would let an author who may not create workloads run code of their
// choice with the server's identities.
func TestEveryRunFieldNeedsAPermission(t *testing.T) {
	kinds := map[string]kindUnderTest{
		"RootShard":        kindOf(&rootshard.Kind),
		"Shard":            kindOf(&shard.Kind),
		"FrontProxy":       kindOf(&frontproxy.Kind),
		"CacheServer":      kindOf(&cacheserver.Kind),
		"VirtualWorkspace": kindOf(&virtualworkspace.Kind),
		"Kubeconfig":       kindOf(&kubeconfig.Kind),
		"Link":             kindOf(&link.Kind),
	}
	found := 0
	for name, k := range kinds {
		for _, f := range runFields(k.spec, "spec", nil, 0) {
			found++
			t.Run(name+"/"+f.path, func(t *testing.T) {
				perms := k.permissions(func(spec reflect.Value) { set(spec, f.steps) })
				var at []string
				for _, p := range perms {
					if p.Field == f.path || strings.HasPrefix(p.Field, f.path+".") || strings.HasPrefix(p.Field, f.path+"[") {
						at = append(at, p.String())
					}
				}
				assert.NotEmpty(t, at, "no permission covers %s; asked: %v", f.path, held(perms))
			})
		}
	}
	// The walk itself must find the fields it guards: kcp's, managed etcd's, and a
	// VirtualWorkspace's and its init containers' images, commands and arguments.
	require.GreaterOrEqual(t, found, 17, "the reflection walk found too few fields")
}

// TestEveryKindPointsAtItsConditions: the status subresource keeps the conditions recorded for
// good (TakenOver) through Kind.Conditions, so every kind sets it, at its status's conditions.
func TestEveryKindPointsAtItsConditions(t *testing.T) {
	check := func(name string, set func() (status any, conditions *[]metav1.Condition)) {
		t.Run(name, func(t *testing.T) {
			status, conditions := set()
			require.NotNil(t, conditions)
			*conditions = append(*conditions, metav1.Condition{Type: "X"})
			assert.Equal(t, []metav1.Condition{{Type: "X"}}, reflect.ValueOf(status).Elem().FieldByName("Conditions").Interface())
		})
	}
	check("RootShard", func() (any, *[]metav1.Condition) {
		o := rootshard.Kind.New()
		return rootshard.Kind.Status(o), conditionsOf(rootshard.Kind.Conditions, o)
	})
	check("Shard", func() (any, *[]metav1.Condition) {
		o := shard.Kind.New()
		return shard.Kind.Status(o), conditionsOf(shard.Kind.Conditions, o)
	})
	check("FrontProxy", func() (any, *[]metav1.Condition) {
		o := frontproxy.Kind.New()
		return frontproxy.Kind.Status(o), conditionsOf(frontproxy.Kind.Conditions, o)
	})
	check("CacheServer", func() (any, *[]metav1.Condition) {
		o := cacheserver.Kind.New()
		return cacheserver.Kind.Status(o), conditionsOf(cacheserver.Kind.Conditions, o)
	})
	check("VirtualWorkspace", func() (any, *[]metav1.Condition) {
		o := virtualworkspace.Kind.New()
		return virtualworkspace.Kind.Status(o), conditionsOf(virtualworkspace.Kind.Conditions, o)
	})
	check("Kubeconfig", func() (any, *[]metav1.Condition) {
		o := kubeconfig.Kind.New()
		return kubeconfig.Kind.Status(o), conditionsOf(kubeconfig.Kind.Conditions, o)
	})
	check("Link", func() (any, *[]metav1.Condition) {
		o := link.Kind.New()
		return link.Kind.Status(o), conditionsOf(link.Kind.Conditions, o)
	})
}

func conditionsOf[T any](f func(T) *[]metav1.Condition, o T) *[]metav1.Condition {
	if f == nil {
		return nil
	}
	return f(o)
}
