package rag

import (
	"errors"
	"testing"
)

func TestCheckK(t *testing.T) {
	for _, tc := range []struct {
		k, max int
		ok     bool
	}{
		{0, MaxSearchK, true}, // the default
		{1, MaxSearchK, true},
		{MaxSearchK, MaxSearchK, true},
		{MaxSearchK + 1, MaxSearchK, false},
		{-1, MaxSearchK, false},
		{MaxAnswerK, MaxAnswerK, true},
		{MaxAnswerK + 1, MaxAnswerK, false},
	} {
		err := CheckK(tc.k, tc.max)
		var re *Error
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &re) || re.Code != CodeInvalid)) {
			t.Errorf("CheckK(%d, %d) = %v", tc.k, tc.max, err)
		}
	}
}
