package annotation

// The annotation prefix and names. Every analyzer refers to these, so the
// spelling lives in one place.
const (
	Prefix    = "//avcheck:"
	Atomic    = "atomic"
	GuardedBy = "guardedby"
	Ignore    = "ignore"
)
