// Package deploy holds the deployment manifests of the scale-out mode, a
// load balancer in front of several stateless instances sharing PostgreSQL
// and Redis: compose.yaml (with nginx.conf) for one host, k8s/ for
// Kubernetes, and the Dockerfile at the repository root. It has no code;
// its test parses every manifest and checks that they agree with each
// other and with the service (settings that exist, the port it listens
// on, the health endpoints it serves), since no cluster is reachable in CI.
package deploy
