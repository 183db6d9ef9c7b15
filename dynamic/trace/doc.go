// Package trace is avcheck's model of a recorded run: a sequence of small
// events, one per memory access or synchronisation operation of a marked
// region, with the tables that name their sites and objects.
//
// A trace is what the recorder (dynamic/record) writes and what the
// predictors (dynamic/predict) read. It is valid only if it is a possible
// sequentially consistent execution; see Validate and Validator.
//
// # Files
//
// Traces are stored in three formats, all streamed (a Reader holds the
// tables, not the events), documented precisely in docs/trace-formats.md:
//
//   - native: a compact binary format (BinaryReader, BinaryWriter), what
//     the recorder writes;
//   - text: one event per line, "g1 rd 0x10 @3 region=2.1 br=1 v=5", for
//     people and test fixtures (TextReader, TextWriter), which may name
//     objects and sites instead of declaring them;
//   - std: RAPID's STD format, "T0|r(V1)|12", for exchange with other
//     tools (STDReader, STDWriter), with the site and object table in a
//     side file.
//
// Open detects a file's format and returns a Reader; ReadAll reads one
// into a Trace; Copy and WriteFile convert. A malformed file gives one
// *FormatError naming the file and position.
package trace
