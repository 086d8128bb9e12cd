package server

import (
	"context"
	"testing"
)

func TestOwnerFrom(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want Owner
	}{
		{"unset is local", context.Background(), LocalOwner},
		{"empty is local", WithOwner(context.Background(), ""), LocalOwner},
		{"set", WithOwner(context.Background(), "alice/s1"), "alice/s1"},
	}
	for _, tt := range tests {
		if got := OwnerFrom(tt.ctx); got != tt.want {
			t.Errorf("%s: OwnerFrom = %q, want %q", tt.name, got, tt.want)
		}
	}
}
