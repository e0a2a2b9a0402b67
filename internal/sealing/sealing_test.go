package sealing_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/sealing"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, sealing.KeySize) }

func TestSealOpen(t *testing.T) {
	k1, err := sealing.New(key(1))
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("연차 휴가는 매년 15일입니다.")
	sealed, id := k1.Seal(plain)
	if id != sealing.KeyID(key(1)) || bytes.Contains(sealed, plain) {
		t.Fatalf("sealed %x with %q", sealed, id)
	}
	again, _ := k1.Seal(plain)
	if bytes.Equal(again, sealed) {
		t.Error("two seals of the same text are equal: the nonce is not fresh")
	}
	if got, err := k1.Open(sealed, id); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	t.Run("ErrTampered", func(t *testing.T) {
		bad := bytes.Clone(sealed)
		bad[len(bad)-1] ^= 1
		if _, err := k1.Open(bad, id); err == nil {
			t.Error("a changed ciphertext opened")
		}
	})
	t.Run("ErrNoKey", func(t *testing.T) {
		k2, _ := sealing.New(key(2))
		if _, err := k2.Open(sealed, id); !errors.Is(err, sealing.ErrNoKey) {
			t.Errorf("Open with another key = %v, want ErrNoKey", err)
		}
		var none *sealing.Keyring
		if _, err := none.Open(sealed, id); !errors.Is(err, sealing.ErrNoKey) {
			t.Errorf("Open without a key = %v, want ErrNoKey", err)
		}
		if err := none.Check([]string{"", id}); !errors.Is(err, sealing.ErrNoKey) || !strings.Contains(err.Error(), id) {
			t.Errorf("Check without a key = %v", err)
		}
		if err := k2.Check([]string{id}); err == nil {
			t.Error("Check with the wrong key passed")
		}
	})
	t.Run("Rotation", func(t *testing.T) {
		k2, err := sealing.New(key(2), key(1))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := k2.Open(sealed, id); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("old key's data with the new keyring = %q, %v", got, err)
		}
		if k2.ID() == id || k2.Check([]string{id, k2.ID(), ""}) != nil {
			t.Errorf("keyring %s cannot open %s", k2.ID(), id)
		}
	})
	t.Run("Text", func(t *testing.T) {
		s, id := k1.SealText(string(plain))
		if strings.Contains(s, "휴가") {
			t.Fatal(s)
		}
		if got, err := k1.OpenText(s, id); err != nil || got != string(plain) {
			t.Fatalf("OpenText = %q, %v", got, err)
		}
	})
	t.Run("Clear", func(t *testing.T) {
		var none *sealing.Keyring
		if b, id := none.Seal(plain); id != "" || !bytes.Equal(b, plain) {
			t.Error("a nil keyring changed the data")
		}
		if b, err := k1.Open(plain, ""); err != nil || !bytes.Equal(b, plain) {
			t.Error("data in the clear did not read back")
		}
	})
}

func TestParseKey(t *testing.T) {
	for _, s := range []string{strings.Repeat("ab", 32), "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=", "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80"} {
		if b, err := sealing.ParseKey(s); err != nil || len(b) != sealing.KeySize {
			t.Errorf("ParseKey(%q) = %d bytes, %v", s, len(b), err)
		}
	}
	for _, s := range []string{"", "short", strings.Repeat("ab", 31), strings.Repeat("ab", 33)} {
		if _, err := sealing.ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
}
