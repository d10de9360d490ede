package bench

import (
	"context"
	"fmt"
	"strconv"
)

// runMemory writes s.Bytes of generated rows through loader.Loader.Write
// into one checkpoint (one Stream Load) of the counting table, then
// decides and commits it. It measures the sink side only: no Kafka.
func runMemory(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	client, err := newDoris(s)
	if err != nil {
		return res, err
	}
	defer client.Close()
	ld, err := newLoader(client, s, nil)
	if err != nil {
		return res, err
	}
	if _, err := ld.Recover(ctx); err != nil {
		ld.Close(ctx)
		return res, fmt.Errorf("recover: %w", err)
	}
	gen := newRowGen(s.Format, s.RecordBytes, 11)
	const distinct = 1024
	rows := make([][]byte, distinct)
	for i := range rows {
		rows[i] = gen.appendRow(nil, int64(i))
	}
	m, err := startMeter(s.CPUProfile)
	if err == nil {
		err = m.watch(nil)
	}
	if err != nil {
		ld.Close(ctx)
		return res, err
	}
	for res.Bytes < s.Bytes {
		r := rows[res.Records%distinct]
		if err := ld.Write(ctx, r); err != nil {
			ld.Close(ctx)
			return res, err
		}
		res.Records++
		res.Bytes += int64(len(r))
	}
	if err := ld.Checkpoint(ctx, []byte(`{"rows":`+strconv.FormatInt(res.Records, 10)+`}`)); err != nil {
		ld.Close(ctx)
		return res, fmt.Errorf("checkpoint: %w", err)
	}
	if err := ld.Close(ctx); err != nil {
		return res, fmt.Errorf("close (waits for the commit): %w", err)
	}
	if err := m.stop(&res); err != nil {
		return res, err
	}
	res.Checkpts = 1
	return res, nil
}
