package broken

func F() int { return "x" }
