package redis

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

func TestPrepareLoadsTheScripts(t *testing.T) {
	mr := miniredis.RunT(t)
	c, err := New(Options{URL: "redis://" + mr.Addr(), Timeout: 10e9})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Prepare(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*goredis.Script{windowScript, tieredScript, throttleBeginScript, throttleEndScript} {
		exists, err := c.rdb.ScriptExists(t.Context(), s.Hash()).Result()
		if err != nil || len(exists) != 1 || !exists[0] {
			t.Errorf("script %s not loaded: %v %v", s.Hash(), exists, err)
		}
	}
}
