package loader

import (
	"slices"
	"sync"
)

// maxParallel bounds the concurrent Doris requests of one checkpoint's
// tables (precommits, commits, aborts): one request per table at once
// would open as many connections as the checkpoint has tables.
const maxParallel = 8

// parallel runs f(0), …, f(n-1), at most maxParallel at once, and waits
// for all. n == 1 runs on the caller's goroutine.
func parallel(n int, f func(i int)) {
	if n == 1 {
		f(0)
		return
	}
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}
