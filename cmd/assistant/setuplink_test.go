package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServePrintsTheSetupLinkAsABlock: on a first start, serve prints the
// one-time setup link alone on its line inside one block set apart by
// rules and blank lines (written at once, so no log line lands inside it).
func TestServePrintsTheSetupLinkAsABlock(t *testing.T) {
	_, stdout, _ := startServerOutput(t, nil)
	rule := strings.Repeat("-", 72)
	block := regexp.MustCompile(`\n` + rule + `\nNo admin user yet\. Create the first admin \(workspace "default"\) within one hour at:\n\n    http://\S+/admin/setup\?token=[0-9A-Za-z]+\n\n` + rule + `\n\n`)
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out = stdout.String(); block.MatchString(out) {
			return
		}
	}
	t.Fatalf("serve printed no setup block:\n%s", out)
}
