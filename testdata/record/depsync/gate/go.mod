module example.invalid/gate

go 1.16
