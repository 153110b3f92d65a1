package validation

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// MaxProgressDeadlineSeconds is the longest deadline of a roll's group: a day. A group that
// takes longer is stuck, and the halt should say so.
const MaxProgressDeadlineSeconds = 24 * 60 * 60

var autoUpdatePolicies = []operator.AutoUpdatePolicy{operator.AutoUpdateNone, operator.AutoUpdatePatch}

// validateSetupVersion checks a RootShard's release, its upgrade strategy and its maintenance
// window (docs/kcp-versions.md, "Upgrading a setup"). What the change of a release must keep
// against what the setup runs is the registry's check, which reads the other objects.
func validateSetupVersion(spec *operator.RootShardSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Version != "" {
		// As the release is written, since it becomes the image tag: 0.31.4 is no tag of kcp's.
		if v, ok := kcpversion.Known(spec.Version); !ok || v.String() != spec.Version {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("version"), spec.Version, upgrade.ReleaseNames()))
		}
	}
	if u := spec.Upgrade; u != nil && u.ProgressDeadlineSeconds != nil {
		if s := *u.ProgressDeadlineSeconds; s < 1 || s > MaxProgressDeadlineSeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("upgrade", "progressDeadlineSeconds"), s,
				fmt.Sprintf("must be between 1 and %d (a day), inclusive", MaxProgressDeadlineSeconds)))
		}
	}
	if m := spec.Maintenance; m != nil {
		mPath := fldPath.Child("maintenance")
		allErrs = append(allErrs, validateMaintenanceWindow(&m.Window, mPath.Child("window"))...)
		switch m.AutoUpdate {
		case "", operator.AutoUpdateNone:
		case operator.AutoUpdatePatch:
			if spec.Version == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("version"),
					"spec.maintenance.autoUpdate Patch moves the setup to the newest patch of the minor of spec.version, so it needs one"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(mPath.Child("autoUpdate"), m.AutoUpdate, autoUpdatePolicies))
		}
	}
	return allErrs
}

// validateMaintenanceWindow checks a weekly window: a start in HH:MM, a duration between
// upgrade.MinWindowDuration and upgrade.MaxWindowDuration, weekday names, once each, and a
// time zone the server knows.
func validateMaintenanceWindow(w *operator.MaintenanceWindow, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if w.Start == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("start"), `when the window opens, "HH:MM" in its time zone`))
	} else if _, _, ok := upgrade.ParseStart(w.Start); !ok {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("start"), w.Start, `must be "HH:MM" between 00:00 and 23:59`))
	}
	if d := w.Duration.Duration; d < upgrade.MinWindowDuration || d > upgrade.MaxWindowDuration {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("duration"), d.String(),
			fmt.Sprintf("must be between %s and %s", shortDuration(upgrade.MinWindowDuration), shortDuration(upgrade.MaxWindowDuration))))
	}
	seen := sets.New[string]()
	for i, day := range w.Days {
		p := fldPath.Child("days").Index(i)
		if _, ok := upgrade.ParseWeekday(day); !ok {
			allErrs = append(allErrs, field.NotSupported(p, day, upgrade.Weekdays))
		} else if seen.Has(day) {
			allErrs = append(allErrs, field.Duplicate(p, day))
		}
		seen.Insert(day)
	}
	if _, err := upgrade.LoadTimeZone(w.TimeZone); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("timeZone"), w.TimeZone,
			fmt.Sprintf("must be an IANA time zone name such as Europe/Berlin, or empty for UTC: %v", err)))
	}
	return allErrs
}

// shortDuration is d without its zero minutes and seconds: 30m, 24h.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
