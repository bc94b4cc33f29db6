// Command echo is the backend of the demo and the real-node tests. `GET /` answers one line
// naming the pod, its IP and its cluster; `/hostname` the pod's hostname and `/healthz` ok,
// which is what samples/demo/demo.yaml asks of agnhost's `netexec --http-port=N`, so the
// image also stands in for agnhost (the sample runs unchanged on the harness's real nodes).
// The port is --http-port, else $PORT, else 8080.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
)

func main() {
	port := envOr("PORT", "8080")
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "--http-port="); ok {
			port = v
		}
	}
	host, _ := os.Hostname()
	line := fmt.Sprintf("pod=%s ip=%s cluster=%s\n", envOr("POD_NAME", host), os.Getenv("POD_IP"), os.Getenv("CLUSTER"))
	text := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(body))
		}
	}
	http.HandleFunc("/hostname", text(host))
	http.HandleFunc("/healthz", text("ok"))
	http.HandleFunc("/", text(line))
	log.Printf("echo: listening on :%s, answering %q", port, line)
	log.Fatal(http.ListenAndServe(":"+port, nil))
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
