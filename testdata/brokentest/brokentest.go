// Package brokentest does not compile: avcheck test fails it as go test
// does, with the compiler's errors and a FAIL line, and goes on with the
// other packages.
package brokentest

func Value() int { return undefinedValue }
