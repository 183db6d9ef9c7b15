module example.com/avr

go 1.26
