package guarduse

import "guard"

func Peek(s *guard.Stats) int {
	return s.Hits // want `s.Hits is accessed without s.mu, which guards it \(held at 3 of its 4 accesses\)`
}
