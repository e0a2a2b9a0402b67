package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/webhooks"
)

// runWebhooks is `ragd webhooks add|list|remove|deliveries|ping`: a collection's webhooks from the command
// line (docs/integrations.md "Webhooks"). add prints the secret once; add and remove are audited as the
// API's are. Deliveries are made by `ragd serve` or `ragd worker`.
func runWebhooks(ctx context.Context, env *Env, args []string) error {
	subs := []string{"add", "list", "remove", "deliveries", "ping"}
	sub, args := subcommandOf(args)
	fset := newFlagSet("webhooks")
	c := common{quiet: true}
	c.register(fset, env)
	collection := fset.String("collection", "", "`NAME` of the collection (add, list: required)")
	var events multi
	fset.Var(&events, "event", "`EVENT` to receive: "+strings.Join(rag.WebhookEvents, ", ")+" (add; repeatable; default all)")
	description := fset.String("description", "", "`TEXT` saying what the webhook is for (add)")
	limit := fset.Int("limit", 20, fmt.Sprintf("at most this many attempts, newest first (deliveries; 1 to %d)", webhooks.MaxDeliveriesListed))
	asJSON := fset.Bool("json", false, "print JSON")
	pos, err := parse(fset, args, env.Stdout)
	if err != nil {
		return err
	}
	switch sub {
	case "":
		return usageErr("a subcommand is required: add, list, remove, deliveries or ping")
	case "add":
		if *collection == "" || len(pos) != 1 {
			return usageErr("ragd webhooks add --collection NAME [--event E]… [--description TEXT] URL")
		}
	case "list":
		if *collection == "" || len(pos) != 0 {
			return usageErr("ragd webhooks list --collection NAME [--json]")
		}
	case "remove", "deliveries", "ping":
		if len(pos) != 1 {
			return usageErr("ragd webhooks %s takes one webhook ID", sub)
		}
	default:
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	}
	if sub == "deliveries" && (*limit < 1 || *limit > webhooks.MaxDeliveriesListed) {
		return usageErr("--limit must be between 1 and %d (got %d)", webhooks.MaxDeliveriesListed, *limit)
	}
	a, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	w, svc := env.Stdout, a.Webhooks
	switch sub {
	case "add":
		added, err := svc.Add(ctx, webhooks.AddRequest{Collection: *collection, URL: pos[0], Events: events, Description: *description,
			Owner: rag.LocalPrincipal.ID})
		e := audit.Event{Action: audit.WebhookAdded, Detail: "ragd webhooks add --collection " + *collection}
		if err == nil {
			e.Target = added.ID
		}
		recordCommand(ctx, env, a, e, err)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, added)
		}
		fmt.Fprintln(w, added.Secret)
		fmt.Fprintf(env.Stderr, "webhook %s of %s for %s (%s) added; its secret is shown only now\n", added.ID, *collection, added.URL,
			strings.Join(added.Events, ", "))
	case "list":
		list, err := svc.List(ctx, *collection)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, map[string]any{"webhooks": list})
		}
		for _, h := range list {
			fmt.Fprintf(w, "%s  %s  %s  %s\n", h.ID, h.URL, strings.Join(h.Events, ","), h.Description)
		}
		fmt.Fprintf(w, "%d webhook(s)\n", len(list))
	case "remove":
		h, err := webhookOf(ctx, a, pos[0])
		if err == nil {
			err = svc.Remove(ctx, h.CollectionID, h.ID)
		}
		recordCommand(ctx, env, a, audit.Event{Action: audit.WebhookRemoved, Target: pos[0], Detail: "ragd webhooks remove"}, err)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "webhook %s removed\n", h.ID)
	case "deliveries":
		h, err := webhookOf(ctx, a, pos[0])
		if err != nil {
			return err
		}
		list, err := svc.Deliveries(ctx, h.CollectionID, h.ID, *limit)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, map[string]any{"deliveries": list})
		}
		for _, d := range list {
			printDelivery(env, d)
		}
		fmt.Fprintf(w, "%d attempt(s)\n", len(list))
	case "ping":
		h, err := webhookOf(ctx, a, pos[0])
		if err != nil {
			return err
		}
		d, err := svc.Ping(ctx, h.CollectionID, h.ID)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, d)
		}
		printDelivery(env, d)
		if d.Outcome != rag.DeliveryDelivered {
			return fmt.Errorf("the receiver did not accept the ping")
		}
	}
	return nil
}

func webhookOf(ctx context.Context, a *app.App, id string) (*rag.Webhook, error) {
	st, ok := a.Store.(rag.WebhookStore)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no webhooks", a.Store)
	}
	return st.GetWebhook(ctx, id)
}

func printDelivery(env *Env, d *rag.WebhookDelivery) {
	fmt.Fprintf(env.Stdout, "%s  %-17s %s  attempt %d  %-9s HTTP %d  %d ms  %s\n", d.CreatedAt.Format(time.RFC3339), d.Event, d.EventID,
		d.Attempt, d.Outcome, d.StatusCode, d.DurationMS, d.Error)
}
