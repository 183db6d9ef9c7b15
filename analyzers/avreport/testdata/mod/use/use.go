// Package use reads what package lib writes.
package use

import "example.com/avr/lib"

// Twice reads lib.Total twice.
func Twice() (int, int) {
	a := lib.Total // want `^lib\.Total: g5 reads lib\.Total twice in one region, and g4's write can run between them \(R-W-R\); the two reads can see different values \(avcheck run: filtered\)$`
	b := lib.Total
	return a, b
}
