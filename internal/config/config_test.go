package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		c, err := Load(envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		if c.DataDir != "./ragd-data" || c.Addr != "127.0.0.1:8080" || c.Embedder != "hash" || c.Generator != "extractive" ||
			c.EmbedDim != 0 || c.MaxUploadBytes != 50<<20 || c.RateLimitChat != 30 || c.RateLimitSearch != 120 {
			t.Errorf("defaults = %+v", c)
		}
	})
	t.Run("Overrides", func(t *testing.T) {
		c, err := Load(envOf(map[string]string{
			"RAGD_DATA_DIR": "/tmp/x", "RAGD_ADDR": ":9", "RAGD_API_KEYS": "a, b ,,c", "RAGD_CORS_ORIGINS": "https://x.example",
			"RAGD_VECTOR_WEIGHT": "0.5", "RAGD_KEYWORD_WEIGHT": "0.5", "GOOGLE_API_KEY": "g1", "GEMINI_API_KEY": "g2",
		}))
		if err != nil {
			t.Fatal(err)
		}
		if c.DataDir != "/tmp/x" || c.Addr != ":9" || strings.Join(c.APIKeys, "|") != "a|b|c" ||
			len(c.CORSOrigins) != 1 || c.VectorWeight != 0.5 || c.GeminiAPIKey != "g2" {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("KeywordFeedback", func(t *testing.T) {
		for v, want := range map[string]int{"": 0, "10": 10, " 3 ": 3, "-1": -1} {
			if c, err := Load(envOf(map[string]string{"RAGD_KEYWORD_FEEDBACK": v})); err != nil || c.KeywordFeedback != want {
				t.Errorf("RAGD_KEYWORD_FEEDBACK=%q: %d, %v; want %d", v, c.KeywordFeedback, err, want)
			}
		}
		for _, bad := range []string{"ten", "2.5"} {
			if _, err := Load(envOf(map[string]string{"RAGD_KEYWORD_FEEDBACK": bad})); err == nil || !strings.Contains(err.Error(), "RAGD_KEYWORD_FEEDBACK") {
				t.Errorf("RAGD_KEYWORD_FEEDBACK=%q: err = %v, want one naming the variable", bad, err)
			}
		}
	})
	t.Run("QueryExpansion", func(t *testing.T) {
		if c, err := Load(envOf(map[string]string{"RAGD_QUERY_EXPANSION": "llm"})); err != nil || c.QueryExpansion != "llm" {
			t.Errorf("got %q, %v", c.QueryExpansion, err)
		}
		if _, err := Load(envOf(map[string]string{"RAGD_QUERY_EXPANSION": "synonyms"})); err == nil {
			t.Error("RAGD_QUERY_EXPANSION=synonyms accepted")
		}
	})
	t.Run("Rerank", func(t *testing.T) {
		key := filepath.Join(t.TempDir(), "rerank-key")
		if err := os.WriteFile(key, []byte("rk\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(envOf(map[string]string{"RAGD_RERANKER": "cohere", "RAGD_RERANK_API_KEY_FILE": key,
			"RAGD_RERANK_PRESET": "seed003", "RAGD_RERANK_TOP_N": "1000", "RAGD_RERANK_MODEL": "m"}))
		if err != nil || c.Reranker != "cohere" || c.RerankAPIKey != "rk" || c.RerankTopN != 1000 || c.RerankPreset != "seed003" || c.RerankModel != "m" {
			t.Errorf("got %+v, %v", c, err)
		}
		for _, bad := range []map[string]string{
			{"RAGD_RERANKER": "cohere"},                                   // no key
			{"RAGD_RERANKER": "tei"},                                      // no URL
			{"RAGD_RERANKER": "bge"},                                      // unknown
			{"RAGD_RERANK_PRESET": "seed004"},                             // unknown
			{"RAGD_RERANK_TOP_N": "1001"},                                 // above the limit
			{"RAGD_RERANK_TOP_N": "-1"},                                   // negative
			{"RAGD_RERANK_API_KEY": "a", "RAGD_RERANK_API_KEY_FILE": key}, // both
		} {
			if _, err := Load(envOf(bad)); err == nil {
				t.Errorf("%v accepted", bad)
			}
		}
		if _, err := Load(envOf(map[string]string{"RAGD_RERANKER": "tei", "RAGD_RERANK_URL": "http://127.0.0.1:8081"})); err != nil {
			t.Errorf("tei with a URL: %v", err)
		}
	})
	t.Run("SecretFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "keys")
		if err := os.WriteFile(path, []byte("k1\nk2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(envOf(map[string]string{"RAGD_API_KEYS_FILE": path}))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(c.APIKeys, "|") != "k1|k2" {
			t.Errorf("keys = %q", c.APIKeys)
		}
		if _, err := Load(envOf(map[string]string{"RAGD_API_KEYS_FILE": path + "-missing"})); err == nil {
			t.Error("a missing secret file must be an error")
		}
	})
	t.Run("KeysFailClosed", func(t *testing.T) {
		dir := t.TempDir()
		file := func(name, content string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		keys := file("keys", "# ops\nk-ops\n\n   \n  k-ci # the CI key\nk#with-hash\n")
		c, err := Load(envOf(map[string]string{"RAGD_API_KEYS_FILE": keys}))
		if err != nil || strings.Join(c.APIKeys, "|") != "k-ops|k-ci|k#with-hash" {
			t.Fatalf("keys with comments: %q %v", c.APIKeys, err)
		}
		for name, env := range map[string]map[string]string{
			"BlankVariable": {"RAGD_API_KEYS": " , "},
			"EmptyFile":     {"RAGD_API_KEYS_FILE": file("empty", "")},
			"CommentsOnly":  {"RAGD_API_KEYS_FILE": file("comments", "# a\n\n# b\n")},
			"Both":          {"RAGD_API_KEYS": "k1", "RAGD_API_KEYS_FILE": keys},
		} {
			_, err := Load(envOf(env))
			if err == nil || !strings.Contains(err.Error(), "RAGD_API_KEYS") {
				t.Errorf("%s: %v, want an error naming the setting", name, err)
			}
		}
		if _, err := Load(envOf(map[string]string{"RAGD_API_KEYS": "k1", "RAGD_API_KEYS_FILE": keys})); err == nil ||
			!strings.Contains(err.Error(), "RAGD_API_KEYS and RAGD_API_KEYS_FILE") {
			t.Errorf("both set: %v, want an error naming both", err)
		}
	})
	t.Run("DataKeys", func(t *testing.T) {
		k1, k2 := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
		path := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(path, []byte(k1+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(envOf(map[string]string{"RAGD_ENCRYPTION_KEY_FILE": path, "RAGD_ENCRYPTION_OLD_KEYS": k2 + ", " + k2}))
		if err != nil || c.EncryptionKey != k1 || len(c.EncryptionOldKeys) != 2 {
			t.Fatalf("keys from a file = %q %q, %v", c.EncryptionKey, c.EncryptionOldKeys, err)
		}
		if c, err := Load(envOf(nil)); err != nil || c.EncryptionKey != "" || c.PurgeAfter != 168*time.Hour {
			t.Errorf("defaults: key %q, purge after %s, %v", c.EncryptionKey, c.PurgeAfter, err)
		}
		for name, env := range map[string]map[string]string{
			"Blank":         {"RAGD_ENCRYPTION_KEY": "  "},
			"Short":         {"RAGD_ENCRYPTION_KEY": k1[:62]},
			"BadOld":        {"RAGD_ENCRYPTION_KEY": k1, "RAGD_ENCRYPTION_OLD_KEYS": "nope"},
			"BlankOld":      {"RAGD_ENCRYPTION_KEY": k1, "RAGD_ENCRYPTION_OLD_KEYS": " , "},
			"OldWithoutKey": {"RAGD_ENCRYPTION_OLD_KEYS": k2},
			"NegativePurge": {"RAGD_PURGE_AFTER": "-1s"},
		} {
			if _, err := Load(envOf(env)); err == nil || !strings.Contains(err.Error(), "RAGD_") {
				t.Errorf("%s: %v, want an error naming the setting", name, err)
			}
		}
		if c, err := Load(envOf(map[string]string{"RAGD_PURGE_AFTER": "0s"})); err != nil || c.PurgeAfter != 0 {
			t.Errorf("RAGD_PURGE_AFTER=0s: %s, %v", c.PurgeAfter, err)
		}
	})
	t.Run("Budgets", func(t *testing.T) {
		c, err := Load(envOf(map[string]string{"RAGD_MAX_CHARS": "1000", "RAGD_EXTRACT_TIMEOUT": "5s", "RAGD_READ_TIMEOUT": "3s",
			"RAGD_ALLOWED_HOSTS": "ragd.lan, localhost", "RAGD_MAX_METADATA_KEYS": "9", "RAGD_MAX_CONNECTIONS": "0"}))
		if err != nil || c.MaxChars != 1000 || c.ExtractTimeout != 5*time.Second || c.ReadTimeout != 3*time.Second ||
			strings.Join(c.AllowedHosts, "|") != "ragd.lan|localhost" || c.Metadata.MaxKeys != 9 || c.Metadata.MaxDepth != 8 || c.MaxConnections != 0 {
			t.Fatalf("got %+v %v", c, err)
		}
	})
	t.Run("VectorIndex", func(t *testing.T) {
		c, err := Load(envOf(map[string]string{"RAGD_VECTOR_INDEX_MIN": "-1", "RAGD_VECTOR_MEMORY": "0"}))
		if err != nil || c.VectorIndexMin != -1 || c.VectorMemory != 0 {
			t.Fatalf("got %d %d %v", c.VectorIndexMin, c.VectorMemory, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_OCR": "force", "RAGD_OCR_LANGS": "eng", "RAGD_OCR_PAGE_TIMEOUT": "30s", "RAGD_OCR_PAGE_MEMORY": "67108864"}))
		if err != nil || c.OCR != "force" || c.OCRLangs != "eng" || c.OCRPageTimeout != 30*time.Second || c.OCRPageMemory != 64<<20 {
			t.Fatalf("OCR settings: got %q %q %s %d %v", c.OCR, c.OCRLangs, c.OCRPageTimeout, c.OCRPageMemory, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_VECTOR_INDEX_MIN": "50000", "RAGD_VECTOR_MEMORY": "1073741824"}))
		if err != nil || c.VectorIndexMin != 50000 || c.VectorMemory != 1<<30 {
			t.Fatalf("got %d %d %v", c.VectorIndexMin, c.VectorMemory, err)
		}
		for v, want := range map[string]int64{"-1": -1, "0": 0, "1": 1, "1073741824": 1 << 30} {
			c, err = Load(envOf(map[string]string{"RAGD_VECTOR_HEAP": v}))
			if err != nil || c.VectorHeap != want {
				t.Fatalf("RAGD_VECTOR_HEAP=%s: got %d %v", v, c.VectorHeap, err)
			}
		}
		for v, want := range map[string]int64{"-1": -1, "0": 0, "1": 1, "536870912": 512 << 20} {
			c, err = Load(envOf(map[string]string{"RAGD_VECTOR_COLUMNS": v}))
			if err != nil || c.VectorColumns != want {
				t.Fatalf("RAGD_VECTOR_COLUMNS=%s: got %d %v", v, c.VectorColumns, err)
			}
		}
		for v, want := range map[string]int{"-1": -1, "0": 0, "1": 1, "67108864": 64 << 20} {
			c, err = Load(envOf(map[string]string{"RAGD_HIT_CACHE": v}))
			if err != nil || c.HitCache != want {
				t.Fatalf("RAGD_HIT_CACHE=%s: got %d %v", v, c.HitCache, err)
			}
		}
		for v, want := range map[string]int{"0": 0, "1": 1, "64": 64} {
			c, err = Load(envOf(map[string]string{"RAGD_SEARCH_SLOTS": v}))
			if err != nil || c.SearchSlots != want {
				t.Fatalf("RAGD_SEARCH_SLOTS=%s: got %d %v", v, c.SearchSlots, err)
			}
		}
		for v, want := range map[string]int{"-1": -1, "1": 1, "100000": 100000} {
			c, err = Load(envOf(map[string]string{"RAGD_KEYWORD_INDEX_MIN": v}))
			if err != nil || c.KeywordIndexMin != want {
				t.Fatalf("RAGD_KEYWORD_INDEX_MIN=%s: got %d %v", v, c.KeywordIndexMin, err)
			}
		}
	})
	bad := map[string]map[string]string{
		"NegativeBudget":    {"RAGD_MAX_PAGES": "-1"},
		"ZeroReadTimeout":   {"RAGD_READ_TIMEOUT": "0s"},
		"NegativeConnLimit": {"RAGD_MAX_CONNECTIONS": "-1"},
		"PDFMemoryTooSmall": {"RAGD_PDF_MEMORY_LIMIT": "1000"},
		"UnknownOCRMode":    {"RAGD_OCR": "sometimes"},
		"OCRMemoryTooSmall": {"RAGD_OCR_PAGE_MEMORY": "67108863"},
		"NegativeOCRTime":   {"RAGD_OCR_PAGE_TIMEOUT": "-1s"},
		"VectorIndexMinLow": {"RAGD_VECTOR_INDEX_MIN": "-2"},
		"NegativeVecMemory": {"RAGD_VECTOR_MEMORY": "-1"},
		"VectorHeapLow":     {"RAGD_VECTOR_HEAP": "-2"},
		"HitCacheLow":       {"RAGD_HIT_CACHE": "-2"},
		"SearchSlotsLow":    {"RAGD_SEARCH_SLOTS": "-1"},
		"VectorColumnsLow":  {"RAGD_VECTOR_COLUMNS": "-2"},
		"KeywordIndexLow":   {"RAGD_KEYWORD_INDEX_MIN": "-2"},
		"ZeroMetadataKeys":  {"RAGD_MAX_METADATA_KEYS": "0"},
		"UnknownEmbedder":   {"RAGD_EMBEDDER": "word2vec"},
		"UnknownGenerator":  {"RAGD_GENERATOR": "gpt"},
		"NotAnInteger":      {"RAGD_EMBED_DIM": "many"},
		"ChunkTooSmall":     {"RAGD_CHUNK_SIZE": "99"},
		"OverlapTooLarge":   {"RAGD_CHUNK_SIZE": "1000", "RAGD_CHUNK_OVERLAP": "500"},
		"NegativeWeight":    {"RAGD_VECTOR_WEIGHT": "-0.1"},
		"NegativeRateLimit": {"RAGD_RATE_LIMIT_CHAT": "-1"},
		"BadDuration":       {"RAGD_MODEL_TIMEOUT": "soon"},
		"BadLogLevel":       {"RAGD_LOG_LEVEL": "loud"},
		"HNSWMTooSmall":     {"RAGD_HNSW_M": "1"},
		"HNSWMTooLarge":     {"RAGD_HNSW_M": "101"},
		"EfConstructionLow": {"RAGD_HNSW_M": "16", "RAGD_HNSW_EF_CONSTRUCTION": "31"},
		"EfConstructionBig": {"RAGD_HNSW_EF_CONSTRUCTION": "1001"},
		"EfSearchTooLarge":  {"RAGD_HNSW_EF_SEARCH": "1001"},
		"EfSearchNegative":  {"RAGD_HNSW_EF_SEARCH": "-1"},
		"QAIntervalShort":   {"RAGD_QA_INTERVAL": "999ms"},
		"QABatchZero":       {"RAGD_QA_BATCH": "0"},
		"QABatchTooLarge":   {"RAGD_QA_BATCH": "1001"},
		"QADelayNegative":   {"RAGD_QA_DELAY": "-1s"},
		"QAAttemptsZero":    {"RAGD_QA_MAX_ATTEMPTS": "0"},
		"QAAttemptsTooMany": {"RAGD_QA_MAX_ATTEMPTS": "101"},
		"WebhookAttempts0":  {"RAGD_WEBHOOK_MAX_ATTEMPTS": "0"},
		"WebhookAttempts26": {"RAGD_WEBHOOK_MAX_ATTEMPTS": "26"},
		"WebhookBaseShort":  {"RAGD_WEBHOOK_RETRY_BASE": "99ms"},
		"WebhookBaseLong":   {"RAGD_WEBHOOK_RETRY_BASE": "61m"},
		"WebhookTimeout0":   {"RAGD_WEBHOOK_TIMEOUT": "999ms"},
		"WebhookTimeout61":  {"RAGD_WEBHOOK_TIMEOUT": "61s"},
		"WebhookPrivateBad": {"RAGD_WEBHOOK_ALLOW_PRIVATE": "maybe"},
	}
	for name, env := range bad {
		t.Run("Err"+name, func(t *testing.T) {
			if _, err := Load(envOf(env)); err == nil {
				t.Errorf("Load(%v) succeeded, want an error", env)
			}
		})
	}
	t.Run("HNSWBoundaries", func(t *testing.T) {
		c, err := Load(envOf(map[string]string{"RAGD_HNSW_M": "100", "RAGD_HNSW_EF_CONSTRUCTION": "200", "RAGD_HNSW_EF_SEARCH": "1000"}))
		if err != nil || c.HNSWM != 100 || c.HNSWEfConstruction != 200 || c.HNSWEfSearch != 1000 {
			t.Errorf("upper bounds: %+v, %v", c, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_HNSW_M": "2", "RAGD_HNSW_EF_CONSTRUCTION": "4", "RAGD_HNSW_EF_SEARCH": "1"}))
		if err != nil || c.HNSWM != 2 || c.HNSWEfConstruction != 4 || c.HNSWEfSearch != 1 {
			t.Errorf("lower bounds: %+v, %v", c, err)
		}
		if _, err := Load(envOf(map[string]string{"RAGD_HNSW_EF_CONSTRUCTION": "32"})); err != nil {
			t.Errorf("ef_construction 32 with the default m 16: %v", err)
		}
		if _, err := Load(envOf(map[string]string{"RAGD_HNSW_EF_CONSTRUCTION": "1000"})); err != nil {
			t.Errorf("ef_construction 1000 (the maximum): %v", err)
		}
	})
	t.Run("QA", func(t *testing.T) {
		c, err := Load(envOf(nil))
		if err != nil || c.QA != (QA{Interval: 10 * time.Minute, Batch: 10, MaxAttempts: 5}) {
			t.Errorf("defaults: %+v, %v", c.QA, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_QA_INTERVAL": "1s", "RAGD_QA_BATCH": "1000", "RAGD_QA_DELAY": "0s",
			"RAGD_QA_MAX_ATTEMPTS": "100"}))
		if err != nil || c.QA != (QA{Interval: time.Second, Batch: 1000, MaxAttempts: 100}) {
			t.Errorf("upper bounds: %+v, %v", c.QA, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_QA_BATCH": "1", "RAGD_QA_DELAY": "250ms", "RAGD_QA_MAX_ATTEMPTS": "1"}))
		if err != nil || c.QA.Batch != 1 || c.QA.Delay != 250*time.Millisecond || c.QA.MaxAttempts != 1 {
			t.Errorf("lower bounds: %+v, %v", c.QA, err)
		}
	})
	t.Run("Webhooks", func(t *testing.T) {
		c, err := Load(envOf(nil))
		if err != nil || c.Webhooks != (Webhooks{MaxAttempts: 10, RetryBase: 30 * time.Second, Timeout: 10 * time.Second}) {
			t.Errorf("defaults: %+v, %v", c.Webhooks, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_WEBHOOK_ALLOW_PRIVATE": "true", "RAGD_WEBHOOK_MAX_ATTEMPTS": "25",
			"RAGD_WEBHOOK_RETRY_BASE": "1h", "RAGD_WEBHOOK_TIMEOUT": "60s"}))
		if err != nil || c.Webhooks != (Webhooks{AllowPrivate: true, MaxAttempts: 25, RetryBase: time.Hour, Timeout: time.Minute}) {
			t.Errorf("upper bounds: %+v, %v", c.Webhooks, err)
		}
		c, err = Load(envOf(map[string]string{"RAGD_WEBHOOK_MAX_ATTEMPTS": "1", "RAGD_WEBHOOK_RETRY_BASE": "100ms", "RAGD_WEBHOOK_TIMEOUT": "1s"}))
		if err != nil || c.Webhooks != (Webhooks{MaxAttempts: 1, RetryBase: 100 * time.Millisecond, Timeout: time.Second}) {
			t.Errorf("lower bounds: %+v, %v", c.Webhooks, err)
		}
	})
	t.Run("OneWeight", func(t *testing.T) {
		c, err := Load(envOf(map[string]string{"RAGD_VECTOR_WEIGHT": "0.4"}))
		if err != nil {
			t.Fatal(err)
		}
		if c.VectorWeight != 0.4 || c.KeywordWeight != 0.6 {
			t.Errorf("weights = %v/%v, want 0.4/0.6", c.VectorWeight, c.KeywordWeight)
		}
		c, _ = Load(envOf(map[string]string{"RAGD_KEYWORD_WEIGHT": "1"}))
		if c.VectorWeight != 0 || c.KeywordWeight != 1 {
			t.Errorf("weights = %v/%v, want 0/1 (keyword only)", c.VectorWeight, c.KeywordWeight)
		}
	})
	t.Run("Boundaries", func(t *testing.T) {
		if _, err := Load(envOf(map[string]string{"RAGD_CHUNK_SIZE": "100", "RAGD_CHUNK_OVERLAP": "49"})); err != nil {
			t.Errorf("size 100 / overlap 49: %v", err)
		}
		if _, err := Load(envOf(map[string]string{"RAGD_CHUNK_SIZE": "100", "RAGD_CHUNK_OVERLAP": "50"})); err == nil {
			t.Error("overlap of half the size must be refused")
		}
	})
}

func TestWorker(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
		bad  bool
	}{
		{"", true, false}, {"true", true, false}, {"1", true, false}, {" On ", true, false},
		{"false", false, false}, {"0", false, false}, {"NO", false, false}, {"maybe", false, true},
	} {
		c, err := Load(envOf(map[string]string{"RAGD_WORKER": tc.v}))
		if (err != nil) != tc.bad || (err == nil && c.Worker != tc.want) {
			t.Errorf("RAGD_WORKER=%q: %v %v, want %v (error %v)", tc.v, c.Worker, err, tc.want, tc.bad)
		}
		if err != nil && !strings.Contains(err.Error(), "RAGD_WORKER") {
			t.Errorf("RAGD_WORKER=%q: error %q must name the variable", tc.v, err)
		}
	}
}

func TestAdminKey(t *testing.T) {
	long := strings.Repeat("k", MinAdminKeyLen)
	path := filepath.Join(t.TempDir(), "admin")
	if err := os.WriteFile(path, []byte(long+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(envOf(map[string]string{"RAGD_ADMIN_KEY_FILE": path})); err != nil || c.AdminKey != long {
		t.Errorf("RAGD_ADMIN_KEY_FILE: %q, %v", c.AdminKey, err)
	}
	if c, err := Load(envOf(map[string]string{"RAGD_ADMIN_KEY": long})); err != nil || c.AdminKey != long {
		t.Errorf("RAGD_ADMIN_KEY at the limit: %q, %v", c.AdminKey, err)
	}
	if _, err := Load(envOf(map[string]string{"RAGD_ADMIN_KEY": long[1:]})); err == nil || !strings.Contains(err.Error(), "at least 24") {
		t.Errorf("a key one character short: %v", err)
	}
	if _, err := Load(envOf(map[string]string{"RAGD_ADMIN_KEY": long, "RAGD_ADMIN_KEY_FILE": path})); err == nil {
		t.Error("both RAGD_ADMIN_KEY and its _FILE must be an error")
	}
}

func TestPGRowSecurity(t *testing.T) {
	for _, tc := range []struct {
		env        map[string]string
		mode, role string
		bad        bool
	}{
		{map[string]string{}, "auto", DefaultPGReaderRole, false},
		{map[string]string{"RAGD_PG_ROW_SECURITY": "OFF"}, "off", DefaultPGReaderRole, false},
		{map[string]string{"RAGD_PG_ROW_SECURITY": "on"}, "on", DefaultPGReaderRole, false},
		{map[string]string{"RAGD_PG_READER_ROLE": "rls_reads"}, "on", "rls_reads", false}, // named on purpose: required
		{map[string]string{"RAGD_PG_READER_ROLE": "rls_reads", "RAGD_PG_ROW_SECURITY": "off"}, "off", "rls_reads", false},
		{map[string]string{"RAGD_PG_ROW_SECURITY": "sometimes"}, "", "", true},
	} {
		c, err := Load(envOf(tc.env))
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), "RAGD_PG_ROW_SECURITY") {
				t.Errorf("%v: %v; want an error naming RAGD_PG_ROW_SECURITY", tc.env, err)
			}
			continue
		}
		if err != nil || c.PGRowSecurity != tc.mode || c.PGReaderRole != tc.role {
			t.Errorf("%v: mode %q role %q (%v); want %q %q", tc.env, c.PGRowSecurity, c.PGReaderRole, err, tc.mode, tc.role)
		}
	}
}
