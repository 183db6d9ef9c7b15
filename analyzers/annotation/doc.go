// Package annotation defines an Analyzer that reads avcheck's source
// annotations and reports the malformed ones.
//
// # Analyzer annotation
//
// annotation: check //avcheck: annotations
//
// avcheck reads these comments, written like Go directives with no space
// after the slashes:
//
//	//avcheck:atomic          on a function (its whole body) or just before a
//	                          block statement: the code is meant to run as one
//	                          indivisible step
//	//avcheck:guardedby mu    on a struct field: the field is accessed only
//	                          with the sibling mutex field mu held; on a
//	                          package-level variable: with the package-level
//	                          mutex mu held
//	//avcheck:ignore [why]    on a line, the line before it, or a function's
//	                          doc comment: no avcheck finding there
//
// A function whose doc comment holds the compiler's //go:norace directive
// is ignored too: its author has said that its accesses race on purpose.
//
// The analyzer reports an unknown annotation, a missing or extra argument,
// and an annotation placed where it means nothing. Its Result is the parsed
// set, which the other analyzers of the suite consult.
package annotation
