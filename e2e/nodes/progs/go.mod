// The harness's own small programs for real nodes (standard library only): the pod sandbox
// (pause) image, the demo's echo server, the HTTP CONNECT proxy that lets each
// kube-apiserver reach its kubelets inside their network namespaces, and the nc of the
// netshoot stand-in image. See docs/adr/0013.
module github.com/cloudmap-mcs/cloudmap-mcs/e2e/nodes/progs

go 1.25.0
