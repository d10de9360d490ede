package load

import (
	"fmt"
	"io"
	"time"

	"github.com/doris-sink/doris-sink/loader/fileload"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 200 * time.Millisecond

// startProgress redraws one progress line on w (a terminal) until the
// returned stop is called, which clears it.
func startProgress(w io.Writer, p *fileload.Progress) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprint(w, "\r\x1b[K"+progressLine(p, time.Since(start)))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// progressLine renders p after elapsed: a bar, bytes, rate, txns committed.
func progressLine(p *fileload.Progress, elapsed time.Duration) string {
	sent, total := p.Sent.Load(), p.Total.Load()
	frac := 0.0
	if total > 0 {
		frac = min(float64(sent)/float64(total), 1)
	}
	const width = 30
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if float64(i) < frac*width {
			bar[i] = '='
		}
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(sent) / 1e6 / s
	}
	return fmt.Sprintf("[%s] %3.0f%% %.1f/%.1f MB %.1f MB/s, %d txns committed",
		bar, frac*100, float64(sent)/1e6, float64(total)/1e6, rate, p.Committed.Load())
}
