package blocktrace

// The BPF object is compiled from bpf/trace.bpf.c with clang by the pinned
// bpf2go (Makefile BPF2GO_VERSION) and committed beside it (trace_bpfel.go,
// trace_bpfel.o); `make bpf` regenerates it and internal/archtest fails
// when the committed files are stale.
//go:generate bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -go-package blocktrace -output-stem trace trace bpf/trace.bpf.c
