package generate

import "testing"

// TestBPELoader: only cl100k_base is compiled in, and ranks that do not match the published checksum are
// refused rather than counted with.
func TestBPELoader(t *testing.T) {
	ranks, err := bpeLoader{}.LoadTiktokenBpe("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken")
	if err != nil || len(ranks) != 100_256 || ranks["hello"] == 0 {
		t.Fatalf("%d ranks, err %v", len(ranks), err)
	}
	if _, err := (bpeLoader{}).LoadTiktokenBpe("o200k_base.tiktoken"); err == nil {
		t.Error("o200k_base loaded, but it is not compiled in")
	}
	if _, err := readBPE(cl100kBase, "0000"); err == nil {
		t.Error("ranks with a wrong checksum accepted")
	}
}
