// Command harbor-registry serves the OCI distribution API on :5000.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"example.com/harbor/registry/internal/api"
	"example.com/harbor/registry/internal/auth"
	"example.com/harbor/registry/internal/blobstore"
	"example.com/harbor/registry/internal/db"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pool, err := pgxpool.New(ctx, os.Getenv("HARBOR_DATABASE_URL"))
	if err != nil {
		fatal("connect postgres", err)
	}
	defer pool.Close()

	backend, err := blobstore.NewS3Backend(ctx, os.Getenv("HARBOR_S3_BUCKET"))
	if err != nil {
		fatal("configure s3", err)
	}
	verifier, err := auth.NewVerifier(os.Getenv("HARBOR_TOKEN_PUBLIC_KEY"))
	if err != nil {
		fatal("load token key", err)
	}
	store := blobstore.NewStore(backend, os.Getenv("HARBOR_CACHE_DIR"))
	h := api.NewHandler(store, db.NewRefCounter(pool), pool, os.Getenv("HARBOR_SPOOL_DIR"))

	srv := &http.Server{Addr: ":5000", Handler: routes(h, verifier), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	slog.Info("harbor-registry listening", "addr", srv.Addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fatal("serve", err)
	}
}

func routes(h *api.Handler, v *auth.Verifier) http.Handler {
	r := chi.NewRouter()
	r.Get("/v2/", h.Ping)
	r.Group(func(r chi.Router) {
		r.Use(v.Middleware)
		r.Get("/v2/_catalog", h.Catalog)
		r.Get("/v2/{name}/tags/list", h.ListTags)
		r.Head("/v2/{name}/blobs/{digest}", h.HeadBlob)
		r.Get("/v2/{name}/blobs/{digest}", h.GetBlob)
		r.Post("/v2/{name}/blobs/uploads/", h.StartUpload)
		r.Patch("/v2/{name}/blobs/uploads/{uuid}", h.PatchUpload)
		r.Put("/v2/{name}/blobs/uploads/{uuid}", h.CompleteUpload)
		r.Get("/v2/{name}/manifests/{reference}", h.GetManifest)
		r.Put("/v2/{name}/manifests/{reference}", h.PutManifest)
		r.Delete("/v2/{name}/manifests/{reference}", h.DeleteTag)
	})
	return r
}

func fatal(msg string, err error) {
	slog.Error(msg, "err", err)
	os.Exit(1)
}
