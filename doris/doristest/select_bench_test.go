package doristest

import (
	"bufio"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// selectBenchRows is the rows per table of BenchmarkSelectLargeTables. The
// default keeps `go test -bench` short; the figures in docs/emulator.md were
// taken with -args -doristest.select-rows=6000000.
var (
	selectBenchRows  = flag.Int("doristest.select-rows", 20_000, "rows per table in BenchmarkSelectLargeTables")
	selectBenchModel = flag.String("doristest.select-model", "DUPLICATE", "key model of the big tables in BenchmarkSelectLargeTables: DUPLICATE, UNIQUE or AGGREGATE")
)

// BenchmarkSelectLargeTables loads 4 Duplicate tables of
// -doristest.select-rows rows each through Stream Load and measures, over
// MySQL: the first COUNT(*) after each load, a SELECT on a small table while
// the big ones are held, an aggregate over one big table, and resident memory
// against the CSV bytes loaded (issue 9 item 7). It reports figures, it
// asserts none.
func BenchmarkSelectLargeTables(b *testing.B) {
	n := *selectBenchRows
	for b.Loop() {
		s, err := NewServer(SeedDatabases(testDB))
		if err != nil {
			b.Fatal(err)
		}
		db, err := sql.Open("mysql", "root:@tcp("+s.MySQLAddr()+")/demo")
		if err != nil {
			b.Fatal(err)
		}
		exec := func(q string) {
			if _, err := db.Exec(q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		timed := func(q string) (time.Duration, string) {
			start := time.Now()
			var v sql.NullString
			if err := db.QueryRow(q).Scan(&v); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
			return time.Since(start), v.String
		}
		exec("CREATE TABLE small (id BIGINT, v VARCHAR(8)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
		var csvBytes int64
		var firstCount, loadTime time.Duration
		for i := range 4 {
			name := fmt.Sprintf("big%d", i)
			values := "amount DECIMAL(12,2), ts DATETIME"
			if *selectBenchModel == "AGGREGATE" {
				values = "amount DECIMAL(12,2) SUM, ts DATETIME REPLACE"
			}
			exec("CREATE TABLE " + name + " (id BIGINT, name VARCHAR(32), " + values + ") " +
				*selectBenchModel + " KEY(id, name) DISTRIBUTED BY HASH(id) BUCKETS 8")
			start := time.Now()
			csvBytes += benchLoad(b, s, name, n)
			loadTime += time.Since(start)
			d, got := timed("SELECT COUNT(*) FROM " + name)
			if got != strconv.Itoa(n) {
				b.Fatalf("COUNT(*) of %s = %s, want %d", name, got, n)
			}
			firstCount = max(firstCount, d)
		}
		small, _ := timed("SELECT COUNT(*) FROM small")
		agg, _ := timed("SELECT SUM(amount) FROM big3 WHERE id % 7 = 0")
		runtime.GC()
		rss, hwm := procMemory()
		// What the process holds once the runtime has returned freed pages
		// (its background scavenger does so over minutes; this forces it).
		debug.FreeOSMemory()
		settled, _ := procMemory()
		b.ReportMetric(firstCount.Seconds(), "first-count-s")
		b.ReportMetric(small.Seconds()*1000, "small-select-ms")
		b.ReportMetric(agg.Seconds(), "agg-big-s")
		b.ReportMetric(loadTime.Seconds()/4, "load-per-table-s")
		b.ReportMetric(float64(csvBytes)/(1<<20), "csv-MiB")
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(rss)/float64(csvBytes), "rss/csv")
		b.ReportMetric(float64(settled)/float64(csvBytes), "settled-rss/csv")
		_ = db.Close()
		s.Close()
	}
}

// benchLoad streams n generated CSV rows into table and returns the bytes
// sent.
func benchLoad(b *testing.B, s *Server, table string, n int) int64 {
	pr, pw := io.Pipe()
	var sent int64
	go func() {
		w := bufio.NewWriterSize(pw, 1<<16)
		var line []byte
		for i := range n {
			line = line[:0]
			line = strconv.AppendInt(line, int64(i), 10)
			line = append(line, ",customer-"...)
			line = strconv.AppendInt(line, int64(i%100_000), 10)
			line = append(line, ',')
			line = strconv.AppendInt(line, int64(i%100_000), 10)
			line = append(line, '.')
			line = strconv.AppendInt(line, int64(10+i%90), 10)
			line = append(line, ",2024-05-01 10:"...)
			line = strconv.AppendInt(line, int64(10+i%50), 10)
			line = append(line, ":00\n"...)
			sent += int64(len(line))
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	req, err := http.NewRequest(http.MethodPut, s.BEURL()+"/api/"+testDB+"/"+table+"/_stream_load", pr)
	if err != nil {
		b.Fatal(err)
	}
	req.SetBasicAuth("root", "")
	req.Header.Set("column_separator", ",")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `"Status": "Success"`) {
		b.Fatalf("load %s: %s", table, raw)
	}
	return sent
}

// procMemory returns VmRSS and VmHWM of this process in bytes (0 where
// /proc is missing).
func procMemory() (rss, hwm int64) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}
