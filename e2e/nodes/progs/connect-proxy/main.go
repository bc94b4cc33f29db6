// Command connect-proxy serves HTTP CONNECT on a Unix socket and dials the requested
// host:port from the network namespace it runs in. The harness runs one inside each real
// node's network namespace and points the kube-apiserver's egress selector ("cluster") at
// its socket, so exec, logs and port-forward reach kubelets that the host's network cannot
// (the host's own network is never changed).
package main

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: connect-proxy SOCKET")
	}
	_ = os.Remove(os.Args[1])
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	if err := os.Chmod(os.Args[1], 0o600); err != nil {
		log.Fatal(err)
	}
	log.Printf("connect-proxy: serving CONNECT on %s", os.Args[1])
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c)
	}
}

func serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	req, err := http.ReadRequest(r)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	up, err := net.DialTimeout("tcp", req.Host, 10*time.Second)
	if err != nil {
		log.Printf("connect-proxy: dial %s: %v", req.Host, err)
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, r); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}
