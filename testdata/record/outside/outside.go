// Package outside is a server whose handlers run on goroutines that the
// standard library starts (time.AfterFunc here, as net/http's server
// does), and a parallel test that starts a goroutine of its own: a
// recorder test of which goroutines trace.OutsideG forks.
package outside

// server's limit is set before a handler can run; the handler reads it.
type server struct {
	limit int
}

func (s *server) handle() int {
	return s.limit * 2
}

// box is written by a test and by the goroutine it starts, with nothing
// between them: a real race.
type box struct {
	n int
}
