package controller

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The metrics to alert on, kube-state-metrics style: how many objects of a kind are in each
// phase, and the status of every condition of every object. Lifecycle updates both where it
// writes a status, for every kind alike, and drops an object's series once it is gone.
var (
	objectsByPhase   = metricsOfKinds.Gauge("objects", "Objects of a kind, by phase (Unknown before the first status).", "kind", "phase")
	objectConditions = metricsOfKinds.Gauge("object_condition",
		"The status of an object's condition: one series per status (true, false, unknown), 1 for the current one and 0 for the others.",
		"kind", "namespace", "name", "condition", "status")
)

// conditionStatuses are the label values of a condition's series, in the order they are set.
var conditionStatuses = []struct {
	label  string
	status metav1.ConditionStatus
}{{"true", metav1.ConditionTrue}, {"false", metav1.ConditionFalse}, {"unknown", metav1.ConditionUnknown}}

// unknownPhase is the phase label of an object whose status has no phase yet.
const unknownPhase = "Unknown"

// objectKey names one object of one kind.
type objectKey struct{ kind, namespace, name string }

// objectState is what the gauges show of an object, to move and drop its series.
type objectState struct {
	phase      string
	conditions sets.Set[string]
}

// objectStates remembers each object's state since the gauges were last updated for it.
type objectStates struct {
	mu      sync.Mutex
	objects map[objectKey]objectState
}

var observedObjects = &objectStates{objects: map[objectKey]objectState{}}

// record sets the gauges of an object to its status: its phase ("" for none yet) and its
// conditions. Conditions it no longer has lose their series.
func (s *objectStates) record(kind, namespace, name, phase string, conditions []metav1.Condition) {
	metricsOfKinds.Register()
	if phase == "" {
		phase = unknownPhase
	}
	key := objectKey{kind, namespace, name}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, known := s.objects[key]
	if !known || old.phase != phase {
		if known {
			objectsByPhase.WithLabelValues(kind, old.phase).Dec()
		}
		objectsByPhase.WithLabelValues(kind, phase).Inc()
	}
	types := sets.New[string]()
	for _, c := range conditions {
		types.Insert(c.Type)
		for _, st := range conditionStatuses {
			value := 0.0
			if c.Status == st.status {
				value = 1
			}
			objectConditions.WithLabelValues(kind, namespace, name, c.Type, st.label).Set(value)
		}
	}
	if known {
		for gone := range old.conditions.Difference(types) {
			deleteConditionSeries(kind, namespace, name, gone)
		}
	}
	s.objects[key] = objectState{phase: phase, conditions: types}
}

// forget drops the series of an object that no longer exists.
func (s *objectStates) forget(kind, namespace, name string) {
	key := objectKey{kind, namespace, name}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, known := s.objects[key]
	if !known {
		return
	}
	metricsOfKinds.Register()
	objectsByPhase.WithLabelValues(kind, old.phase).Dec()
	for c := range old.conditions {
		deleteConditionSeries(kind, namespace, name, c)
	}
	delete(s.objects, key)
}

func deleteConditionSeries(kind, namespace, name, condition string) {
	for _, st := range conditionStatuses {
		objectConditions.DeleteLabelValues(kind, namespace, name, condition, st.label)
	}
}
