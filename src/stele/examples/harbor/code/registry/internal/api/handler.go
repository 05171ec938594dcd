// Package api serves the OCI distribution API (v2) over the blob store and the Postgres metadata.
// Every error body follows the spec: {"errors": [{"code": "...", "message": "..."}]}.
package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/opencontainers/go-digest"

	"example.com/harbor/registry/internal/blobstore"
	"example.com/harbor/registry/internal/db"
)

type Handler struct {
	store    *blobstore.Store
	refs     *db.RefCounter
	pool     *pgxpool.Pool
	spoolDir string // upload sessions are spooled here until the final PUT
}

func NewHandler(s *blobstore.Store, refs *db.RefCounter, pool *pgxpool.Pool, spoolDir string) *Handler {
	return &Handler{store: s, refs: refs, pool: pool, spoolDir: spoolDir}
}

// Ping answers GET /v2/, which clients call first to discover the auth realm.
func (h *Handler) Ping(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	w.WriteHeader(http.StatusOK)
}

// Catalog answers GET /v2/_catalog with every repository name, sorted.
func (h *Handler) Catalog(w http.ResponseWriter, r *http.Request) {
	var names []string
	err := h.pool.QueryRow(r.Context(),
		`SELECT coalesce(array_agg(name ORDER BY name), '{}') FROM repositories`).Scan(&names)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"repositories": names})
}

func (h *Handler) HeadBlob(w http.ResponseWriter, r *http.Request) {
	size, err := h.store.Stat(r.Context(), digest.Digest(chi.URLParam(r, "digest")))
	if errors.Is(err, blobstore.ErrBlobUnknown) {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
}

// GetBlob serves a hot blob from local disk, anything else by 307 to a presigned object-storage URL.
func (h *Handler) GetBlob(w http.ResponseWriter, r *http.Request) {
	local, redirect, err := h.store.Get(r.Context(), digest.Digest(chi.URLParam(r, "digest")))
	switch {
	case err != nil:
		writeError(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown to registry")
	case local != nil:
		defer local.Close()
		io.Copy(w, local)
	default:
		http.Redirect(w, r, redirect, http.StatusTemporaryRedirect)
	}
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": message}}})
}
