package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
)

// ResealJob is the name of the periodic job that re-seals data under the current encryption key.
const ResealJob = "data.reseal"

// resealBatch is how many blobs and chunks one transaction of a re-seal takes.
const resealBatch = 200

// DataKeys builds the keyring of RAGD_ENCRYPTION_KEY and RAGD_ENCRYPTION_OLD_KEYS (nil when no key is set:
// contents are stored in the clear).
func DataKeys(cfg config.Config) (*sealing.Keyring, error) {
	if cfg.EncryptionKey == "" {
		return nil, nil
	}
	cur, err := sealing.ParseKey(cfg.EncryptionKey)
	if err != nil {
		return nil, fmt.Errorf("RAGD_ENCRYPTION_KEY: %w", err)
	}
	var old [][]byte
	for i, s := range cfg.EncryptionOldKeys {
		k, err := sealing.ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("RAGD_ENCRYPTION_OLD_KEYS: key %d: %w", i+1, err)
		}
		old = append(old, k)
	}
	return sealing.New(cur, old...)
}

// Reseal re-seals, a batch per transaction, every blob and chunk text that is not under the current key
// (data stored in the clear before a key was set included), calling progress after each batch with the rows done so far. It returns how many rows it changed.
func (a *App) Reseal(ctx context.Context, progress func(done int)) (int, error) {
	st, ok := a.Store.(rag.SealedStore)
	if !ok {
		return 0, fmt.Errorf("store %T does not encrypt at rest", a.Store)
	}
	done := 0
	for {
		n, err := st.RekeyData(ctx, resealBatch)
		if err != nil {
			return done, err
		}
		if n == 0 {
			if done > 0 {
				a.Logger.Info("data re-sealed", slog.Int("rows", done))
			}
			return done, nil
		}
		done += n
		if progress != nil {
			progress(done)
		}
	}
}
