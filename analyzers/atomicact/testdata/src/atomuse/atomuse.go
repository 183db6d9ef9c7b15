package atomuse

import "atom"

func Peek(s *atom.Server) int64 {
	return s.Count // want `s.Count is read plainly here but accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
}
