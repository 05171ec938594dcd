package api

import (
	"encoding/json"
	"net/http"
	"regexp"

	"github.com/go-chi/chi/v5"
	"github.com/opencontainers/go-digest"
)

// protectedTag matches release tags: v1, v2.4.3, release-2026-11. Once pushed they never move.
var protectedTag = regexp.MustCompile(`^(v[0-9]|release-)`)

func (h *Handler) tagPointsElsewhere(r *http.Request, name, tag string, d digest.Digest) bool {
	var current string
	err := h.pool.QueryRow(r.Context(), `SELECT m.digest FROM tags t JOIN manifests m ON m.id = t.manifest_id
		JOIN repositories repo ON repo.id = t.repository_id WHERE repo.name = $1 AND t.name = $2`,
		name, tag).Scan(&current)
	return err == nil && current != d.String()
}

// ListTags answers GET /v2/<name>/tags/list, ordered by name as the spec requires.
func (h *Handler) ListTags(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	rows, err := h.pool.Query(r.Context(), `SELECT t.name FROM tags t JOIN repositories repo
		ON repo.id = t.repository_id WHERE repo.name = $1 ORDER BY t.name`, name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	defer rows.Close()
	tags := []string{}
	for rows.Next() {
		var t string
		if rows.Scan(&t) == nil {
			tags = append(tags, t)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"name": name, "tags": tags})
}

// DeleteTag removes a tag (never a protected one). Its blobs are left to the garbage collector,
// which reclaims them once no manifest references them and the grace period has passed.
func (h *Handler) DeleteTag(w http.ResponseWriter, r *http.Request) {
	name, ref := chi.URLParam(r, "name"), chi.URLParam(r, "reference")
	if protectedTag.MatchString(ref) {
		writeError(w, http.StatusConflict, "DENIED", "tag "+ref+" is immutable")
		return
	}
	_, err := h.pool.Exec(r.Context(), `DELETE FROM tags t USING repositories repo
		WHERE repo.id = t.repository_id AND repo.name = $1 AND t.name = $2`, name, ref)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
