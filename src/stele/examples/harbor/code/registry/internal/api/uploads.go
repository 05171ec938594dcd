package api

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/opencontainers/go-digest"
)

// StartUpload opens an upload session; chunks are spooled to local disk until CompleteUpload.
func (h *Handler) StartUpload(w http.ResponseWriter, r *http.Request) {
	id := uuid.NewString()
	f, err := os.Create(filepath.Join(h.spoolDir, id))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	f.Close()
	w.Header().Set("Location", "/v2/"+chi.URLParam(r, "name")+"/blobs/uploads/"+id)
	w.WriteHeader(http.StatusAccepted)
}

func (h *Handler) PatchUpload(w http.ResponseWriter, r *http.Request) {
	f, err := os.OpenFile(filepath.Join(h.spoolDir, chi.URLParam(r, "uuid")), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		writeError(w, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", "blob upload unknown to registry")
		return
	}
	defer f.Close()
	n, _ := io.Copy(f, r.Body)
	w.Header().Set("Range", "0-"+strconv.FormatInt(n-1, 10))
	w.WriteHeader(http.StatusAccepted)
}

// CompleteUpload checks the spooled bytes against ?digest= and moves them to object storage.
func (h *Handler) CompleteUpload(w http.ResponseWriter, r *http.Request) {
	want := digest.Digest(r.URL.Query().Get("digest"))
	path := filepath.Join(h.spoolDir, chi.URLParam(r, "uuid"))
	f, err := os.Open(path)
	if err != nil {
		writeError(w, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", "blob upload unknown to registry")
		return
	}
	defer os.Remove(path)
	defer f.Close()
	if got, err := digest.FromReader(f); err != nil || got != want {
		writeError(w, http.StatusBadRequest, "DIGEST_INVALID", "provided digest did not match uploaded content")
		return
	}
	f.Seek(0, io.SeekStart)
	if err := h.store.Put(r.Context(), want, f); err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	w.Header().Set("Docker-Content-Digest", want.String())
	w.WriteHeader(http.StatusCreated)
}
