# otel-webhook build. `make run` and `make test` are the two entry points;
# both start with the dependency step (scripts/deps.sh). tests/README.md
# says what each test target covers.
CC      ?= cc
B       := build
WARN    := -Wall -Wextra -Werror
DEFS    := -D_GNU_SOURCE -DH2O_USE_LIBUV=0
OPT     ?= -O2 -g
# The libraries of each binary: otel-reconcile serves no HTTPS, so no h2o.
PKGS_RECONCILE := json-c yaml-0.1 openssl libcurl
PKGS_WEBHOOK   := $(PKGS_RECONCILE) libh2o-evloop
CFLAGS_ALL = -std=gnu11 $(WARN) $(DEFS) $(OPT) -I. $(shell pkg-config --cflags $(PKGS_WEBHOOK) 2>/dev/null) $(CFLAGS)
libs = $(shell pkg-config --libs $(1) 2>/dev/null) -lpthread -lm
# server/serve_inflight.c defines h2o_socket_read_start in front of h2o's:
# the executable must export it for libh2o's own calls to reach it.
LIBS_WEBHOOK   = $(call libs,$(PKGS_WEBHOOK)) -Wl,--export-dynamic-symbol=h2o_socket_read_start -ldl
# The release webhook allocates through mimalloc (docs/performance.md: a
# third fewer instructions per admission than glibc's malloc). Sanitizer and
# valgrind builds keep glibc's, which their tools replace.
MIMALLOC := -lmimalloc
LIBS_RECONCILE = $(call libs,$(PKGS_RECONCILE))
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
SAN     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# The builds the test suites run write the status record both ways (from
# the diff's log, and by comparing the pods; mutate/record_log.c) and the
# patch both ways (as text while diffing, and as json-c operations; patch.c),
# and abort when the two differ.
CHECKED := -DMUTATE_SELF_CHECK

# Sources by module (docs/architecture.md); each binary links only its modules.
mods = $(sort $(wildcard $(addsuffix /*.c,$(1))))
RECONCILE_LIB := $(filter-out reconcile/main.c,$(call mods,reconcile))
WEBHOOK_SRC   := $(call mods,base kube collector mutate certs server)
RECONCILE_SRC := $(call mods,base kube collector) $(RECONCILE_LIB) reconcile/main.c
# The unit suites link every library module (no main), and server/'s pure codecs (no sockets), with the log and metrics they
# write to.
UNIT_SERVER   := server/review.c server/conversion.c server/cr_admission.c server/log.c server/metrics.c
UNIT_LIB      := $(call mods,base kube collector mutate certs) $(RECONCILE_LIB) $(UNIT_SERVER)
UNIT_SUPPORT  := tests/unit/util.c tests/unit/engine_fixture.c
# The suites are written down once, in tests/suites (not found by a
# wildcard, so a deleted one fails tests/check_suites.sh instead of
# vanishing from the run). Only those present are prerequisites, so that
# the check, not make's "No rule", says which is missing.
SUITES        := tests/suites
UNIT_TESTS    := $(shell awk '$$1 == "unit" {print $$2}' $(SUITES))
UNIT_PRESENT  := $(filter $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c)),$(UNIT_TESTS))
CHECK_SUITES  := sh tests/check_suites.sh $(SUITES)

# Objects of one build flavour: $(call obj,DIR,SOURCES).
obj = $(patsubst %.c,$(1)/%.o,$(2))

# Keep test objects between runs (they are intermediates of pattern rules).
.SECONDARY:

.PHONY: all deps run test unit valgrind roundtrip cli server-test convert-test hardening-test cluster-test reconcile-test \
        parity-test bounds-test cr-admission-test \
        fuzz-replay deploy-test clang-build bench fuzz clean install e2e-tools e2e
all: $(B)/otel-webhook $(B)/otel-reconcile

deps:
	@sh scripts/deps.sh build

# The dependency step as a stamp: every compile has it as an order-only
# prerequisite, so that `make -j2` on a fresh machine cannot start a
# compile before the headers are installed (a phony `deps` beside the
# binaries, as `all` had it, runs in parallel with them). Order-only: a
# newer stamp does not rebuild what is built; `make deps` runs the step
# again.
DEPS_STAMP := $(B)/.deps-done
$(DEPS_STAMP): scripts/deps.sh
	@sh scripts/deps.sh build
	@mkdir -p $(dir $@) && touch $@

# make run: dev certificates under build/, the examples served on 127.0.0.1:8443.
DEV_CERTS := $(B)/dev-certs
run: all
	@test -f $(DEV_CERTS)/tls.crt || $(B)/otel-webhook certs generate --service otel-webhook \
	    --namespace otel-webhook-system --out $(DEV_CERTS) --dev >/dev/null
	@echo "serving examples/ on https://127.0.0.1:8443 (Ctrl-C stops). In another terminal:"
	@echo "  curl --cacert $(DEV_CERTS)/ca.crt -H 'Content-Type: application/json' \\"
	@echo "       --data-binary @examples/review-java.json https://127.0.0.1:8443/mutate-v1-pod"
	@exec $(B)/otel-webhook serve --listen 127.0.0.1:8443 --tls-cert $(DEV_CERTS)/tls.crt \
	    --tls-key $(DEV_CERTS)/tls.key --resources examples/resources --log-format text

# ---------------------------------------------------------------------------
# Build flavours: build/obj (release), build/asan (ASan+UBSan), build/vg
# (valgrind 3.19 reads DWARF 4, gcc 12 writes 5), build/clang/obj (the same
# tree built with clang), build/bench.

$(B)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/asan/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(SAN) $(CHECKED) -MMD -MP -c $< -o $@

# h2o's http2_internal.h includes a khash.h Debian does not ship
# (server/h2o/khash.h says why serve_h2.c needs it).
%/server/serve_h2.o: CFLAGS_ALL += -Iserver/h2o

VG_OPT := -O1 -gdwarf-4
$(B)/vg/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(VG_OPT) $(CHECKED) -MMD -MP -c $< -o $@

$(B)/otel-webhook: $(call obj,$(B)/obj,$(WEBHOOK_SRC))
	$(CC) $(OPT) -o $@ $^ $(MIMALLOC) $(LIBS_WEBHOOK)

$(B)/asan/otel-webhook: $(call obj,$(B)/asan,$(WEBHOOK_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS_WEBHOOK)

$(B)/otel-reconcile: $(call obj,$(B)/obj,$(RECONCILE_SRC))
	$(CC) $(OPT) -o $@ $^ $(LIBS_RECONCILE)

$(B)/asan/otel-reconcile: $(call obj,$(B)/asan,$(RECONCILE_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS_RECONCILE)

$(B)/obj/tests/unit/%: $(B)/obj/tests/unit/%.o $(call obj,$(B)/obj,$(UNIT_SUPPORT) $(UNIT_LIB))
	$(CC) $(OPT) -o $@ $^ $(CHECK_LIBS) $(LIBS_WEBHOOK)

$(B)/asan/tests/unit/%: $(B)/asan/tests/unit/%.o $(call obj,$(B)/asan,$(UNIT_SUPPORT) $(UNIT_LIB))
	$(CC) $(SAN) -o $@ $^ $(CHECK_LIBS) $(LIBS_WEBHOOK)

$(B)/vg/tests/unit/%: $(B)/vg/tests/unit/%.o $(call obj,$(B)/vg,$(UNIT_SUPPORT) $(UNIT_LIB))
	$(CC) $(VG_OPT) -o $@ $^ $(CHECK_LIBS) $(LIBS_WEBHOOK)

# The whole tree, tests included, must also build warning-free with clang.
clang-build:
	@$(CHECK_SUITES)
	@$(MAKE) --no-print-directory -s CC=clang B=$(B)/clang $(B)/clang/otel-webhook $(B)/clang/otel-reconcile \
	  $(addprefix $(B)/clang/obj/tests/unit/,$(UNIT_TESTS))
	@echo "clang: every binary and test suite builds"

# ---------------------------------------------------------------------------
# make test: every suite of tests/suites, each recording its counts in
# build/results/NAME; the last line sums them, and a suite that recorded
# nothing, or no check, fails it. Dependencies between suites are
# prerequisites, not an order of mention.

RESULTS := $(B)/results
CASES   := $(B)/cases
export ASAN_OPTIONS := detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1

# E2E=0 leaves out the real control plane (tests/e2e/, which needs Go): the
# one suite that may be left out, by name.
E2E ?= 1
export E2E
NO_E2E := $(if $(filter 0,$(E2E)),e2e)
TEST_SUITES := $(filter-out $(NO_E2E),$(shell awk '$$1 == "target" {print $$2}' $(SUITES)))
EXPECTED_RESULTS := $(addprefix unit-,$(UNIT_TESTS)) $(addprefix valgrind-,$(UNIT_TESTS)) \
                    $(filter-out $(NO_E2E),$(shell awk '$$1 == "target" {for (i = 3; i <= NF; i++) print $$i}' $(SUITES)))

test:
	@$(CHECK_SUITES)
	@sh scripts/deps.sh test
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	@$(MAKE) --no-print-directory $(TEST_SUITES)
	@sh tests/summary.sh $(RESULTS) $(EXPECTED_RESULTS)

# The Check suites under ASan+UBSan; the engine cases they run are written
# to build/cases for roundtrip.
unit: $(addprefix $(B)/asan/tests/unit/,$(UNIT_PRESENT)) tests/unit/run_check.sh
	@$(CHECK_SUITES)
	@mkdir -p $(RESULTS) && rm -rf $(CASES) && mkdir -p $(CASES)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; \
	  OTEL_CASES_DIR=$(CASES) sh tests/unit/run_check.sh $(RESULTS)/unit-$$t $(B)/asan/tests/unit/$$t; done

# The same suites under valgrind (memcheck).
valgrind: $(addprefix $(B)/vg/tests/unit/,$(UNIT_PRESENT)) tests/unit/run_check.sh
	@$(CHECK_SUITES)
	@mkdir -p $(RESULTS)
	@set -e; for t in $(UNIT_TESTS); do echo "== valgrind $$t"; \
	  CK_FORK=no sh tests/unit/run_check.sh $(RESULTS)/valgrind-$$t valgrind -q --leak-check=full \
	    --errors-for-leak-kinds=definite --error-exitcode=9 $(B)/vg/tests/unit/$$t > $(B)/vg/$$t.log 2>&1 || \
	    { tail -40 $(B)/vg/$$t.log; exit 1; }; tail -n 1 $(B)/vg/$$t.log; done

# Every recorded engine case replayed by an independent RFC 6902 applier,
# and undone by `otel-webhook uninject`.
roundtrip: unit $(B)/asan/otel-webhook tests/unit/roundtrip.py
	@/usr/bin/python3 tests/unit/roundtrip.py $(CASES) $(RESULTS)/roundtrip $(B)/asan/otel-webhook

# The command lines, and the build's own (make_test.py: the dependency step
# before every compile, read from make -n).
cli: $(B)/asan/otel-webhook tests/blackbox/cli_test.py tests/blackbox/validate_test.py tests/blackbox/make_test.py
	@mkdir -p $(RESULTS)
	@/usr/bin/python3 tests/blackbox/cli_test.py $(B)/asan/otel-webhook $(RESULTS)/cli
	@/usr/bin/python3 tests/blackbox/validate_test.py $(B)/asan/otel-webhook $(RESULTS)/cli-validate
	@/usr/bin/python3 tests/blackbox/make_test.py $(RESULTS)/cli-make

# The status record from outside: uninject, explain, inject's stale
# warning, outdated against the fake API server.
record-test: $(B)/asan/otel-webhook tests/blackbox/record_test.py tests/blackbox/fakeapi.py
	@/usr/bin/python3 tests/blackbox/record_test.py $(B)/asan/otel-webhook $(RESULTS)/record

# The server over real TLS on loopback; the release build too, for what
# only glibc's allocator shows (memory given back).
server-test: $(B)/asan/otel-webhook $(B)/otel-webhook tests/blackbox/server_test.py tests/blackbox/serverlib.py
	@/usr/bin/python3 tests/blackbox/server_test.py $(B)/asan/otel-webhook $(RESULTS)/server $(B)/otel-webhook

# POST /convert, the collector conversion webhook, over real TLS.
convert-test: $(B)/asan/otel-webhook tests/blackbox/convert_test.py tests/blackbox/serverlib.py
	@/usr/bin/python3 tests/blackbox/convert_test.py $(B)/asan/otel-webhook $(RESULTS)/convert

# The server against hostile clients and surroundings: HTTP/2, smuggling,
# uids, FIFO certificates, SIGHUP, the fd limit.
hardening-test: $(B)/asan/otel-webhook tests/blackbox/hardening_test.py tests/blackbox/serverlib.py \
                tests/blackbox/h2frames.py
	@/usr/bin/python3 tests/blackbox/hardening_test.py $(B)/asan/otel-webhook $(RESULTS)/hardening

# serve --kubeconfig / --in-cluster against the fake API server; records
# the requests it served in build/fakeapi-requests.jsonl.
cluster-test: $(B)/asan/otel-webhook tests/blackbox/cluster_test.py tests/blackbox/fakeapi.py
	@/usr/bin/python3 tests/blackbox/cluster_test.py $(B)/asan/otel-webhook $(RESULTS)/cluster

# otel-reconcile: golden renders, and runs against the fake API server
# (requests recorded in build/fakeapi-reconcile-requests.jsonl).
reconcile-test: $(B)/asan/otel-reconcile tests/blackbox/reconcile_test.py tests/blackbox/reconcile_run_test.py
	@/usr/bin/python3 tests/blackbox/reconcile_test.py $(B)/asan/otel-reconcile $(RESULTS)/reconcile

# The sidecar and the workload of one collector: one container (collector/container.c).
parity-test: $(B)/asan/otel-webhook $(B)/asan/otel-reconcile tests/blackbox/parity_test.py
	@/usr/bin/python3 tests/blackbox/parity_test.py $(B)/asan/otel-webhook $(B)/asan/otel-reconcile \
	  $(RESULTS)/parity

# What one admission may cost: pods and collectors past the bounds, and the
# widest body within them (its memory measured on the release build).
bounds-test: $(B)/asan/otel-webhook $(B)/otel-webhook $(B)/asan/otel-reconcile tests/blackbox/bounds_test.py
	@/usr/bin/python3 tests/blackbox/bounds_test.py $(B)/asan/otel-webhook $(B)/otel-webhook \
	  $(B)/asan/otel-reconcile $(RESULTS)/bounds

# The custom resources' admission webhooks over real TLS: exact answers,
# patches, 400s, metrics and logs (the RBAC check is in cluster-test).
cr-admission-test: $(B)/asan/otel-webhook tests/blackbox/cr_admission_test.py tests/blackbox/serverlib.py
	@/usr/bin/python3 tests/blackbox/cr_admission_test.py $(B)/asan/otel-webhook $(RESULTS)/cr-admission

# Every input the fuzzers ever found, and their seed corpora, once more.
# fuzz_cr has found nothing yet, so it has no crashes/cr to replay: a
# folder named here that is missing or empty fails the replay (replay.sh),
# so add its first finding and the folder together.
fuzz-replay: $(B)/fuzz/fuzz_engine $(B)/fuzz/fuzz_review $(B)/fuzz/fuzz_conversion $(B)/fuzz/fuzz_cr $(B)/fuzz/fuzz_jfast \
             tests/fuzz/replay.sh
	@sh tests/fuzz/replay.sh $(RESULTS)/fuzz-replay $(B)/fuzz/fuzz_engine tests/fuzz/crashes/engine tests/fuzz/corpus \
	  -- $(B)/fuzz/fuzz_review tests/fuzz/crashes/review tests/fuzz/review-corpus \
	  -- $(B)/fuzz/fuzz_conversion tests/fuzz/crashes/conversion tests/fuzz/conversion-corpus \
	  -- $(B)/fuzz/fuzz_cr tests/fuzz/cr-corpus \
	  -- $(B)/fuzz/fuzz_jfast tests/fuzz/crashes/jfast tests/fuzz/jfast-corpus tests/fuzz/review-corpus

# deploy/: rendering, schema validation, safety properties, and RBAC coverage
# against the requests cluster-test, reconcile-test and record-test recorded.
deploy-test: $(B)/otel-webhook $(B)/otel-reconcile cluster-test reconcile-test record-test tests/deploy/run.sh
	@sh tests/deploy/run.sh $(RESULTS)/deploy

# A real control plane (tests/e2e/): kube-apiserver, kube-controller-manager,
# kubectl and etcd built from the Go modules tests/e2e/tools/go.mod pins into
# build/k8s/VERSION (rebuilt only when the pins change), started on loopback
# for the run and stopped after it. No kubelet: pods are stored, never run.
E2E_K8S := $(shell awk '$$1 == "k8s.io/kubernetes" && $$2 ~ /^v/ { print $$2; exit }' tests/e2e/tools/go.mod)
e2e-tools:
	@sh tests/e2e/build-tools.sh $(B) >/dev/null

e2e: e2e-tools $(B)/asan/otel-webhook tests/e2e/run.py tests/e2e/cluster.py tests/e2e/deploylib.py tests/e2e/webhook_test.py tests/e2e/cli_test.py
	@mkdir -p $(RESULTS) && rm -f $(RESULTS)/e2e
	@/usr/bin/python3 tests/e2e/run.py $(B)/k8s/$(E2E_K8S) $(RESULTS)/e2e

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------------------
# Benchmarks: compare figures within one run.
BENCH_SRC := $(call mods,base kube collector mutate) server/review.c server/log.c server/metrics.c server/cr_admission.c
$(B)/bench/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/bench/bench_engine: $(B)/bench/tests/bench/bench_engine.o $(call obj,$(B)/obj,$(BENCH_SRC))
	$(CC) $(OPT) -o $@ $^ $(MIMALLOC) $(LIBS_WEBHOOK)

bench: $(B)/bench/bench_engine $(B)/otel-webhook $(B)/otel-reconcile
	@sh scripts/deps.sh bench
	@$(B)/bench/bench_engine tests/bench
	@sh tests/bench/callgrind.sh $(B)/bench/bench_engine
	@/usr/bin/python3 tests/bench/callgrind_bench.py $(B)/otel-webhook
	@/usr/bin/python3 tests/bench/record_bench.py $(B)/bench/bench_engine
	@/usr/bin/python3 tests/bench/server_bench.py $(B)/otel-webhook
	@/usr/bin/python3 tests/blackbox/cluster_test.py --rss $(B)/otel-webhook
	@/usr/bin/python3 tests/bench/reconcile_bench.py $(B)/otel-reconcile

# ---------------------------------------------------------------------------
# Fuzzing with clang's libFuzzer under ASan, UBSan and leak detection:
# fuzz_engine (the engine on arbitrary pods: JSON, YAML and annotation/env
# fields), fuzz_review (the AdmissionReview decoder and everything behind
# it), fuzz_conversion (the ConversionReview decoder and the collector
# conversion), fuzz_cr (the custom resources' admission answers on every
# route) and fuzz_jfast (the one-pass parse against json-c's). `make fuzz` runs each FUZZ_SECONDS on a copy of its seed corpus; a
# crash, leak or broken invariant fails the target and leaves the input in
# build/fuzz/artifacts/ (keep it in tests/fuzz/crashes/TARGET/).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer $(DEFS) -I. $(CHECKED)
FUZZ_LIB     := $(call mods,base kube collector mutate)
FUZZ_HDRS     = $(wildcard base/*.h kube/*.h collector/*.h mutate/*.h server/*.h)
$(B)/fuzz/fuzz_engine: tests/fuzz/fuzz_engine.c $(FUZZ_LIB) $(FUZZ_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DBASE_JSON_TRAP $(shell pkg-config --cflags $(PKGS_RECONCILE)) -o $@ tests/fuzz/fuzz_engine.c \
	  $(FUZZ_LIB) $(LIBS_RECONCILE)

$(B)/fuzz/fuzz_review: tests/fuzz/fuzz_review.c server/review.c server/log.c server/metrics.c $(FUZZ_LIB) $(FUZZ_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags $(PKGS_WEBHOOK)) -o $@ tests/fuzz/fuzz_review.c \
	  server/review.c server/log.c server/metrics.c $(FUZZ_LIB) $(LIBS_WEBHOOK)

$(B)/fuzz/fuzz_conversion: tests/fuzz/fuzz_conversion.c server/conversion.c server/metrics.c $(FUZZ_LIB) $(FUZZ_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags $(PKGS_WEBHOOK)) -o $@ tests/fuzz/fuzz_conversion.c \
	  server/conversion.c server/metrics.c $(FUZZ_LIB) $(LIBS_WEBHOOK)

FUZZ_CR_SRC := server/cr_admission.c server/review.c server/log.c server/metrics.c
$(B)/fuzz/fuzz_cr: tests/fuzz/fuzz_cr.c $(FUZZ_CR_SRC) $(FUZZ_LIB) $(FUZZ_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags $(PKGS_WEBHOOK)) -o $@ tests/fuzz/fuzz_cr.c \
	  $(FUZZ_CR_SRC) $(FUZZ_LIB) $(LIBS_WEBHOOK)

$(B)/fuzz/fuzz_jfast: tests/fuzz/fuzz_jfast.c base/jfast.c base/jhash.c base/jkeys.c base/alloc.c base/jfast.h base/jhash.h base/jkeys.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags json-c) -o $@ tests/fuzz/fuzz_jfast.c base/jfast.c base/jhash.c base/jkeys.c base/alloc.c \
	  $(call libs,json-c)

fuzz: $(B)/fuzz/fuzz_engine $(B)/fuzz/fuzz_review $(B)/fuzz/fuzz_conversion $(B)/fuzz/fuzz_cr $(B)/fuzz/fuzz_jfast
	@set -e; for t in engine:corpus review:review-corpus conversion:conversion-corpus cr:cr-corpus jfast:jfast-corpus; do name=$${t%%:*}; seeds=$${t#*:}; \
	  rm -rf $(B)/fuzz/$$name-corpus && mkdir -p $(B)/fuzz/$$name-corpus $(B)/fuzz/artifacts && \
	  cp tests/fuzz/$$seeds/* $(B)/fuzz/$$name-corpus/ && \
	  echo "== fuzz_$$name for $(FUZZ_SECONDS) s" && \
	  ASAN_OPTIONS=detect_leaks=1 $(B)/fuzz/fuzz_$$name -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(B)/fuzz/artifacts/ $(B)/fuzz/$$name-corpus; done

# make install [DESTDIR=/staging] [PREFIX=/usr/local]: the binaries, nothing
# else. deploy/Dockerfile copies exactly this tree into the image
# (tests/deploy checks the layout).
PREFIX ?= /usr/local
INSTALL_BINS := otel-webhook otel-reconcile
install: $(addprefix $(B)/,$(INSTALL_BINS))
	install -d $(DESTDIR)$(PREFIX)/bin
	@set -e; for b in $(INSTALL_BINS); do \
	  echo "install -m 0755 $(B)/$$b $(DESTDIR)$(PREFIX)/bin/$$b"; \
	  install -m 0755 $(B)/$$b $(DESTDIR)$(PREFIX)/bin/$$b; done
