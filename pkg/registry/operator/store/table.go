package store

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// Column is one printer column of a kind: its definition and how a row gets its cell.
type Column[T Object] struct {
	metav1.TableColumnDefinition
	Cell func(T) any
}

// Table is the printer columns of a kind. Every kind prints Name first; Columns come next,
// then Age, then the Wide columns that only `-o wide` shows, as built-in kinds order them.
type Table[T Object] struct {
	Columns []Column[T]
	Wide    []Column[T]
}

// tableConvertor renders objects and lists of a kind as a metav1.Table, as `kubectl get` asks.
type tableConvertor[T Object] struct {
	table Table[T]
	now   func() time.Time
}

var _ rest.TableConvertor = tableConvertor[Object]{}

var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageColumn = metav1.TableColumnDefinition{Name: "Age", Type: "string",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)

// ConvertToTable implements rest.TableConvertor for a single object or a list of the kind.
func (c tableConvertor[T]) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = append(table.ColumnDefinitions, nameColumn)
		for _, col := range c.table.Columns {
			table.ColumnDefinitions = append(table.ColumnDefinitions, col.TableColumnDefinition)
		}
		table.ColumnDefinitions = append(table.ColumnDefinitions, ageColumn)
		for _, col := range c.table.Wide {
			def := col.TableColumnDefinition
			def.Priority = 1
			table.ColumnDefinitions = append(table.ColumnDefinitions, def)
		}
	}

	var objs []runtime.Object
	if apimeta.IsListType(object) {
		items, err := apimeta.ExtractList(object)
		if err != nil {
			return nil, err
		}
		objs = items
		if l, err := apimeta.ListAccessor(object); err == nil {
			table.ResourceVersion = l.GetResourceVersion()
			table.Continue = l.GetContinue()
			table.RemainingItemCount = l.GetRemainingItemCount()
		}
	} else {
		objs = []runtime.Object{object}
		if m, err := apimeta.Accessor(object); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}

	for _, obj := range objs {
		o, ok := obj.(T)
		if !ok {
			return nil, fmt.Errorf("unexpected object of type %T", obj)
		}
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		cells := make([]any, 0, len(c.table.Columns)+len(c.table.Wide)+2)
		cells = append(cells, m.GetName())
		for _, col := range c.table.Columns {
			cells = append(cells, col.Cell(o))
		}
		cells = append(cells, c.age(m.GetCreationTimestamp()))
		for _, col := range c.table.Wide {
			cells = append(cells, col.Cell(o))
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
	}
	return table, nil
}

// age prints a creation timestamp the way kubectl prints it for built-in kinds.
func (c tableConvertor[T]) age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(c.now().Sub(ts.Time))
}

// StringColumn is a printer column of type string.
func StringColumn[T Object](name, description string, cell func(T) string) Column[T] {
	return Column[T]{
		TableColumnDefinition: metav1.TableColumnDefinition{Name: name, Type: "string", Description: description},
		Cell:                  func(o T) any { return cell(o) },
	}
}

// IntegerColumn is a printer column of type integer.
func IntegerColumn[T Object](name, description string, cell func(T) int64) Column[T] {
	return Column[T]{
		TableColumnDefinition: metav1.TableColumnDefinition{Name: name, Type: "integer", Description: description},
		Cell:                  func(o T) any { return cell(o) },
	}
}

// PhaseColumn prints the phase of a setup.
func PhaseColumn[T Object](phase func(T) string) Column[T] {
	return StringColumn("Phase", "The lifecycle phase: Provisioning, Running or Deleting.", phase)
}

// ConditionStatus is the status of the condition of the given type, or Unknown when the
// controller has not reported it yet.
func ConditionStatus(conditions []metav1.Condition, conditionType string) string {
	if c := apimeta.FindStatusCondition(conditions, conditionType); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

// RootShardName is the name of the RootShard a reference points at, or "" when it is unset.
func RootShardName(ref operator.RootShardConfig) string {
	if ref.Reference == nil {
		return ""
	}
	return ref.Reference.Name
}

// RootShardColumn is what a RootShard column shows for ref: the RootShard's name, or, for
// one joined through a copy of its join Secret, "Secret/<name>", as a VirtualWorkspace's
// Target column names its kind, and for one linked, "Link/<bootstrap Secret>".
func RootShardColumn(ref operator.RootShardConfig) string {
	if ref.SecretRef != nil {
		return "Secret/" + ref.SecretRef.Name
	}
	if ref.Link != nil {
		return LinkColumn(ref.Link)
	}
	return RootShardName(ref)
}

// LinkColumn is what a target column shows for a link: "Link/<bootstrap Secret>".
func LinkColumn(link *operator.RootShardLink) string { return "Link/" + link.SecretRef.Name }
