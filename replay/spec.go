package replay

import "github.com/orchsim/orchsim/model"

// Spec returns the profile the file records: its preset, fixes, unfix and
// mutants, as model.Spec.Profile builds them.
func (f *File) Spec() model.Spec {
	return model.Spec{Preset: f.Profile, Fix: f.Fixes, Unfix: f.Unfix, Mutants: f.Mutants}
}
