package main

import "testing"

func TestEnvelopeText(t *testing.T) {
	for body, want := range map[string]string{
		`{"code":"NOT_FOUND","message":"Node not found","requestId":"r","retryable":false,"details":null}`:                                                                     "NOT_FOUND: Node not found",
		`{"code":"VALIDATION_ERROR","message":"Request validation failed","details":{"errors":[{"loc":["path","node_id"],"msg":"cannot drain n2 now","type":"value_error"}]}}`: "VALIDATION_ERROR: Request validation failed: cannot drain n2 now",
		"upstream timed out\n": "upstream timed out",
	} {
		if got := envelopeText([]byte(body)); got != want {
			t.Errorf("envelopeText(%s) = %q, want %q", body, got, want)
		}
	}
}
