// Package db holds the registry's Postgres access that is shared between handlers.
package db

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RefCounter maintains blob_refs.count: how many manifests reference each blob. The registry keeps
// it as a fast hint for the console's "shared layers" view; the garbage collector does not trust it.
type RefCounter struct {
	pool *pgxpool.Pool
}

func NewRefCounter(pool *pgxpool.Pool) *RefCounter {
	return &RefCounter{pool: pool}
}

// Increment adds one reference to every digest. It commits in its own transaction, before the
// manifest row is written, so a manifest write that fails afterwards leaves the counts too high.
func (c *RefCounter) Increment(ctx context.Context, digests []string) error {
	_, err := c.pool.Exec(ctx, `
		INSERT INTO blob_refs (digest, count) SELECT d, 1 FROM unnest($1::text[]) AS d
		ON CONFLICT (digest) DO UPDATE SET count = blob_refs.count + 1, updated_at = now()`, digests)
	return err
}

// Decrement removes one reference from every digest; a retried tag delete decrements twice.
func (c *RefCounter) Decrement(ctx context.Context, digests []string) error {
	_, err := c.pool.Exec(ctx, `
		UPDATE blob_refs SET count = greatest(count - 1, 0), updated_at = now()
		 WHERE digest = ANY($1::text[])`, digests)
	return err
}

// Count is the current hint for one digest (0 when the blob was never referenced).
func (c *RefCounter) Count(ctx context.Context, digest string) (n int64, err error) {
	err = c.pool.QueryRow(ctx,
		`SELECT coalesce((SELECT count FROM blob_refs WHERE digest = $1), 0)`, digest).Scan(&n)
	return n, err
}
