// Package deploy holds the deployment recipes of migrate sync: the
// Kubernetes manifest in kubernetes/, checked offline by this package's test
// against the Kubernetes API types. The compose service is in the
// repository's docker-compose.yml.
package deploy
