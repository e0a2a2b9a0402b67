// Package rag holds ragd's domain: the types every other package passes around (documents, chunks, hits,
// answers), the interfaces that separate the pipeline from its implementations (Store, Embedder, Generator,
// Extractor) and the application error codes. It imports nothing of ours, so every package may import it.
//
// Data flows one way: server/CLI → answer → retrieve → Store; ingest → extract → chunk → embed → Store.
package rag
