package changed

// Get reads Flag.
func Get() bool {
	return Flag
}
