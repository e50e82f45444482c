// Package storetest is the conformance suite of the store interfaces of
// internal/assistant (store.go, keys.go, review.go, transfer.go): one set of tests,
// written against the documented method contracts, that every store runs
// from its own tests with Run. A behaviour both stores must share (an
// ordering, a tie-break, an error code, what a failed call leaves behind)
// is tested here, once.
//
// It imports the domain only; each store's test passes a function that
// opens a new, empty store of its kind.
package storetest

import (
	"context"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Store is what the suite tests: every store interface of the domain,
// plus WorkspaceExists.
type Store interface {
	assistant.KnowledgeStore
	assistant.KnowledgeImporter
	assistant.CitationStore
	assistant.AccessStore
	assistant.ReviewStore
	assistant.Pinger
	assistant.Exporter
	assistant.Loader
	assistant.WebhookStore
	WorkspaceExists(ctx context.Context, id string) (bool, error)
}

// Opener returns a new, empty store (migrated, with nothing in it), closed
// when t ends.
type Opener func(t *testing.T) Store

// Run runs the whole suite, each test on stores of its own, in parallel.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"Ping", testPing},
		{"SyncEntities/InsertsAndRoundTrips", testSyncRoundTrip},
		{"SyncEntities/UpdatesAndDeletesOnlyItsOrigin", testSyncOrigins},
		{"SyncEntities/FailureChangesNothing", testSyncFailure},
		{"SyncEntities/Concurrent", testSyncConcurrent},
		{"ImportEntities", testImport},
		{"Entities", testEntities},
		{"AllEntitiesOrder", testAllEntitiesOrder},
		{"KnowledgeStats", testStats},
		{"KnowledgeVersion", testKnowledgeVersion},
		{"Citations/Dedupe", testCitationDedupe},
		{"Citations/Leaderboard", testLeaderboard},
		{"Workspaces", testWorkspaces},
		{"Keys/CreateAndRead", testKeys},
		{"Keys/Revoke", testRevoke},
		{"Keys/ExpireBy", testExpireBy},
		{"Keys/Touch", testTouch},
		{"Users", testUsers},
		{"Audit", testAudit},
		{"Usage", testUsage},
		{"RecordTurn", testRecordTurn},
		{"SetupToken", testSetupToken},
		{"ReviewSetting", testReviewSetting},
		{"Reviews/KeepReadDelete", testReviewsKeepReadDelete},
		{"Reviews/SettingAppliesToKept", testReviewsSetting},
		{"Reviews/Expiry", testReviewsExpiry},
		{"Reviews/KeptWhileTurnedOff", testReviewsTurnedOffConcurrently},
		{"Webhooks/Endpoints", testWebhookEndpoints},
		{"Webhooks/KeyEvents", testKeyEvents},
		{"Webhooks/DeliveryClaims", testDeliveryClaims},
		{"Webhooks/AsyncTurns", testAsyncTurns},
		{"Transfer/CopiesEverything", testTransfer},
		{"Transfer/RefusesATargetWithData", testTransferRefuses},
		{"Transfer/FailureChangesNothing", testTransferFailure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, open)
		})
	}
}

func testPing(t *testing.T, open Opener) {
	if err := open(t).Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// wantCode fails the test unless err carries the domain error code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := assistant.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
