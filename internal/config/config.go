// Package config reads ragd's configuration from environment variables (secrets also from <NAME>_FILE) and
// validates it. Command-line flags override individual fields after Load.
package config

import (
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
)

// Config is the whole configuration of a ragd process.
type Config struct {
	// DataDir holds the embedded store (RAGD_DATA_DIR, default ./ragd-data).
	DataDir string
	// DatabaseURL switches to PostgreSQL + pgvector when set (RAGD_DATABASE_URL).
	DatabaseURL string
	// HNSWM and HNSWEfConstruction shape the HNSW index of each new embedding space on PostgreSQL
	// (RAGD_HNSW_M, default 16; RAGD_HNSW_EF_CONSTRUCTION, default 128); HNSWEfSearch is hnsw.ef_search of
	// vector searches (RAGD_HNSW_EF_SEARCH; 0, the default, chooses per embedder: postgres.DefaultEfSearch;
	// a search request's ef_search overrides it).
	HNSWM, HNSWEfConstruction, HNSWEfSearch int
	// PGRowSecurity is PostgreSQL row-level security for reads (RAGD_PG_ROW_SECURITY, docs/security.md):
	// "auto" (default) runs a non-admin principal's reads as PGReaderRole, bound by the policies, when ragd
	// can set that role up, and says once at start-up why not (with the SQL to run) when it cannot; "on"
	// refuses to start without it; "off" reads as ragd's own role.
	PGRowSecurity string
	// PGReaderRole is the role row-secured reads run as (RAGD_PG_READER_ROLE, default ragd_reader). Setting
	// it makes row security required, as "on" does.
	PGReaderRole string
	// Addr is the HTTP listen address (RAGD_ADDR, default 127.0.0.1:8080).
	Addr string

	// Embedder is hash|gemini|openai (RAGD_EMBEDDER); EmbedModel and EmbedDim choose the model and dimension
	// (0: the provider's default — 768 for hash and Gemini, the model's own size for OpenAI-compatible servers).
	Embedder   string
	EmbedModel string
	EmbedDim   int
	// Generator is extractive|gemini|openai|anthropic (RAGD_GENERATOR); GenerateModel chooses the model.
	Generator     string
	GenerateModel string

	GeminiAPIKey     string // GEMINI_API_KEY or GOOGLE_API_KEY
	GeminiBaseURL    string // RAGD_GEMINI_BASE_URL
	OpenAIAPIKey     string // OPENAI_API_KEY
	OpenAIBaseURL    string // OPENAI_BASE_URL
	AnthropicAPIKey  string // ANTHROPIC_API_KEY
	AnthropicBaseURL string // ANTHROPIC_BASE_URL
	// ModelTimeout bounds one provider call (RAGD_MODEL_TIMEOUT; 0: the provider's default, 30 s for
	// embeddings and 120 s for a whole streamed answer).
	ModelTimeout time.Duration

	// MaxUploadBytes is the largest file accepted (RAGD_MAX_UPLOAD_BYTES, default 50 MiB).
	MaxUploadBytes int64
	// ChunkSize and ChunkOverlap in characters (RAGD_CHUNK_SIZE, RAGD_CHUNK_OVERLAP).
	ChunkSize    int
	ChunkOverlap int
	// IngestWorkers is how many documents are processed at once (RAGD_INGEST_WORKERS, default 2).
	IngestWorkers int

	// VectorWeight/KeywordWeight weigh the fusion (RAGD_VECTOR_WEIGHT, RAGD_KEYWORD_WEIGHT). Unset (0/0)
	// means the retriever's default for the embedder (0.7/0.3; 0.2/0.8 for the lexical hash embedder); when
	// only one is set the other is 1 minus it.
	VectorWeight  float64
	KeywordWeight float64
	// MinSimilarity is the relevance threshold (RAGD_MIN_SIMILARITY); 0 means the retriever's default for the
	// embedder, a negative value turns the threshold off.
	MinSimilarity float64
	// Feedback is how many top passages refine the query vector (RAGD_FEEDBACK); 0 means the default (5 for
	// the hash embedder, off for hosted ones), a negative value turns it off.
	Feedback int
	// KeywordFeedback is how many top keyword passages expand the query of a third ranked list
	// (RAGD_KEYWORD_FEEDBACK, relevance-model feedback); 0 means the default (10 for the hash embedder, off
	// for hosted ones), a negative value turns it off.
	KeywordFeedback int
	// DocumentWeight weighs the passages of the documents a question names (RAGD_DOCUMENT_WEIGHT); 0 or
	// negative (the default) leaves the signal off, 0.2 is the weight measured best.
	DocumentWeight float64
	// OpeningWeight weighs the title page of a document a question is about as a whole ("이 법률안은 …",
	// "this report") (RAGD_OPENING_WEIGHT); 0 means the default (half the keyword weight), negative turns
	// it off.
	OpeningWeight float64
	// AnswerCacheTTL keeps answers to questions over one collection for that long (RAGD_ANSWER_CACHE_TTL;
	// 0, the default, turns the cache off); any change to the collection's documents invalidates them.
	AnswerCacheTTL time.Duration
	// PurgeAfter is how long a deleted document waits, restorable, before the purge job removes it for good
	// (RAGD_PURGE_AFTER, default 168h; 0 purges at the job's next run).
	PurgeAfter time.Duration
	// EncryptionKey seals documents' contents at rest (RAGD_ENCRYPTION_KEY or _FILE: 32 bytes as 64 hex
	// digits or base64); EncryptionOldKeys are earlier keys that still open data until it is re-sealed
	// (RAGD_ENCRYPTION_OLD_KEYS or _FILE, comma or newline separated). Empty: stored in the clear.
	EncryptionKey     string
	EncryptionOldKeys []string
	// AuditRetention is how long audit events are kept (RAGD_AUDIT_RETENTION, default 8760h = 365 days;
	// 0 keeps them forever).
	AuditRetention time.Duration
	// MaxPerDocument is how many passages of one document may precede other documents' in a result
	// (RAGD_MAX_PER_DOCUMENT); 0 means the retriever's default (2; a passage over it waits only behind
	// passages scoring at least 0.7 of its score), a negative value means no cap.
	MaxPerDocument int
	// Re-ranking (internal/rerank). RerankPreset names the blend of similarity, recency, importance and
	// permission (RAGD_RERANK_PRESET: none, the default, or seed003). Reranker is the cross-encoder
	// (RAGD_RERANKER: none, the default, cohere, jina, voyage, tei, infinity or llamacpp), RerankModel its
	// model (RAGD_RERANK_MODEL), RerankURL its base URL (RAGD_RERANK_URL; required for the self-hosted ones),
	// RerankAPIKey its key (RAGD_RERANK_API_KEY or _FILE), RerankTopN how many fused candidates it scores
	// (RAGD_RERANK_TOP_N, default 50, at most 1000).
	RerankPreset, Reranker, RerankModel, RerankURL, RerankAPIKey string
	RerankTopN                                                   int
	// QueryExpansion is "llm" to have the generator (when it completes plain prompts: OpenAI-compatible)
	// list other wordings of each question, searched beside it (RAGD_QUERY_EXPANSION: none, the default, or
	// llm).
	QueryExpansion string

	// APIKeys protect /api/* when non-empty (RAGD_API_KEYS comma list, or RAGD_API_KEYS_FILE one per line;
	// lines starting with # and text after " #" are comments). Either set but holding no key is an error,
	// as is setting both: a typo must not start a server without authentication.
	APIKeys []string
	// AdminKey (RAGD_ADMIN_KEY or RAGD_ADMIN_KEY_FILE) is stored as an admin key of the user "admin" on a
	// start that finds no stored key (docs/security.md).
	AdminKey string
	// MetricsToken is the bearer token GET /metrics needs (RAGD_METRICS_TOKEN or RAGD_METRICS_TOKEN_FILE);
	// empty leaves /metrics open. It is separate from the API keys: a scraper needs no access to documents.
	MetricsToken string
	// AllowedHosts are the host names (Host header, port ignored) the server answers; others get 403
	// (RAGD_ALLOWED_HOSTS comma list, * for any). Unset, serve derives them from the listen address
	// (server.DefaultAllowedHosts: localhost names on loopback).
	AllowedHosts []string
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout bound a connection's request headers, its whole request
	// (body included) and its idle time between requests (RAGD_READ_HEADER_TIMEOUT 10s,
	// RAGD_READ_TIMEOUT 2m, RAGD_IDLE_TIMEOUT 2m).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MaxConnections bounds the connections open at once; one more gets 429 and is closed
	// (RAGD_MAX_CONNECTIONS, default 4096; 0 turns the limit off).
	MaxConnections int
	// UploadBudgetBytes bounds the upload bytes held in memory by all requests at once; further uploads get
	// 429 with Retry-After (RAGD_UPLOAD_BUDGET_BYTES, default 256 MiB).
	UploadBudgetBytes int64
	// Metadata bounds a document's metadata (RAGD_MAX_METADATA_DEPTH 8, RAGD_MAX_METADATA_KEYS 256,
	// RAGD_MAX_METADATA_BYTES 32768).
	Metadata rag.MetadataLimits

	// Budgets of one document's processing (0: the package default; docs/security.md lists them):
	// RAGD_MAX_MEMBER_BYTES, RAGD_MAX_INFLATED_BYTES, RAGD_MAX_DEPTH, RAGD_MAX_XML_ELEMENTS, RAGD_MAX_PAGES,
	// RAGD_MAX_CHARS, RAGD_EXTRACT_TIMEOUT, RAGD_PDF_MEMORY_LIMIT (bytes of PDFium memory) and RAGD_MAX_CHUNKS.
	MaxMemberBytes, MaxInflatedBytes             int64
	MaxDepth, MaxXMLElements, MaxPages, MaxChars int
	ExtractTimeout                               time.Duration
	PDFMemoryLimit                               int64
	// OCR of PDF pages without a text layer (docs/retrieval.md "OCR"): RAGD_OCR (auto, off or force; default
	// auto), RAGD_OCR_LANGS (Tesseract languages, default kor+eng), RAGD_OCR_PAGE_TIMEOUT (default 3m) and
	// RAGD_OCR_PAGE_MEMORY (bytes of address space of one Tesseract process, default 1 GiB).
	OCR            string
	OCRLangs       string
	OCRPageTimeout time.Duration
	OCRPageMemory  int64
	MaxChunks      int
	// VectorIndexMin is the vector count of an embedding space from which the embedded store searches it
	// through its approximate index (RAGD_VECTOR_INDEX_MIN, default 0: the store's, 20,000; -1: always
	// exact). VectorMemory is the most memory in bytes one space's index may take, else the space is searched
	// exactly (RAGD_VECTOR_MEMORY, default 0: no limit). VectorHeap is the most memory in bytes the float32
	// vectors of one space with an index are held in beside its vector file, else they are read from the file
	// (RAGD_VECTOR_HEAP, default 0: the store's, 1 GiB; -1: always from the file). See docs/performance.md.
	VectorIndexMin int
	VectorMemory   int64
	VectorHeap     int64
	// KeywordIndexMin is the chunk count from which either store answers keyword queries from an in-memory
	// copy of its keyword index's postings (RAGD_KEYWORD_INDEX_MIN, default 0: the store's, 10,000; -1:
	// always the store's own query, FTS5's bm25() or PostgreSQL's MaxScore statement). See docs/performance.md.
	KeywordIndexMin int
	// VectorColumns is the most memory in bytes of the column-major copy of one space's vectors the
	// embedded store keeps for sparse query vectors, such as the hash embedder's (RAGD_VECTOR_COLUMNS,
	// default 0: the store's, 256 MiB; -1: none). See docs/performance.md.
	VectorColumns int64
	// HitCache is the memory in bytes of the passages the embedded store keeps between searches, valid
	// until the database changes under them (RAGD_HIT_CACHE, default 0: the store's, 32 MiB; -1: none). See
	// docs/performance.md.
	HitCache int
	// SearchSlots is how many searches and chats the server runs at once, the others waiting in line
	// (internal/slots; RAGD_SEARCH_SLOTS, default 0: no limit). See docs/performance.md.
	SearchSlots int
	// CORSOrigins is the CORS allow-list (RAGD_CORS_ORIGINS, comma list).
	CORSOrigins []string
	// RateLimitChat/RateLimitSearch are requests per minute per key or client IP
	// (RAGD_RATE_LIMIT_CHAT default 30, RAGD_RATE_LIMIT_SEARCH default 120).
	RateLimitChat   int
	RateLimitSearch int

	// LogLevel is debug|info|warn|error (RAGD_LOG_LEVEL). Unset (""), it is info, or warn for the commands
	// that print their own results (ingest, search, ask, spaces).
	LogLevel string

	// FetchAllowPrivate lets ragd fetch from loopback, private and link-local addresses (RAGD_FETCH_ALLOW_PRIVATE,
	// default false): URL ingest and remote sources then reach the operator's own network. Off, such
	// addresses are refused after DNS resolution and on every redirect (SSRF protection, internal/netguard).
	FetchAllowPrivate bool

	// Worker says whether `ragd serve` runs background jobs itself (RAGD_WORKER, default true; serve
	// --no-worker sets it false), or only queues them for `ragd worker` processes.
	Worker bool
	// BenchAPIKey is the API key `ragd bench http` sends (RAGD_API_KEY; its --api-key flag overrides it).
	BenchAPIKey string

	// QA configures the Q&A board's scheduled answer job (docs/qa.md).
	QA QA

	// Webhooks configures the delivery of collections' webhooks (docs/integrations.md "Webhooks").
	Webhooks Webhooks
}

// Webhooks configures webhook deliveries.
type Webhooks struct {
	// AllowPrivate lets webhooks target loopback and private addresses (RAGD_WEBHOOK_ALLOW_PRIVATE, default
	// false): a receiver on the operator's own network, or a test's on 127.0.0.1. Link-local and cloud
	// metadata addresses stay refused even then.
	AllowPrivate bool
	// MaxAttempts is how many times an event is tried on a webhook (RAGD_WEBHOOK_MAX_ATTEMPTS, default 10,
	// 1–25).
	MaxAttempts int
	// RetryBase is the first wait before a retry, doubled after each failure up to an hour
	// (RAGD_WEBHOOK_RETRY_BASE, default 30s, 100ms–1h).
	RetryBase time.Duration
	// Timeout bounds one attempt, from the connection to the end of the response (RAGD_WEBHOOK_TIMEOUT,
	// default 10s, 1s–60s).
	Timeout time.Duration
}

// QA configures the scheduled answer job of the Q&A boards.
type QA struct {
	// Interval is how often the job runs (RAGD_QA_INTERVAL, default 10m, at least 1s).
	Interval time.Duration
	// Batch is how many open questions one pass takes, oldest first (RAGD_QA_BATCH, default 10, 1–1000).
	Batch int
	// Delay is the pause between two model calls of a pass (RAGD_QA_DELAY, default 0).
	Delay time.Duration
	// MaxAttempts is how many passes may fail on a question before it is marked failed
	// (RAGD_QA_MAX_ATTEMPTS, default 5, 1–100).
	MaxAttempts int
}

// DefaultPGReaderRole is the role PostgreSQL's row-secured reads run as unless RAGD_PG_READER_ROLE names
// another.
const DefaultPGReaderRole = "ragd_reader"

// MaxIngestWorkers is the most documents processed at once (RAGD_INGEST_WORKERS, and the CLI flags that set it).
const MaxIngestWorkers = 64

// Default returns the zero-configuration defaults: embedded store, offline models.
func Default() Config {
	return Config{
		DataDir:         "./ragd-data",
		Addr:            "127.0.0.1:8080",
		Embedder:        "hash",
		Generator:       "extractive",
		MaxUploadBytes:  rag.DefaultMaxUploadBytes,
		ChunkSize:       1000,
		ChunkOverlap:    200,
		IngestWorkers:   2,
		RateLimitChat:   30,
		RateLimitSearch: 120,
		Worker:          true,
		PGRowSecurity:   "auto",
		PGReaderRole:    DefaultPGReaderRole,

		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxConnections:    4096,
		UploadBudgetBytes: 256 << 20,
		Metadata:          rag.MetadataLimits{}.WithDefaults(),
		QA:                QA{Interval: 10 * time.Minute, Batch: 10, MaxAttempts: 5},
		Webhooks:          Webhooks{MaxAttempts: 10, RetryBase: 30 * time.Second, Timeout: 10 * time.Second},
		PurgeAfter:        168 * time.Hour,
		AuditRetention:    8760 * time.Hour,
	}
}

// Load returns Default overridden by the environment read through getenv (os.Getenv in production).
func Load(getenv func(string) string) (Config, error) {
	c := Default()
	e := env{getenv: getenv}
	e.str(&c.DataDir, "RAGD_DATA_DIR")
	e.secret(&c.DatabaseURL, "RAGD_DATABASE_URL")
	e.int(&c.HNSWM, "RAGD_HNSW_M")
	e.int(&c.HNSWEfConstruction, "RAGD_HNSW_EF_CONSTRUCTION")
	e.int(&c.HNSWEfSearch, "RAGD_HNSW_EF_SEARCH")
	e.str(&c.PGRowSecurity, "RAGD_PG_ROW_SECURITY")
	c.PGRowSecurity = strings.ToLower(c.PGRowSecurity)
	if strings.TrimSpace(e.getenv("RAGD_PG_READER_ROLE")) != "" && c.PGRowSecurity == "auto" {
		c.PGRowSecurity = "on" // a role named on purpose is required
	}
	e.str(&c.PGReaderRole, "RAGD_PG_READER_ROLE")
	e.str(&c.Addr, "RAGD_ADDR")
	e.str(&c.Embedder, "RAGD_EMBEDDER")
	e.str(&c.EmbedModel, "RAGD_EMBED_MODEL")
	e.int(&c.EmbedDim, "RAGD_EMBED_DIM")
	e.str(&c.Generator, "RAGD_GENERATOR")
	e.str(&c.GenerateModel, "RAGD_GENERATE_MODEL")
	e.secret(&c.GeminiAPIKey, "GOOGLE_API_KEY")
	e.secret(&c.GeminiAPIKey, "GEMINI_API_KEY")
	e.str(&c.GeminiBaseURL, "RAGD_GEMINI_BASE_URL")
	e.secret(&c.OpenAIAPIKey, "OPENAI_API_KEY")
	e.str(&c.OpenAIBaseURL, "OPENAI_BASE_URL")
	e.secret(&c.AnthropicAPIKey, "ANTHROPIC_API_KEY")
	e.str(&c.AnthropicBaseURL, "ANTHROPIC_BASE_URL")
	e.duration(&c.ModelTimeout, "RAGD_MODEL_TIMEOUT")
	e.int64(&c.MaxUploadBytes, "RAGD_MAX_UPLOAD_BYTES")
	e.int(&c.ChunkSize, "RAGD_CHUNK_SIZE")
	e.int(&c.ChunkOverlap, "RAGD_CHUNK_OVERLAP")
	e.int(&c.IngestWorkers, "RAGD_INGEST_WORKERS")
	vset, kset := e.float(&c.VectorWeight, "RAGD_VECTOR_WEIGHT"), e.float(&c.KeywordWeight, "RAGD_KEYWORD_WEIGHT")
	switch {
	case vset && !kset:
		c.KeywordWeight = max(0, 1-c.VectorWeight)
	case kset && !vset:
		c.VectorWeight = max(0, 1-c.KeywordWeight)
	}
	e.float(&c.MinSimilarity, "RAGD_MIN_SIMILARITY")
	e.int(&c.Feedback, "RAGD_FEEDBACK")
	e.int(&c.KeywordFeedback, "RAGD_KEYWORD_FEEDBACK")
	e.float(&c.DocumentWeight, "RAGD_DOCUMENT_WEIGHT")
	e.float(&c.OpeningWeight, "RAGD_OPENING_WEIGHT")
	e.int(&c.MaxPerDocument, "RAGD_MAX_PER_DOCUMENT")
	e.duration(&c.AnswerCacheTTL, "RAGD_ANSWER_CACHE_TTL")
	e.duration(&c.PurgeAfter, "RAGD_PURGE_AFTER")
	e.duration(&c.AuditRetention, "RAGD_AUDIT_RETENTION")
	e.dataKeys(&c.EncryptionKey, &c.EncryptionOldKeys)
	e.str(&c.RerankPreset, "RAGD_RERANK_PRESET")
	e.str(&c.QueryExpansion, "RAGD_QUERY_EXPANSION")
	e.str(&c.Reranker, "RAGD_RERANKER")
	e.str(&c.RerankModel, "RAGD_RERANK_MODEL")
	e.str(&c.RerankURL, "RAGD_RERANK_URL")
	e.secret(&c.RerankAPIKey, "RAGD_RERANK_API_KEY")
	e.int(&c.RerankTopN, "RAGD_RERANK_TOP_N")
	e.keys(&c.APIKeys, "RAGD_API_KEYS")
	e.secret(&c.AdminKey, "RAGD_ADMIN_KEY")
	e.secret(&c.MetricsToken, "RAGD_METRICS_TOKEN")
	e.list(&c.AllowedHosts, "RAGD_ALLOWED_HOSTS")
	e.duration(&c.ReadHeaderTimeout, "RAGD_READ_HEADER_TIMEOUT")
	e.duration(&c.ReadTimeout, "RAGD_READ_TIMEOUT")
	e.duration(&c.IdleTimeout, "RAGD_IDLE_TIMEOUT")
	e.int(&c.MaxConnections, "RAGD_MAX_CONNECTIONS")
	e.int64(&c.UploadBudgetBytes, "RAGD_UPLOAD_BUDGET_BYTES")
	e.int(&c.Metadata.MaxDepth, "RAGD_MAX_METADATA_DEPTH")
	e.int(&c.Metadata.MaxKeys, "RAGD_MAX_METADATA_KEYS")
	e.int(&c.Metadata.MaxBytes, "RAGD_MAX_METADATA_BYTES")
	e.int64(&c.MaxMemberBytes, "RAGD_MAX_MEMBER_BYTES")
	e.int64(&c.MaxInflatedBytes, "RAGD_MAX_INFLATED_BYTES")
	e.int(&c.MaxDepth, "RAGD_MAX_DEPTH")
	e.int(&c.MaxXMLElements, "RAGD_MAX_XML_ELEMENTS")
	e.int(&c.MaxPages, "RAGD_MAX_PAGES")
	e.int(&c.MaxChars, "RAGD_MAX_CHARS")
	e.duration(&c.ExtractTimeout, "RAGD_EXTRACT_TIMEOUT")
	e.int64(&c.PDFMemoryLimit, "RAGD_PDF_MEMORY_LIMIT")
	e.str(&c.OCR, "RAGD_OCR")
	e.str(&c.OCRLangs, "RAGD_OCR_LANGS")
	e.duration(&c.OCRPageTimeout, "RAGD_OCR_PAGE_TIMEOUT")
	e.int64(&c.OCRPageMemory, "RAGD_OCR_PAGE_MEMORY")
	e.int(&c.MaxChunks, "RAGD_MAX_CHUNKS")
	e.int(&c.VectorIndexMin, "RAGD_VECTOR_INDEX_MIN")
	e.int64(&c.VectorMemory, "RAGD_VECTOR_MEMORY")
	e.int64(&c.VectorHeap, "RAGD_VECTOR_HEAP")
	e.int(&c.HitCache, "RAGD_HIT_CACHE")
	e.int(&c.SearchSlots, "RAGD_SEARCH_SLOTS")
	e.int64(&c.VectorColumns, "RAGD_VECTOR_COLUMNS")
	e.int(&c.KeywordIndexMin, "RAGD_KEYWORD_INDEX_MIN")
	e.list(&c.CORSOrigins, "RAGD_CORS_ORIGINS")
	e.int(&c.RateLimitChat, "RAGD_RATE_LIMIT_CHAT")
	e.int(&c.RateLimitSearch, "RAGD_RATE_LIMIT_SEARCH")
	e.str(&c.LogLevel, "RAGD_LOG_LEVEL")
	e.bool(&c.Worker, "RAGD_WORKER")
	e.bool(&c.FetchAllowPrivate, "RAGD_FETCH_ALLOW_PRIVATE")
	e.secret(&c.BenchAPIKey, "RAGD_API_KEY")
	e.duration(&c.QA.Interval, "RAGD_QA_INTERVAL")
	e.int(&c.QA.Batch, "RAGD_QA_BATCH")
	e.duration(&c.QA.Delay, "RAGD_QA_DELAY")
	e.int(&c.QA.MaxAttempts, "RAGD_QA_MAX_ATTEMPTS")
	e.bool(&c.Webhooks.AllowPrivate, "RAGD_WEBHOOK_ALLOW_PRIVATE")
	e.int(&c.Webhooks.MaxAttempts, "RAGD_WEBHOOK_MAX_ATTEMPTS")
	e.duration(&c.Webhooks.RetryBase, "RAGD_WEBHOOK_RETRY_BASE")
	e.duration(&c.Webhooks.Timeout, "RAGD_WEBHOOK_TIMEOUT")
	if e.err != nil {
		return c, e.err
	}
	return c, c.Validate()
}

// Validate reports the first invalid setting.
// MinAdminKeyLen is the shortest RAGD_ADMIN_KEY accepted: a bootstrap key must not be guessable.
const MinAdminKeyLen = 24

func (c Config) Validate() error {
	switch c.Embedder {
	case "hash", "gemini", "openai":
	default:
		return fmt.Errorf("RAGD_EMBEDDER must be hash, gemini or openai (got %q)", c.Embedder)
	}
	switch c.Generator {
	case "extractive", "gemini", "openai", "anthropic":
	default:
		return fmt.Errorf("RAGD_GENERATOR must be extractive, gemini, openai or anthropic (got %q)", c.Generator)
	}
	switch {
	case c.EmbedDim != 0 && (c.EmbedDim < 8 || c.EmbedDim > 8192):
		return fmt.Errorf("RAGD_EMBED_DIM must be between 8 and 8192 (got %d)", c.EmbedDim)
	case c.AnswerCacheTTL < 0:
		return fmt.Errorf("RAGD_ANSWER_CACHE_TTL must not be negative (got %s)", c.AnswerCacheTTL)
	case c.AdminKey != "" && len(strings.TrimSpace(c.AdminKey)) < MinAdminKeyLen:
		return fmt.Errorf("RAGD_ADMIN_KEY must be at least %d characters (got %d)", MinAdminKeyLen, len(strings.TrimSpace(c.AdminKey)))
	case c.PGRowSecurity != "auto" && c.PGRowSecurity != "on" && c.PGRowSecurity != "off":
		return fmt.Errorf("RAGD_PG_ROW_SECURITY must be auto, on or off (got %q)", c.PGRowSecurity)
	case c.AuditRetention < 0:
		return fmt.Errorf("RAGD_AUDIT_RETENTION must not be negative (got %s)", c.AuditRetention)
	case c.PurgeAfter < 0:
		return fmt.Errorf("RAGD_PURGE_AFTER must not be negative (got %s)", c.PurgeAfter)
	case c.ModelTimeout < 0:
		return fmt.Errorf("RAGD_MODEL_TIMEOUT must not be negative")
	case c.MaxUploadBytes < 1:
		return fmt.Errorf("RAGD_MAX_UPLOAD_BYTES must be positive")
	case c.ChunkSize < 100 || c.ChunkSize > 20000:
		return fmt.Errorf("RAGD_CHUNK_SIZE must be between 100 and 20000 (got %d)", c.ChunkSize)
	case c.ChunkOverlap < 0 || c.ChunkOverlap >= c.ChunkSize/2:
		return fmt.Errorf("RAGD_CHUNK_OVERLAP must be ≥ 0 and below half the chunk size (got %d)", c.ChunkOverlap)
	case c.IngestWorkers < 1 || c.IngestWorkers > MaxIngestWorkers:
		return fmt.Errorf("RAGD_INGEST_WORKERS must be between 1 and %d (got %d)", MaxIngestWorkers, c.IngestWorkers)
	case c.VectorWeight < 0 || c.KeywordWeight < 0:
		return fmt.Errorf("RAGD_VECTOR_WEIGHT and RAGD_KEYWORD_WEIGHT must be ≥ 0")
	case c.HNSWM != 0 && (c.HNSWM < 2 || c.HNSWM > 100):
		return fmt.Errorf("RAGD_HNSW_M must be between 2 and 100 (got %d)", c.HNSWM)
	case c.HNSWEfConstruction != 0 && (c.HNSWEfConstruction > 1000 || c.HNSWEfConstruction < 2*cmp.Or(c.HNSWM, 16)):
		return fmt.Errorf("RAGD_HNSW_EF_CONSTRUCTION must be at least twice RAGD_HNSW_M (default 16) and at most 1000 (got %d)", c.HNSWEfConstruction)
	case c.HNSWEfSearch != 0 && (c.HNSWEfSearch < 1 || c.HNSWEfSearch > 1000):
		return fmt.Errorf("RAGD_HNSW_EF_SEARCH must be between 1 and 1000 (got %d)", c.HNSWEfSearch)
	case c.RateLimitChat < 0 || c.RateLimitSearch < 0:
		return fmt.Errorf("rate limits must be ≥ 0 (0 disables)")
	case c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.IdleTimeout <= 0:
		return fmt.Errorf("RAGD_READ_HEADER_TIMEOUT, RAGD_READ_TIMEOUT and RAGD_IDLE_TIMEOUT must be positive")
	case c.MaxConnections < 0:
		return fmt.Errorf("RAGD_MAX_CONNECTIONS must not be negative (0 turns the limit off)")
	case c.UploadBudgetBytes < 1:
		return fmt.Errorf("RAGD_UPLOAD_BUDGET_BYTES must be positive")
	case c.Metadata.MaxDepth < 1 || c.Metadata.MaxKeys < 1 || c.Metadata.MaxBytes < 1:
		return fmt.Errorf("RAGD_MAX_METADATA_DEPTH, RAGD_MAX_METADATA_KEYS and RAGD_MAX_METADATA_BYTES must be positive")
	case c.MaxMemberBytes < 0 || c.MaxInflatedBytes < 0 || c.MaxDepth < 0 || c.MaxXMLElements < 0 || c.MaxPages < 0 ||
		c.MaxChars < 0 || c.ExtractTimeout < 0 || c.MaxChunks < 0:
		return fmt.Errorf("document budgets (RAGD_MAX_MEMBER_BYTES … RAGD_MAX_CHUNKS) must not be negative (0: the default)")
	case c.PDFMemoryLimit != 0 && (c.PDFMemoryLimit < 16<<20 || c.PDFMemoryLimit > 4<<30):
		return fmt.Errorf("RAGD_PDF_MEMORY_LIMIT must be between 16 MiB and 4 GiB in bytes (got %d)", c.PDFMemoryLimit)
	case c.OCR != "" && c.OCR != "auto" && c.OCR != "off" && c.OCR != "force":
		return fmt.Errorf("RAGD_OCR must be auto, off or force (got %q)", c.OCR)
	case c.OCRPageTimeout < 0 || c.OCRPageMemory < 0:
		return fmt.Errorf("RAGD_OCR_PAGE_TIMEOUT and RAGD_OCR_PAGE_MEMORY must not be negative (0: the default)")
	case c.OCRPageMemory != 0 && c.OCRPageMemory < 64<<20:
		return fmt.Errorf("RAGD_OCR_PAGE_MEMORY must be at least 64 MiB in bytes (got %d)", c.OCRPageMemory)
	case c.VectorIndexMin < -1:
		return fmt.Errorf("RAGD_VECTOR_INDEX_MIN must be -1 (always exact), 0 (the default) or a vector count (got %d)", c.VectorIndexMin)
	case c.KeywordIndexMin < -1:
		return fmt.Errorf("RAGD_KEYWORD_INDEX_MIN must be -1 (always the store's query), 0 (the default) or a chunk count (got %d)", c.KeywordIndexMin)
	case c.VectorMemory < 0:
		return fmt.Errorf("RAGD_VECTOR_MEMORY must not be negative (0: no limit; got %d)", c.VectorMemory)
	case c.VectorColumns < -1:
		return fmt.Errorf("RAGD_VECTOR_COLUMNS must be -1 (none), 0 (the default) or a byte count (got %d)", c.VectorColumns)
	case c.SearchSlots < 0:
		return fmt.Errorf("RAGD_SEARCH_SLOTS must be 0 (no limit) or a count (got %d)", c.SearchSlots)
	case c.HitCache < -1:
		return fmt.Errorf("RAGD_HIT_CACHE must be -1 (none), 0 (the default) or a byte count (got %d)", c.HitCache)
	case c.VectorHeap < -1:
		return fmt.Errorf("RAGD_VECTOR_HEAP must be -1 (vectors read from their file), 0 (the default) or a byte count (got %d)", c.VectorHeap)
	case c.QA.Interval < time.Second:
		return fmt.Errorf("RAGD_QA_INTERVAL must be at least 1s (got %s)", c.QA.Interval)
	case c.QA.Batch < 1 || c.QA.Batch > 1000:
		return fmt.Errorf("RAGD_QA_BATCH must be between 1 and 1000 (got %d)", c.QA.Batch)
	case c.QA.Delay < 0:
		return fmt.Errorf("RAGD_QA_DELAY must not be negative")
	case c.QA.MaxAttempts < 1 || c.QA.MaxAttempts > 100:
		return fmt.Errorf("RAGD_QA_MAX_ATTEMPTS must be between 1 and 100 (got %d)", c.QA.MaxAttempts)
	case c.Webhooks.MaxAttempts < 1 || c.Webhooks.MaxAttempts > 25:
		return fmt.Errorf("RAGD_WEBHOOK_MAX_ATTEMPTS must be between 1 and 25 (got %d)", c.Webhooks.MaxAttempts)
	case c.Webhooks.RetryBase < 100*time.Millisecond || c.Webhooks.RetryBase > time.Hour:
		return fmt.Errorf("RAGD_WEBHOOK_RETRY_BASE must be between 100ms and 1h (got %s)", c.Webhooks.RetryBase)
	case c.Webhooks.Timeout < time.Second || c.Webhooks.Timeout > time.Minute:
		return fmt.Errorf("RAGD_WEBHOOK_TIMEOUT must be between 1s and 60s (got %s)", c.Webhooks.Timeout)
	}
	switch c.QueryExpansion {
	case "", "none", "llm":
	default:
		return fmt.Errorf("RAGD_QUERY_EXPANSION must be none or llm (got %q)", c.QueryExpansion)
	}
	switch c.RerankPreset {
	case "", "none", "seed003":
	default:
		return fmt.Errorf("RAGD_RERANK_PRESET must be none or seed003 (got %q)", c.RerankPreset)
	}
	switch c.Reranker {
	case "", "none":
	case "cohere", "jina", "voyage":
		if c.RerankAPIKey == "" {
			return fmt.Errorf("RAGD_RERANKER=%s needs RAGD_RERANK_API_KEY", c.Reranker)
		}
	case "tei", "infinity", "llamacpp":
		if c.RerankURL == "" {
			return fmt.Errorf("RAGD_RERANKER=%s needs RAGD_RERANK_URL (the server's base URL)", c.Reranker)
		}
	default:
		return fmt.Errorf("RAGD_RERANKER must be none, cohere, jina, voyage, tei, infinity or llamacpp (got %q)", c.Reranker)
	}
	if c.RerankTopN < 0 || c.RerankTopN > 1000 {
		return fmt.Errorf("RAGD_RERANK_TOP_N must be between 1 and 1000 (got %d)", c.RerankTopN)
	}
	switch c.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("RAGD_LOG_LEVEL must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	return nil
}

type env struct {
	getenv func(string) string
	err    error
}

func (e *env) str(dst *string, name string) {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		*dst = v
	}
}

// list reads NAME as a comma-separated list (blank items dropped).
func (e *env) list(dst *[]string, name string) {
	var s string
	e.str(&s, name)
	if l := splitList(s, ","); l != nil {
		*dst = l
	}
}

// bool reads NAME as true (1, true, yes, on) or false (0, false, no, off).
func (e *env) bool(dst *bool, name string) {
	switch v := strings.ToLower(strings.TrimSpace(e.getenv(name))); v {
	case "":
	case "1", "true", "yes", "on":
		*dst = true
	case "0", "false", "no", "off":
		*dst = false
	default:
		e.fail(fmt.Errorf("%s must be true or false (got %q)", name, v))
	}
}

// secret reads NAME, or the file named by NAME_FILE (trailing newline trimmed). Both set is an error:
// which one wins would be a guess.
func (e *env) secret(dst *string, name string) {
	path := strings.TrimSpace(e.getenv(name + "_FILE"))
	if path != "" && strings.TrimSpace(e.getenv(name)) != "" {
		e.fail(fmt.Errorf("both %s and %s_FILE are set; set one", name, name))
		return
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			e.fail(fmt.Errorf("%s_FILE: %w", name, err))
			return
		}
		*dst = strings.TrimRight(string(b), "\r\n")
		return
	}
	e.str(dst, name)
}

// dataKeys reads RAGD_ENCRYPTION_KEY and RAGD_ENCRYPTION_OLD_KEYS (each also _FILE) and checks them: a
// variable that is set must hold a valid key (setting one by mistake to nothing must not store in the
// clear), and old keys need a current one.
func (e *env) dataKeys(key *string, old *[]string) {
	const name, oldName = "RAGD_ENCRYPTION_KEY", "RAGD_ENCRYPTION_OLD_KEYS"
	set := func(n string) bool { return e.getenv(n) != "" || e.getenv(n+"_FILE") != "" }
	e.secret(key, name)
	*key = strings.TrimSpace(*key)
	if set(name) {
		if _, err := sealing.ParseKey(*key); err != nil {
			e.fail(fmt.Errorf("%s: %w", name, err))
			return
		}
	}
	var raw string
	e.secret(&raw, oldName)
	*old = splitList(strings.ReplaceAll(raw, "\n", ","), ",")
	if set(oldName) && len(*old) == 0 {
		e.fail(fmt.Errorf("%s is set but holds no key", oldName))
	}
	for i, k := range *old {
		if _, err := sealing.ParseKey(k); err != nil {
			e.fail(fmt.Errorf("%s: key %d: %w", oldName, i+1, err))
			return
		}
	}
	if len(*old) > 0 && *key == "" {
		e.fail(fmt.Errorf("%s needs %s, the key data is re-sealed with", oldName, name))
	}
}

// keys reads a list of keys from NAME (commas or newlines between them) or from the file NAME_FILE (one
// per line). Blank lines and comments — a line starting with #, or text after " #" — are not keys. A
// variable or file that is set but holds no key is an error: starting without authentication because of
// a typo or an empty file would open the server silently.
func (e *env) keys(dst *[]string, name string) {
	var raw string
	e.secret(&raw, name)
	if raw == "" && e.getenv(name+"_FILE") == "" && strings.TrimSpace(e.getenv(name)) == "" {
		return
	}
	var keys []string
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if i := strings.Index(line, "\t#"); i >= 0 {
			line = line[:i]
		}
		keys = append(keys, splitList(line, ",")...)
	}
	if len(keys) == 0 && e.err == nil {
		if path := strings.TrimSpace(e.getenv(name + "_FILE")); path != "" {
			e.fail(fmt.Errorf("%s_FILE (%s) holds no key (blank lines and # comments are not keys): refusing to start without authentication", name, path))
		} else {
			e.fail(fmt.Errorf("%s is set but holds no key: refusing to start without authentication", name))
		}
		return
	}
	*dst = keys
}

func (e *env) int(dst *int, name string) {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			e.fail(fmt.Errorf("%s: not an integer: %q", name, v))
			return
		}
		*dst = n
	}
}

func (e *env) int64(dst *int64, name string) {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			e.fail(fmt.Errorf("%s: not an integer: %q", name, v))
			return
		}
		*dst = n
	}
}

// float reads a number and reports whether the variable was set.
func (e *env) float(dst *float64, name string) bool {
	v := strings.TrimSpace(e.getenv(name))
	if v == "" {
		return false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		e.fail(fmt.Errorf("%s: not a number: %q", name, v))
		return false
	}
	*dst = f
	return true
}

func (e *env) duration(dst *time.Duration, name string) {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			e.fail(fmt.Errorf("%s: not a duration: %q", name, v))
			return
		}
		*dst = d
	}
}

func (e *env) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func splitList(s, seps string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
