module github.com/avcheck/avcheck

go 1.26.0

require (
	github.com/go-air/gini v1.0.4
	github.com/go-delve/delve v1.27.2
	github.com/golangci/plugin-module-register v0.1.2
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/tools v0.52.0
)

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	golang.org/x/arch v0.28.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261009151841-97e8ea77aa2a // indirect
	golang.org/x/text v0.40.0 // indirect
)
