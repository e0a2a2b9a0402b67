// Package sealing encrypts what ragd stores of documents' contents at rest: the original files and
// extracted texts (blobs) and the passages (chunk texts), with AES-256-GCM under a data key from
// RAGD_ENCRYPTION_KEY (docs/security.md "Encryption at rest"). Each sealed value is stored with the ID of
// its key, so that a key can be rotated: the new key seals, the old ones still open, and a background pass
// re-seals what the old keys sealed.
package sealing

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// KeySize is the size of a data key: 32 bytes, AES-256.
const KeySize = 32

// ErrNoKey is returned when data sealed by a key the Keyring does not hold is to be opened.
var ErrNoKey = errors.New("encryption key not given")

// Keyring holds the current data key, which seals, and older keys, which only open. A nil *Keyring seals
// nothing: Seal returns its input and Open of sealed data fails with ErrNoKey.
type Keyring struct {
	current string // key ID
	keys    map[string]cipher.AEAD
}

// ParseKey reads a data key written as 64 hex digits or as base64 (standard or URL alphabet, padded or
// not) of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("a data key is %d bytes written as 64 hex digits or base64 (e.g. openssl rand -hex 32)", KeySize)
}

// New returns a Keyring that seals with current and opens with current and every key of old.
func New(current []byte, old ...[]byte) (*Keyring, error) {
	k := &Keyring{keys: map[string]cipher.AEAD{}}
	for i, key := range append([][]byte{current}, old...) {
		if len(key) != KeySize {
			return nil, fmt.Errorf("data key %d is %d bytes, want %d", i+1, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(key)
		if i == 0 {
			k.current = id
		}
		k.keys[id] = aead
	}
	return k, nil
}

// KeyID names a key without revealing it: 16 hex digits of a SHA-256 of the key under a fixed label.
func KeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("ragd data key id\x00"), key...))
	return hex.EncodeToString(sum[:8])
}

// ID is the ID of the key that seals ("" for a nil Keyring: data is stored in the clear).
func (k *Keyring) ID() string {
	if k == nil {
		return ""
	}
	return k.current
}

// Has reports whether k can open data sealed under key ID id ("" is data in the clear, always readable).
func (k *Keyring) Has(id string) bool {
	if id == "" {
		return true
	}
	if k == nil {
		return false
	}
	_, ok := k.keys[id]
	return ok
}

// Seal encrypts plain under the current key, with a fresh random nonce, and binds the key ID as associated
// data. It returns the nonce and the ciphertext, and the key ID to store beside them; a nil Keyring returns
// plain and "".
func (k *Keyring) Seal(plain []byte) ([]byte, string) {
	if k == nil {
		return plain, ""
	}
	aead := k.keys[k.current]
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return aead.Seal(out, out, plain, []byte(k.current)), k.current
}

// Open decrypts data sealed under key ID id; data with the ID "" is returned as it is. ErrNoKey (wrapped,
// naming the ID) when k does not hold that key; an error when the data was changed.
func (k *Keyring) Open(data []byte, id string) ([]byte, error) {
	if id == "" {
		return data, nil
	}
	if !k.Has(id) {
		return nil, fmt.Errorf("data sealed with key %s: %w (RAGD_ENCRYPTION_KEY, or RAGD_ENCRYPTION_OLD_KEYS while rotating)", id, ErrNoKey)
	}
	aead := k.keys[id]
	if len(data) < aead.NonceSize() {
		return nil, fmt.Errorf("data sealed with key %s is truncated", id)
	}
	plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("data sealed with key %s does not open: %w", id, err)
	}
	return plain, nil
}

// SealText is Seal for a text column: the sealed bytes in standard base64.
func (k *Keyring) SealText(plain string) (string, string) {
	if k == nil {
		return plain, ""
	}
	b, id := k.Seal([]byte(plain))
	return base64.StdEncoding.EncodeToString(b), id
}

// OpenText is Open for what SealText made.
func (k *Keyring) OpenText(s, id string) (string, error) {
	if id == "" {
		return s, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("data sealed with key %s is not base64: %w", id, err)
	}
	plain, err := k.Open(b, id)
	return string(plain), err
}

// CheckStore is Check of the key IDs a store reports in use (ids): what a store runs when it opens.
func (k *Keyring) CheckStore(ctx context.Context, ids func(context.Context) ([]string, error)) error {
	inUse, err := ids(ctx)
	if err != nil {
		return err
	}
	return k.Check(inUse)
}

// Check says whether data sealed under the key IDs inUse can be opened with k: an error naming what is
// missing when not, so that ragd refuses to start rather than fail on every read.
func (k *Keyring) Check(inUse []string) error {
	var missing []string
	for _, id := range inUse {
		if !k.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	if k == nil {
		return fmt.Errorf("the store holds data encrypted with key %s and RAGD_ENCRYPTION_KEY is not set: %w", strings.Join(missing, ", "), ErrNoKey)
	}
	return fmt.Errorf("the store holds data encrypted with key %s, which neither RAGD_ENCRYPTION_KEY (key %s) nor RAGD_ENCRYPTION_OLD_KEYS is: %w",
		strings.Join(missing, ", "), k.current, ErrNoKey)
}
