// Package tagged has its code and its test behind a build tag,
// avcheck_tagged, as a suite of integration tests has: without the tag
// it has no test; with it, its test runs the split counter (a lost
// update that avcheck finds).
package tagged
