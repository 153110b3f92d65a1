package manager

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTermWaitsForTheControllersToStop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		started bool
	}{
		{"never led: the next campaign starts at once", false},
		{"led: the next campaign waits for the controllers", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term := newTerm()
			stopped := make(chan struct{})
			if tc.started {
				term.begin()
				go func() {
					<-stopped
					term.end()
				}()
			}
			waited := make(chan struct{})
			go func() {
				term.wait()
				close(waited)
			}()
			if tc.started {
				// Time for a wait that does not block to return; no duration is asserted.
				time.Sleep(100 * time.Millisecond)
				select {
				case <-waited:
					assert.Fail(t, "wait returned while the controllers ran")
				default:
				}
				close(stopped)
			}
			<-waited
		})
	}
}
