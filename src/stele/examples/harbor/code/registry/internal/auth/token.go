// Package auth issues and checks the registry's bearer tokens (the Docker token auth flow).
package auth

import (
	"crypto/rsa"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TokenTTL is how long a bearer token is valid. Short on purpose: a token leaked into CI logs is
// useless five minutes later. Clients do not refresh a token in the middle of one blob upload.
const TokenTTL = 5 * time.Minute

// Access is one granted scope, e.g. repository:team/api:pull,push.
type Access struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

type Claims struct {
	jwt.RegisteredClaims
	Access []Access `json:"access"`
}

// IssueToken signs an RS256 token for subject with the granted scopes.
func IssueToken(key *rsa.PrivateKey, kid, subject string, access []Access) (string, error) {
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: "harbor-token", Subject: subject, Audience: jwt.ClaimStrings{"harbor-registry"},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(TokenTTL)),
		},
		Access: access,
	})
	tok.Header["kid"] = kid
	return tok.SignedString(key)
}

type Verifier struct{ key *rsa.PublicKey }

func NewVerifier(path string) (*Verifier, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := jwt.ParseRSAPublicKeyFromPEM(pem)
	return &Verifier{key: key}, err
}

// Middleware rejects requests without a valid token with 401 and the challenge clients expect.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		_, err := jwt.ParseWithClaims(raw, &Claims{}, func(*jwt.Token) (any, error) { return v.key, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience("harbor-registry"))
		if err != nil {
			w.Header().Set("WWW-Authenticate",
				`Bearer realm="https://harbor.example.com/token",service="harbor-registry"`)
			writeUnauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeUnauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
}
