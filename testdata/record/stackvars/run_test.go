package stackvars

import (
	"errors"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	for i := 0; i < 3; i++ {
		Start(func() error { return errors.New("failed") })
		time.Sleep(10 * time.Millisecond)
		StartBuf()
		time.Sleep(10 * time.Millisecond)
	}
}
