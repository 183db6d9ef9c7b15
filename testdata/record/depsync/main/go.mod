module example.invalid/depsync

go 1.22

require example.invalid/gate v1.0.0
