// Package forcond tests shared variables in a loop's condition and post
// statement, and leaves some iterations by continue.
package forcond

// Loop counts n up to limit.
type Loop struct {
	n, limit, step int
}

// Run counts n up to limit and returns how many of its iterations were
// left by continue.
func (l *Loop) Run() int {
	skipped := 0
	for i := 0; l.n < l.limit; i += l.step {
		l.n++
		if i%2 == 1 {
			skipped++
			continue
		}
	}
	return skipped
}
