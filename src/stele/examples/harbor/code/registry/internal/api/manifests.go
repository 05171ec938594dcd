package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/opencontainers/go-digest"
)

// GetManifest returns the bytes exactly as pushed; Accept never converts (that would change the digest).
func (h *Handler) GetManifest(w http.ResponseWriter, r *http.Request) {
	var mediaType string
	var body []byte
	err := h.pool.QueryRow(r.Context(), `
		SELECT m.media_type, m.body FROM manifests m
		  JOIN repositories repo ON repo.id = m.repository_id
		  LEFT JOIN tags t ON t.manifest_id = m.id
		 WHERE repo.name = $1 AND (m.digest = $2 OR t.name = $2) LIMIT 1`,
		chi.URLParam(r, "name"), chi.URLParam(r, "reference")).Scan(&mediaType, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		writeError(w, http.StatusNotFound, "MANIFEST_UNKNOWN", "manifest unknown")
		return
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", digest.FromBytes(body).String())
	w.Write(body)
}

// PutManifest stores a manifest, counts its blob references and points the tag at it (409 if protected).
func (h *Handler) PutManifest(w http.ResponseWriter, r *http.Request) {
	name, ref := chi.URLParam(r, "name"), chi.URLParam(r, "reference")
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil || !json.Valid(body) {
		writeError(w, http.StatusBadRequest, "MANIFEST_INVALID", "manifest invalid")
		return
	}
	d := digest.FromBytes(body)
	if protectedTag.MatchString(ref) && h.tagPointsElsewhere(r, name, ref, d) {
		writeError(w, http.StatusConflict, "DENIED", "tag "+ref+" is immutable")
		return
	}
	// Two steps, two transactions: the counts commit before the manifest row does.
	if err := h.refs.Increment(r.Context(), referencedDigests(body)); err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	_, err = h.pool.Exec(r.Context(), `SELECT harbor_put_manifest($1, $2, $3, $4, $5)`,
		name, ref, d.String(), r.Header.Get("Content-Type"), body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	w.Header().Set("Docker-Content-Digest", d.String())
	w.Header().Set("Location", "/v2/"+name+"/manifests/"+d.String())
	w.WriteHeader(http.StatusCreated)
}

// referencedDigests lists the config and layer blobs of an image manifest (an index has none).
func referencedDigests(body []byte) []string {
	var m struct {
		Config struct{ Digest string }   `json:"config"`
		Layers []struct{ Digest string } `json:"layers"`
	}
	json.Unmarshal(body, &m)
	out := []string{}
	if m.Config.Digest != "" {
		out = append(out, m.Config.Digest)
	}
	for _, l := range m.Layers {
		out = append(out, l.Digest)
	}
	return out
}
