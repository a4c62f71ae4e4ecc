# writepath — build, generate, test.
#
#   make test    install what the tests need (Debian packages, pinned tools), then
#                vet, lint, run every test with -race, the netns multi-host script
#                and a bounded fuzz pass. .ci/run calls exactly this.
#   make proto   regenerate the Go code beside the .proto files.
#   make bpf     recompile the eBPF programs (telemetry/blocktrace) with bpf2go.
#   make build   build ./writepath.
#   make screenshots  regenerate docs/screenshots/report-*.png: each kind of HTML
#                report rendered in headless Chromium (TestReportRendersInChromium).

SHELL := /bin/bash
export GOFLAGS := -buildvcs=false
TOOLS := $(CURDIR)/.tools/bin
export PATH := $(TOOLS):$(PATH)

BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
# bpf2go is cilium/ebpf's: keep it at the library's version in go.mod.
BPF2GO_VERSION := v0.22.0

# Debian packages the tests drive as real peers, as command:package: the
# server, sysbench 1.0.20, fio 3.33, sysstat's iostat, fuse3 for the
# power-loss layer, iproute2 for netns, chromium to check that HTML reports
# render offline, bpftrace as the peer of block tracing; clang, llvm-strip and
# libbpf's headers compile the eBPF programs (make bpf, and the freshness
# test). An entry starting with / is a file, not a command.
DEPS := mariadbd:mariadb-server sysbench:sysbench fio:fio iostat:sysstat \
	fusermount3:fuse3 ip:iproute2 chromium:chromium bpftrace:bpftrace \
	clang:clang llvm-strip:llvm /usr/include/bpf/bpf_helpers.h:libbpf-dev
FUZZTIME ?= 10s
# Minimizing a new interesting input counts no executions and could outlast
# FUZZTIME (the default allows 60 s); the coordinator then failed the target
# with "context deadline exceeded" and no crasher. A crasher is still
# minimized, for this long.
FUZZMINTIME ?= 2s

.PHONY: all build test deps services tools proto bpf lint vet unit netns fuzz bench clean screenshots

all: build

build:
	go build -o writepath ./cmd/writepath

deps:
	@missing=""; for d in $(DEPS); do c=$${d%%:*}; \
	  if [ "$${c#/}" != "$$c" ]; then [ -e "$$c" ] || missing="$$missing $${d##*:}"; \
	  else command -v $$c >/dev/null || missing="$$missing $${d##*:}"; fi; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# The machine's own MariaDB on 127.0.0.1:3306 (root, no password) is used by
# a few tests beside the managed instances they start; make sure it answers.
services: deps
	@if ! mariadb-admin --protocol=tcp -h127.0.0.1 -P3306 -uroot ping >/dev/null 2>&1; then \
	  echo "starting MariaDB on 127.0.0.1:3306"; \
	  (setsid /usr/sbin/mariadbd >/dev/null 2>&1 &); \
	  for i in $$(seq 1 60); do mariadb-admin --protocol=tcp -h127.0.0.1 -P3306 -uroot ping >/dev/null 2>&1 && break; sleep 1; done; \
	fi

tools: $(TOOLS)/buf $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc $(TOOLS)/bpf2go

$(TOOLS)/buf:
	GOBIN=$(TOOLS) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

$(TOOLS)/bpf2go:
	GOBIN=$(TOOLS) go install github.com/cilium/ebpf/cmd/bpf2go@$(BPF2GO_VERSION)

proto: tools
	buf lint
	buf generate

bpf: deps $(TOOLS)/bpf2go
	cd telemetry/blocktrace && go generate ./

lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	buf lint

vet:
	go vet ./...

# WRITEPATH_TEST_ALL=1: a test whose server, peer tool, FUSE or browser is
# missing fails here instead of skipping (internal/testenv).
unit:
	WRITEPATH_TEST_ALL=1 go test -race -timeout 15m ./...

netns:
	@for s in deploy/netns/test.sh deploy/netns/faults.sh; do \
	  if [ -x $$s ]; then $$s || exit 1; fi; \
	done

fuzz:
	@.ci/fuzz.sh $(FUZZTIME) $(FUZZMINTIME)

test: deps services tools lint vet unit netns fuzz

bench:
	@ls bench/*.sh

screenshots:
	mkdir -p docs/screenshots
	WRITEPATH_SCREENSHOTS=$(CURDIR)/docs/screenshots go test ./report -run '^TestReportRendersInChromium$$' -count=1

clean:
	rm -rf writepath .tools
