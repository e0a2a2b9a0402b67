package retrieve

import "testing"

func TestDocumentPhrase(t *testing.T) {
	for q, want := range map[string]string{
		"이 법률안은 누가 대표발의했나요?":             "법률안은",
		"검토보고서의 작성 시점은 언제인가요?":           "검토보고서의",
		"환경노동위원회 제414회 제1차 회의는 언제 열렸나요?": "환경노동위원회 제414회 제1차 회의는",
		"이 개정법률안에는 몇 명의 의원이 참여했나요?":      "개정법률안에는", // pointed at: the place is the document
		"회의록에서 회의 시작 시각은?":               "",        // a place inside a document
		"환경 관련 법안을 심사하는 소위는?":            "환경 관련 법안을",
		"When was this report written?":  "report",
		// An English noun phrase headed by a kind of document, after "the": its words, the kind last.
		"Which office publishes the Chapter 13 standing trustee handbook?":   "Chapter 13 standing trustee handbook",
		"What is the date of the Handbook for Chapter 13 Standing Trustees?": "Chapter 13 Standing Trustees Handbook",
		"What is the penalty for late WARN notices?":                         "", // no article: notices in general
		"Who signed the WARN notices?":                                       "",
		"1 2 3 4 5 6":                                                        "",
	} {
		if got := documentPhrase(q); got != want {
			t.Errorf("documentPhrase(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestNamingCoverage(t *testing.T) {
	naming := "bill 2125318 review report\n제414 국회(임시회)\n기후위기 대응을 위한 탄소중립 기본법 일부개정법률안검 토 보 고\n검토보고"
	for phrase, want := range map[string]float64{
		"법률안은":     1, // the kind at the end of a compound title
		"검토보고서의":   1, // the kind without its last syllable, as letter-spaced titles write it
		"회의록에서":    0,
		"report":   1,
		"이 회의는":    0,
		"탄소중립 법안은": 0.5,
	} {
		if got := namingCoverage(phrase, naming); got < want-0.01 || got > want+0.01 {
			t.Errorf("namingCoverage(%q) = %.2f, want %.2f", phrase, got, want)
		}
	}
}

// TestNamingCoverageSpacedTitle: a title page that sets the document's kind letter-spaced and glued to the
// word before it ("…일부개정법률안검 토 보 고") names the kind, read as the index reads it.
func TestNamingCoverageSpacedTitle(t *testing.T) {
	naming := "bill 2125318 review report\n제1차 환경노동위원회\n기후위기 대응을 위한 탄소중립 기본법 일부개정법률안검 토 보 고\n2024. 5."
	for phrase, want := range map[string]float64{"검토보고서의": 1, "검토보고서는": 1, "회의록은": 0} {
		if got := namingCoverage(phrase, naming); got < want-0.01 || got > want+0.01 {
			t.Errorf("namingCoverage(%q) = %.2f, want %.2f", phrase, got, want)
		}
	}
}

func TestNamesKind(t *testing.T) {
	for phrase, want := range map[string]bool{
		"개정법률안에는":               true,
		"검토보고서의":                true,
		"환경노동위원회 제414회 제1차 회의는": true,
		"report":  true,
		"reports": true,
		"메타 광고는":  false, // a topic, though a lecture's title names it
		"impact":  false,
		"방법은":     false,
		"":        false,
	} {
		if got := namesKind(phrase); got != want {
			t.Errorf("namesKind(%q) = %v, want %v", phrase, got, want)
		}
	}
}
