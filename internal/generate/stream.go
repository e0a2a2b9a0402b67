package generate

import (
	"strings"

	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// Stream collects the text of a streamed answer and passes each piece to the caller's onDelta. Adapters
// use it inside provider.Caller.Do: Fail marks an error permanent once text has reached the caller, since
// a retry would repeat it, and an error of onDelta is kept apart to be returned as it is.
type Stream struct {
	onDelta func(string) error
	text    strings.Builder
	sent    bool
	// CallbackErr is the error onDelta returned, if any.
	CallbackErr error
}

// NewStream returns a Stream that forwards to onDelta (which may be nil).
func NewStream(onDelta func(string) error) *Stream { return &Stream{onDelta: onDelta} }

// Reset starts a new attempt: text collected by a failed attempt that sent nothing is dropped.
func (s *Stream) Reset() { s.text.Reset() }

// Add appends a piece of the answer and passes it on. Its error stops the generation.
func (s *Stream) Add(piece string) error {
	if piece == "" {
		return nil
	}
	s.text.WriteString(piece)
	if s.onDelta == nil {
		return nil
	}
	s.sent = true
	if err := s.onDelta(piece); err != nil {
		s.CallbackErr = err
		return provider.Permanent(err)
	}
	return nil
}

// Fail returns err as the attempt's error: permanent once some text reached the caller.
func (s *Stream) Fail(err error) error {
	if s.sent {
		return provider.Permanent(err)
	}
	return err
}

// Text is the answer collected so far.
func (s *Stream) Text() string { return s.text.String() }

// Finish ends a generation whose provider.Caller.Do returned err: the error onDelta returned as it is, then
// err, else gen with the answer's text.
func (s *Stream) Finish(gen *rag.Generation, err error) (*rag.Generation, error) {
	if s.CallbackErr != nil {
		return nil, s.CallbackErr
	}
	if err != nil {
		return nil, err
	}
	gen.Text = s.Text()
	return gen, nil
}
