// Command nc is the `nc` of the nicolaka/netshoot stand-in image (docs/adr/0013): the upstream
// MCS conformance suite runs `echo hi | nc -v -w 2 -4 HOST PORT 2>&1` in a pod and expects
// the server's reply. It behaves as OpenBSD netcat (netshoot's nc) does for that command:
//
//   - end of stdin does not shut the connection's write side (OpenBSD nc does only with -N).
//     The suite's server (`socat TCP-LISTEN:42,fork SYSTEM:'echo ...'`) closes 0.5 s after it
//     sees end of input; a client that half-closes (as a socat-based stand-in did) loses the
//     reply whenever the server's forked echo takes longer than that, which it does on a
//     loaded machine;
//   - it exits when the server closes the connection, or after -w seconds without traffic
//     (also the connect timeout);
//   - -v reports the connection on stderr, -4/-6 pick the address family, -u sends UDP.
//
// Usage: nc [-v] [-N] [-u] [-4|-6] [-w SECS] HOST PORT. Exit 1 when the connection fails.
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

type options struct {
	verbose, shutdownOnEOF, udp bool
	family                      string // "", "4" or "6"
	timeout                     time.Duration
	host, port                  string
}

func parse(args []string) (options, error) {
	o := options{}
	for len(args) > 2 {
		switch a := args[0]; a {
		case "-v":
			o.verbose = true
		case "-N":
			o.shutdownOnEOF = true
		case "-u":
			o.udp = true
		case "-4", "-6":
			o.family = a[1:]
		case "-w":
			secs, err := strconv.ParseFloat(args[1], 64)
			if err != nil || secs <= 0 {
				return o, fmt.Errorf("-w needs a positive number of seconds, got %q", args[1])
			}
			o.timeout = time.Duration(secs * float64(time.Second))
			args = args[1:]
		default:
			return o, fmt.Errorf("unsupported option %s", a)
		}
		args = args[1:]
	}
	if len(args) != 2 {
		return o, errors.New("usage: nc [-v] [-N] [-u] [-4|-6] [-w SECS] HOST PORT")
	}
	o.host, o.port = args[0], args[1]
	return o, nil
}

func main() {
	o, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "nc: %v\n", err)
		os.Exit(2)
	}
	network := "tcp"
	if o.udp {
		network = "udp"
	}
	network += o.family
	dialer := net.Dialer{Timeout: o.timeout}
	conn, err := dialer.Dial(network, net.JoinHostPort(o.host, o.port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nc: connect to %s port %s (%s) failed: %v\n", o.host, o.port, network, err)
		os.Exit(1)
	}
	defer conn.Close()
	if o.verbose {
		fmt.Fprintf(os.Stderr, "Connection to %s %s port [%s] succeeded!\n", o.host, o.port, network)
	}

	// stdin → connection; its end closes the write side only with -N.
	go func() {
		_, _ = io.Copy(conn, os.Stdin)
		if tcp, ok := conn.(*net.TCPConn); ok && o.shutdownOnEOF {
			_ = tcp.CloseWrite()
		}
	}()

	// connection → stdout until the peer closes or, with -w, the connection is idle that long.
	buf := make([]byte, 32*1024)
	for {
		if o.timeout > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(o.timeout))
		}
		n, err := conn.Read(buf)
		if n > 0 {
			if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
				os.Exit(1)
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return // idle for -w seconds: closed silently, as OpenBSD nc does
			}
			if !errors.Is(err, io.EOF) && o.verbose {
				fmt.Fprintf(os.Stderr, "nc: %v\n", err)
			}
			return
		}
	}
}
