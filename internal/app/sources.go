package app

import (
	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/folder"
	"github.com/ragd/ragd/internal/connector/gdrive"
	"github.com/ragd/ragd/internal/connector/git"
	"github.com/ragd/ragd/internal/connector/notion"
	"github.com/ragd/ragd/internal/connector/web"
)

// Kinds are the source kinds this build syncs (docs/connectors.md): each maps its name to its factory.
// Network kinds are given App.HTTP, the SSRF-guarded client, as connector.Config.HTTP.
func Kinds() connector.Kinds {
	return connector.Kinds{
		folder.Kind: folder.New,
		web.Kind:    web.New,
		git.Kind:    git.New,
		notion.Kind: notion.New,
		gdrive.Kind: gdrive.New,
	}
}
