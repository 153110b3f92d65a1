// Package preview says what a change of a setup object will do in the host cluster, from the
// plans of what its controller writes for the stored object and for the new one
// (hostcluster.Plan): which Deployments and StatefulSets roll and why, which Certificates are
// issued again. It is pure: the plans come from the controllers' own realize, run in plan
// mode, so that a preview cannot disagree with what happens (docs/kcp-versions.md,
// "Previewing a change").
package preview

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// Change is what happens to one object of the host cluster.
type Change struct {
	// Kind and Name are the object's.
	Kind, Name string
	// Action is what happens to it: Rolls, Created, Updated, IssuedAgain or Issued.
	Action string
	// Why says why a workload rolls, short: "image v0.31.6→v0.32.3, flags +2 -1".
	Why string
	// Details are the changes one by one: "kcp gains flag --x", "volume y added".
	Details []string
}

// The actions of a Change.
const (
	Rolls       = "rolls"
	Created     = "is created"
	Updated     = "changes, its pods do not roll"
	IssuedAgain = "issued again"
	Issued      = "issued"
)

// Diff is what changes in the host cluster when a controller's plan old (nil: the object is
// created) becomes new: the workloads of new whose pod template differs from old's roll,
// those that do not exist yet are created, and the Certificates whose spec differs are issued
// again. Objects old has and new has not are not said: what the controllers stop writing
// they remove by other means.
func Diff(old, new *hostcluster.Plan) []Change {
	if old == nil {
		old = &hostcluster.Plan{}
	}
	if new == nil {
		return nil
	}
	var out []Change
	oldDeployments := map[string]workload{}
	for _, d := range old.Deployments {
		oldDeployments[*d.Deployment.Name] = deploymentWorkload(d)
	}
	for _, d := range new.Deployments {
		if c, ok := diffWorkload("Deployment", oldDeployments, deploymentWorkload(d)); ok {
			out = append(out, c)
		}
	}
	oldSets := map[string]workload{}
	for _, s := range old.StatefulSets {
		oldSets[*s.StatefulSet.Name] = statefulSetWorkload(s)
	}
	for _, s := range new.StatefulSets {
		if c, ok := diffWorkload("StatefulSet", oldSets, statefulSetWorkload(s)); ok {
			out = append(out, c)
		}
	}
	// A claim is in a plan only while it does not exist: the write creates it.
	for _, c := range new.Claims {
		out = append(out, Change{Kind: "PersistentVolumeClaim", Name: *c.Name, Action: Created})
	}
	oldCerts := map[string]*cmapply.CertificateApplyConfiguration{}
	for _, c := range old.Certificates {
		oldCerts[*c.Name] = c
	}
	for _, c := range new.Certificates {
		prev, ok := oldCerts[*c.Name]
		switch {
		case !ok:
			out = append(out, Change{Kind: "Certificate", Name: *c.Name, Action: Issued})
		case !jsonEqual(prev.Spec, c.Spec):
			out = append(out, Change{Kind: "Certificate", Name: *c.Name, Action: IssuedAgain})
		}
	}
	return out
}

// workload is a Deployment's or StatefulSet's name, pod template and the rest of its spec.
type workload struct {
	name     string
	exists   bool
	template corev1.PodTemplateSpec
	rest     string
}

func deploymentWorkload(d hostcluster.PlannedDeployment) workload {
	var template, rest any
	if s := d.Deployment.Spec; s != nil {
		spec := *s
		template, spec.Template = spec.Template, nil
		rest = spec
	}
	return newWorkload(*d.Deployment.Name, d.Exists, template, rest)
}

func statefulSetWorkload(p hostcluster.PlannedStatefulSet) workload {
	var template, rest any
	if s := p.StatefulSet.Spec; s != nil {
		spec := *s
		template, spec.Template = spec.Template, nil
		rest = spec
	}
	return newWorkload(*p.StatefulSet.Name, p.Exists, template, rest)
}

// newWorkload reads a workload's pod template and the rest of its spec.
func newWorkload(name string, exists bool, template, rest any) workload {
	w := workload{name: name, exists: exists, rest: jsonString(rest)}
	convert(template, &w.template)
	return w
}

// diffWorkload is the change of workload w of kind from its namesake in old, and whether
// there is one.
func diffWorkload(kind string, old map[string]workload, w workload) (Change, bool) {
	c := Change{Kind: kind, Name: w.name}
	prev, ok := old[w.name]
	switch {
	case !w.exists:
		c.Action = Created
		return c, true
	case !ok:
		// Not written for the stored object (it waited for what it mounts): written now.
		c.Action, c.Why = Rolls, "template"
		return c, true
	case !jsonEqual(prev.template, w.template):
		c.Action = Rolls
		c.Why, c.Details = templateChanges(prev.template, w.template)
		return c, true
	case prev.rest != w.rest:
		c.Action = Updated
		return c, true
	}
	return c, false
}

// templateChanges says why a pod template changed: short, and one by one.
func templateChanges(old, new corev1.PodTemplateSpec) (string, []string) {
	var why, details []string
	var gained, lost, changed int
	var images []string
	oldContainers := containersByName(old.Spec)
	explained := old.DeepCopy()
	for _, c := range append(slices.Clone(new.Spec.InitContainers), new.Spec.Containers...) {
		p, ok := oldContainers[c.Name]
		if !ok {
			details = append(details, fmt.Sprintf("container %s added", c.Name))
			continue
		}
		if p.Image != c.Image {
			change := imageChange(p.Image, c.Image)
			if !slices.Contains(images, change) {
				images = append(images, change)
			}
			details = append(details, fmt.Sprintf("container %s image %s", c.Name, change))
		}
		f := Flags(append(slices.Clone(p.Command), p.Args...), append(slices.Clone(c.Command), c.Args...))
		gained, lost, changed = gained+len(f.Gained), lost+len(f.Lost), changed+len(f.Changed)
		for _, n := range f.Gained {
			details = append(details, fmt.Sprintf("container %s gains flag --%s", c.Name, n))
		}
		for _, n := range f.Lost {
			details = append(details, fmt.Sprintf("container %s loses flag --%s", c.Name, n))
		}
		for _, n := range f.Changed {
			details = append(details, fmt.Sprintf("container %s flag --%s changes", c.Name, n))
		}
		if f.Positional {
			details = append(details, fmt.Sprintf("container %s command changes", c.Name))
		}
		added, removed := namesDiff(p.VolumeMounts, c.VolumeMounts, func(m corev1.VolumeMount) string { return m.Name + ":" + m.MountPath })
		for _, m := range added {
			details = append(details, fmt.Sprintf("container %s mounts %s", c.Name, m))
		}
		for _, m := range removed {
			details = append(details, fmt.Sprintf("container %s no longer mounts %s", c.Name, m))
		}
	}
	for name := range oldContainers {
		if !slices.ContainsFunc(append(slices.Clone(new.Spec.InitContainers), new.Spec.Containers...), func(c corev1.Container) bool { return c.Name == name }) {
			details = append(details, fmt.Sprintf("container %s removed", name))
		}
	}
	for _, img := range images {
		why = append(why, "image "+img)
	}
	if gained+lost+changed > 0 {
		flags := fmt.Sprintf("flags +%d -%d", gained, lost)
		if changed > 0 {
			flags += fmt.Sprintf(" ~%d", changed)
		}
		why = append(why, flags)
	}
	added, removed := namesDiff(old.Spec.Volumes, new.Spec.Volumes, func(v corev1.Volume) string { return v.Name })
	for _, v := range added {
		details = append(details, "volume "+v+" added")
	}
	for _, v := range removed {
		details = append(details, "volume "+v+" removed")
	}
	mounts := len(added)+len(removed) > 0
	for _, d := range details {
		mounts = mounts || strings.Contains(d, " mounts ")
	}
	if mounts {
		why = append(why, "mounts")
	}
	// What the details do not explain: the rest of the template (labels, annotations such as
	// the hash of the Secrets the pods mount, resources, probes...).
	explained.Spec.Volumes = new.Spec.Volumes
	explainedContainers(explained, new)
	if !jsonEqual(explained, &new) {
		for _, f := range otherFields(*explained, new) {
			details = append(details, f+" changes")
		}
		why = append(why, "template")
	}
	return strings.Join(why, ", "), details
}

// explainedContainers sets, in t, what templateChanges reports of new's containers: their
// images, commands, arguments and mounts.
func explainedContainers(t *corev1.PodTemplateSpec, new corev1.PodTemplateSpec) {
	byName := containersByName(new.Spec)
	for _, list := range []*[]corev1.Container{&t.Spec.InitContainers, &t.Spec.Containers} {
		for i := range *list {
			c := &(*list)[i]
			if n, ok := byName[c.Name]; ok {
				c.Image, c.Command, c.Args, c.VolumeMounts = n.Image, n.Command, n.Args, n.VolumeMounts
			}
		}
	}
	// Containers added or removed are said one by one.
	if len(t.Spec.Containers) != len(new.Spec.Containers) || len(t.Spec.InitContainers) != len(new.Spec.InitContainers) {
		t.Spec.Containers, t.Spec.InitContainers = new.Spec.Containers, new.Spec.InitContainers
	}
}

// otherFields names what differs between two templates, by their top-level fields: the
// metadata's labels and annotations, and the pod spec's fields by their JSON names.
func otherFields(old, new corev1.PodTemplateSpec) []string {
	var out []string
	if !reflect.DeepEqual(old.Labels, new.Labels) {
		out = append(out, "pod labels")
	}
	for _, k := range slices.Sorted(maps.Keys(union(old.Annotations, new.Annotations))) {
		if old.Annotations[k] != new.Annotations[k] {
			out = append(out, "pod annotation "+k)
		}
	}
	var o, n map[string]json.RawMessage
	convert(old.Spec, &o)
	convert(new.Spec, &n)
	for _, k := range slices.Sorted(maps.Keys(union(o, n))) {
		if string(o[k]) != string(n[k]) {
			out = append(out, "pod spec."+k)
		}
	}
	return out
}

func union[V any](a, b map[string]V) map[string]V {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]V{}
	}
	maps.Copy(out, b)
	return out
}

// imageChange is "v0.31.6→v0.32.3" for a tag change of the same repository, else the whole
// references.
func imageChange(old, new string) string {
	oldRepo, oldTag := splitImage(old)
	newRepo, newTag := splitImage(new)
	if oldRepo == newRepo {
		return oldTag + "→" + newTag
	}
	return old + "→" + new
}

func splitImage(image string) (repo, tag string) {
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[:i], image[i+1:]
	}
	return image, ""
}

// FlagChanges are the flags a command line gains, loses and changes the value of, by name
// without dashes, sorted; Positional is set when its other words change.
type FlagChanges struct {
	Gained, Lost, Changed []string
	Positional            bool
}

// Flags compares two command lines (command and arguments) by their flags: --name=value,
// --name value and --name alone; a flag given several times is compared by all its values.
func Flags(old, new []string) FlagChanges {
	o, op := parseFlags(old)
	n, np := parseFlags(new)
	var f FlagChanges
	for _, k := range slices.Sorted(maps.Keys(union(o, n))) {
		ov, inOld := o[k]
		nv, inNew := n[k]
		switch {
		case !inOld:
			f.Gained = append(f.Gained, k)
		case !inNew:
			f.Lost = append(f.Lost, k)
		case !slices.Equal(ov, nv):
			f.Changed = append(f.Changed, k)
		}
	}
	f.Positional = !slices.Equal(op, np)
	return f
}

// parseFlags reads a command line's flags by name, and its words that are no flag's value.
func parseFlags(args []string) (map[string][]string, []string) {
	flags := map[string][]string{}
	var positional []string
	last := ""
	for _, a := range args {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			flags[name] = append(flags[name], value)
			last = name
			if strings.Contains(a, "=") {
				last = ""
			}
			continue
		}
		if last != "" {
			// The value of --name value.
			vs := flags[last]
			vs[len(vs)-1] = a
			last = ""
			continue
		}
		positional = append(positional, a)
	}
	return flags, positional
}

func containersByName(s corev1.PodSpec) map[string]corev1.Container {
	out := map[string]corev1.Container{}
	for _, c := range append(slices.Clone(s.InitContainers), s.Containers...) {
		out[c.Name] = c
	}
	return out
}

// namesDiff are the keys of new not in old, and of old not in new, sorted.
func namesDiff[T any](old, new []T, key func(T) string) (added, removed []string) {
	o, n := map[string]bool{}, map[string]bool{}
	for _, x := range old {
		o[key(x)] = true
	}
	for _, x := range new {
		n[key(x)] = true
	}
	for _, k := range slices.Sorted(maps.Keys(n)) {
		if !o[k] {
			added = append(added, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o)) {
		if !n[k] {
			removed = append(removed, k)
		}
	}
	return added, removed
}

// convert reads an apply configuration as the API type it configures: both have the same JSON.
func convert(in, out any) {
	data, err := json.Marshal(in)
	if err == nil {
		_ = json.Unmarshal(data, out)
	}
}

func jsonString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func jsonEqual(a, b any) bool { return jsonString(a) == jsonString(b) }
