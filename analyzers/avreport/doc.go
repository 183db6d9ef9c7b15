// Package avreport defines an Analyzer that shows the findings of a
// recorded run (avcheck run) as diagnostics of the static suite.
//
// # Analyzer avreport
//
// avreport: report the findings that avcheck run saved in .avcheck/report.json
//
// avcheck run records a test or program, predicts the atomicity
// violations its run admits and saves them in .avcheck/report.json at the
// module root. This analyzer reads that report and reports, in each
// package, the findings whose first access (the access with role
// "first", or else the first one listed) lies in one of the package's
// files, at that access, with the other accesses as related positions:
//
//	counter.go:16:7: c.n: g21 reads then writes c.n in one region, and g20's write can run between them (R-W-W); the update can be lost (avcheck run: filtered, 2 instances)
//	counter.go:19:2: 	g20 writes c.n (interleaved)
//	counter.go:19:2: 	g21 writes c.n (last)
//
// Only reported findings are shown, not those marked dropped (avcheck run
// -all). The witness schedule is in avcheck run's own output and in the
// report.
//
// A finding is skipped when any file its accesses name (the first
// access's file or a related one) no longer has the SHA-256 that the
// report recorded for it: the source changed since the run, so the
// positions may be wrong. Run avcheck run again to see it. A report
// without that table of hashes shows nothing.
//
// Flags:
//
//	-avreport.report path   the report; default .avcheck/report.json at the
//	                        root of the module of the package analysed (the
//	                        nearest go.mod above it). A relative path is
//	                        taken from that module root.
//	-avreport.hash sha256   the report's SHA-256 (avcheck report-hash prints it)
//
// go vet caches a clean result by the package's files and the flag
// values, not by the report's content: pass the report's hash as
// -avreport.hash so that a new report is a new cache key. Without it,
// the report is read anyway, but go vet may replay an earlier clean
// result for a package whose files did not change. Without the flags and
// without a report, the analyzer reports nothing.
//
// A report that cannot be used is one diagnostic, in each package, at
// the package clause of its first file, naming the report and what to
// do: a content that does not have the -avreport.hash given (with the
// hash it has), a report that cannot be read or decoded (with the line
// and column where the JSON is wrong), or no report where a flag says
// there is one. It is a diagnostic rather than an error of the analysis
// because go vet shows only the error of a package whose analysis fails,
// and would hide the rest of the suite's findings.
//
// A finding is suppressed, like any other, by //avcheck:ignore on its
// line or the line above, or in the doc comment of its function.
package avreport
