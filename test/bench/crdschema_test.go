package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/builder3"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apiserver"
	generatedopenapi "github.com/kcp-setups/apiserver/pkg/generated/openapi"
)

// openAPIDoc is the part of an OpenAPI v3 document the CRD's schema is made from.
type openAPIDoc struct {
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

// structuralSchema is the schema of kind, found by its x-kubernetes-group-version-kind in an
// OpenAPI v3 document, as a structural schema a CustomResourceDefinition accepts: every $ref
// resolved, each node typed. What a structural schema cannot say (a type of several types, a
// cycle, an object of any shape) becomes x-kubernetes-preserve-unknown-fields, or
// x-kubernetes-int-or-string for integers or numbers next to strings (IntOrString, Quantity).
// Descriptions are left out, which only makes the CRD smaller, and so are what CRDs refuse
// or what would need a CEL cost budget (uniqueItems, x-kubernetes-validations, defaults of
// objects and lists, a default its enum leaves out). metadata at the top is a plain object, as kube-apiserver requires.
func structuralSchema(raw []byte, group, kind string) (map[string]any, error) {
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var root map[string]any
	for _, s := range doc.Components.Schemas {
		gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			if m, _ := g.(map[string]any); m["group"] == group && m["kind"] == kind {
				root = s
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no schema of %s.%s in the OpenAPI document", kind, group)
	}
	c := converter{schemas: doc.Components.Schemas}
	out := c.convert(root, nil)
	props, _ := out["properties"].(map[string]any)
	if props == nil {
		return nil, fmt.Errorf("the schema of %s.%s has no properties", kind, group)
	}
	props["metadata"] = map[string]any{"type": "object"}
	delete(out, "x-kubernetes-preserve-unknown-fields")
	return out, nil
}

// converter resolves the $refs of one OpenAPI document.
type converter struct {
	schemas map[string]map[string]any
}

const refPrefix = "#/components/schemas/"

// knownFormats are the formats kube-apiserver validates in a CRD; others are left out.
var knownFormats = []string{"bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac",
	"uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
	"rgbcolor", "byte", "password", "date", "duration", "datetime", "date-time", "int32", "int64",
	"float", "double"}

// scalarKeys are the keywords copied as they are.
var scalarKeys = []string{"type", "enum", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "multipleOf", "nullable",
	"x-kubernetes-map-type", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
	"x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string"}

// resolve follows s's $ref, or kube-openapi's allOf of one $ref (which lets a reference carry
// a description or a default), into the schema it names; refs names the ones followed.
func (c converter) resolve(s map[string]any, refs []string) (map[string]any, []string, bool) {
	for {
		ref, _ := s["$ref"].(string)
		if all, _ := s["allOf"].([]any); ref == "" && len(all) == 1 {
			inner, _ := all[0].(map[string]any)
			ref, _ = inner["$ref"].(string)
		}
		if ref == "" {
			return s, refs, true
		}
		name := strings.TrimPrefix(ref, refPrefix)
		if slices.Contains(refs, name) {
			return nil, refs, false
		}
		next, ok := c.schemas[name]
		if !ok {
			return map[string]any{}, refs, true
		}
		merged := map[string]any{}
		for k, v := range next {
			merged[k] = v
		}
		if d, ok := s["default"]; ok {
			merged["default"] = d
		}
		s, refs = merged, append(slices.Clone(refs), name)
	}
}

// preserve is a node of any shape.
var preserve = map[string]any{"x-kubernetes-preserve-unknown-fields": true}

// convert turns one node into a structural one.
func (c converter) convert(in map[string]any, refs []string) map[string]any {
	s, refs, ok := c.resolve(in, refs)
	if !ok {
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	if intOrString(s) {
		return map[string]any{"x-kubernetes-int-or-string": true}
	}
	out := map[string]any{}
	for _, k := range scalarKeys {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if f, _ := s["format"].(string); slices.Contains(knownFormats, f) {
		out["format"] = f
	}
	// A default of a scalar, unless an enum leaves it out (Kubernetes' "" for a field whose
	// every set value is an enum member).
	switch d := s["default"].(type) {
	case string, bool, float64:
		if enum, ok := s["enum"].([]any); !ok || slices.Contains(enum, any(d)) {
			out["default"] = d
		}
	}
	if props, _ := s["properties"].(map[string]any); len(props) > 0 {
		converted := map[string]any{}
		for name, p := range props {
			if m, ok := p.(map[string]any); ok {
				converted[name] = c.convert(m, refs)
			}
		}
		out["properties"] = converted
		out["type"] = "object"
		if req, _ := s["required"].([]any); len(req) > 0 {
			out["required"] = req
		}
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		if _, has := out["properties"]; !has {
			out["additionalProperties"] = c.convert(ap, refs)
			out["type"] = "object"
		}
	case bool:
		if ap {
			out["x-kubernetes-preserve-unknown-fields"] = true
		}
	}
	if out["type"] == "array" {
		if items, ok := s["items"].(map[string]any); ok {
			out["items"] = c.convert(items, refs)
		} else {
			out["items"] = preserve
		}
		keepListMap(out)
	}
	switch out["type"] {
	case nil:
		if out["x-kubernetes-preserve-unknown-fields"] == true {
			return out
		}
		// No type: any value (runtime.RawExtension, JSON).
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}
	case "object":
		if out["properties"] == nil && out["additionalProperties"] == nil {
			out["x-kubernetes-preserve-unknown-fields"] = true
		}
	}
	return out
}

// intOrString is a node that holds an integer or a number, or a string.
func intOrString(s map[string]any) bool {
	if s["x-kubernetes-int-or-string"] == true || s["format"] == "int-or-string" {
		return true
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := s[key].([]any)
		var types []string
		for _, a := range alts {
			m, _ := a.(map[string]any)
			t, _ := m["type"].(string)
			types = append(types, t)
		}
		if slices.Contains(types, "string") && (slices.Contains(types, "integer") || slices.Contains(types, "number")) {
			return true
		}
	}
	return false
}

// keepListMap makes a list of type map atomic when one of its keys is neither required nor
// defaulted, which a CRD refuses.
func keepListMap(list map[string]any) {
	if list["x-kubernetes-list-type"] != "map" {
		return
	}
	items, _ := list["items"].(map[string]any)
	props, _ := items["properties"].(map[string]any)
	required, _ := items["required"].([]any)
	keys, _ := list["x-kubernetes-list-map-keys"].([]any)
	for _, k := range keys {
		name, _ := k.(string)
		p, _ := props[name].(map[string]any)
		_, defaulted := p["default"]
		if p == nil || (!defaulted && !slices.Contains(required, any(name))) {
			list["x-kubernetes-list-type"] = "atomic"
			delete(list, "x-kubernetes-list-map-keys")
			return
		}
	}
}

// TestStructuralSchema: refs are resolved, what a CRD cannot say becomes preserve-unknown or
// int-or-string, a cycle ends, and a list map with a loose key turns atomic.
func TestStructuralSchema(t *testing.T) {
	doc := `{"components": {"schemas": {
	  "a.Kind": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "g", "kind": "Kind", "version": "v1"}],
	    "properties": {"metadata": {"allOf": [{"$ref": "#/components/schemas/meta.ObjectMeta"}]},
	      "spec": {"default": {}, "allOf": [{"$ref": "#/components/schemas/a.Spec"}]}}},
	  "meta.ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}}},
	  "a.Spec": {"type": "object", "required": ["host"], "properties": {
	    "host": {"type": "string", "minLength": 1, "description": "left out", "format": "hostname"},
	    "mode": {"type": "string", "enum": ["In", "Out"], "default": ""},
	    "port": {"type": "integer", "format": "int32", "default": 6443},
	    "replicas": {"allOf": [{"$ref": "#/components/schemas/intstr.IntOrString"}]},
	    "size": {"$ref": "#/components/schemas/resource.Quantity"},
	    "raw": {"$ref": "#/components/schemas/runtime.RawExtension"},
	    "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
	    "self": {"$ref": "#/components/schemas/a.Spec"},
	    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "protocol"],
	      "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "protocol": {"type": "string"}}}},
	    "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string", "format": "made-up"}}}},
	  "intstr.IntOrString": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
	  "resource.Quantity": {"oneOf": [{"type": "string"}, {"type": "number"}]},
	  "runtime.RawExtension": {"type": "object"}}}}`
	got, err := structuralSchema([]byte(doc), "g", "Kind")
	require.NoError(t, err)
	want := map[string]any{"type": "object", "properties": map[string]any{
		"metadata": map[string]any{"type": "object"},
		"spec": map[string]any{"type": "object", "required": []any{"host"}, "properties": map[string]any{
			"host":     map[string]any{"type": "string", "minLength": 1.0, "format": "hostname"},
			"mode":     map[string]any{"type": "string", "enum": []any{"In", "Out"}},
			"port":     map[string]any{"type": "integer", "format": "int32", "default": 6443.0},
			"replicas": map[string]any{"x-kubernetes-int-or-string": true},
			"size":     map[string]any{"x-kubernetes-int-or-string": true},
			"raw":      map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			"labels":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "default": ""}},
			"self":     map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			"ports": map[string]any{"type": "array", "x-kubernetes-list-type": "atomic", "items": map[string]any{
				"type": "object", "required": []any{"name"}, "properties": map[string]any{
					"name": map[string]any{"type": "string"}, "protocol": map[string]any{"type": "string"}}}},
			"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}},
	}}
	assert.Equal(t, want, got)

	_, err = structuralSchema([]byte(doc), "g", "Other")
	assert.ErrorContains(t, err, "no schema of Other.g")
}

// TestRootShardCRD: the CRD the crud benchmark makes from the RootShard's OpenAPI v3 schema,
// built here as the server builds it, passes kube-apiserver's validation of a CRD, and keeps
// the fields' types down to the Deployment templates.
func TestRootShardCRD(t *testing.T) {
	cfg := genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, openapi.NewDefinitionNamer(apiserver.NewScheme()))
	defs, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, operatorv1alpha1.RootShard{}.OpenAPIModelName())
	require.NoError(t, err)
	raw, err := json.Marshal(map[string]any{"components": map[string]any{"schemas": defs}})
	require.NoError(t, err)
	s, err := structuralSchema(raw, operatorv1alpha1.GroupName, "RootShard")
	require.NoError(t, err)

	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(rootShardCRD(s).Object, &crd, true))
	crd.Status.StoredVersions = []string{crdShards.Version} // kube-apiserver sets it on create
	var internal apiextensions.CustomResourceDefinition
	require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &internal, nil))
	assert.Empty(t, apiextensionsvalidation.ValidateCustomResourceDefinition(t.Context(), &internal))

	port, _, _ := unstructured.NestedMap(s, "properties", "spec", "properties", "external", "properties", "port")
	assert.Equal(t, map[string]any{"type": "integer", "format": "int32"}, port)
	seconds, _, _ := unstructured.NestedMap(s, "properties", "spec", "properties", "deploymentTemplate", "properties", "spec",
		"properties", "template", "properties", "spec", "properties", "tolerations", "items", "properties", "tolerationSeconds")
	assert.Equal(t, map[string]any{"type": "integer", "format": "int64"}, seconds)
}
