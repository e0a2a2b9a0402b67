package app

import (
	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/folder"
)

// Kinds are the source kinds this build syncs (docs/connectors.md): each maps its name to its factory.
func Kinds() connector.Kinds {
	return connector.Kinds{
		folder.Kind: folder.New,
	}
}
