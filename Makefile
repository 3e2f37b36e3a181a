# otel-webhook build. `make run` and `make test` are the two entry points;
# both start with the dependency step (scripts/deps.sh).
CC      ?= cc
B       := build
PKGS    := json-c yaml-0.1 openssl libh2o-evloop libcurl
WARN    := -Wall -Wextra -Werror
DEFS    := -D_GNU_SOURCE -DH2O_USE_LIBUV=0
OPT     ?= -O2 -g
CFLAGS_ALL = -std=gnu11 $(WARN) $(DEFS) $(OPT) -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
SAN     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC  := $(sort $(wildcard base/*.c kube/*.c collector/*.c mutate/*.c certs/*.c) $(filter-out reconcile/main.c,$(wildcard reconcile/*.c)))
SRV_SRC  := $(sort $(wildcard server/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_SUPPORT := tests/util.c tests/engine_fixture.c
TESTS    := $(patsubst tests/%.c,%,$(TEST_SRC))

# Normal build objects in build/obj, sanitizer build in build/asan.
obj = $(patsubst %.c,$(1)/%.o,$(2))

# Keep test objects between runs (they are intermediates of pattern rules).
.SECONDARY:

.PHONY: all deps run test check-unit roundtrip cli server-test live-test deploy-test reconcile-test parity-test valgrind clang-build bench fuzz clean install
all: deps $(B)/otel-webhook $(if $(wildcard reconcile/main.c),$(B)/otel-reconcile)

deps:
	@sh scripts/deps.sh build

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

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(SAN) -MMD -MP -c $< -o $@

$(B)/otel-webhook: $(call obj,$(B)/obj,$(LIB_SRC) $(SRV_SRC))
	$(CC) $(OPT) -o $@ $^ $(LIBS)

$(B)/asan/otel-webhook: $(call obj,$(B)/asan,$(LIB_SRC) $(SRV_SRC))
	$(CC) $(SAN) -o $@ $^ $(LIBS)

# otel-reconcile: the collector reconcile job (reconcile/).
$(B)/otel-reconcile: $(call obj,$(B)/obj,$(LIB_SRC) reconcile/main.c)
	$(CC) $(OPT) -o $@ $^ $(LIBS)

$(B)/asan/otel-reconcile: $(call obj,$(B)/asan,$(LIB_SRC) reconcile/main.c)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(B)/asan/tests/%: $(B)/asan/tests/%.o $(call obj,$(B)/asan,$(TEST_SUPPORT) $(LIB_SRC))
	$(CC) $(SAN) -o $@ $^ $(CHECK_LIBS) $(LIBS)

$(B)/obj/tests/%: $(B)/obj/tests/%.o $(call obj,$(B)/obj,$(TEST_SUPPORT) $(LIB_SRC))
	$(CC) $(OPT) -o $@ $^ $(CHECK_LIBS) $(LIBS)

# The whole tree, tests included, must also build warning-free with clang.
clang-build:
	@$(MAKE) --no-print-directory -s CC=clang B=$(B)/clang $(B)/clang/otel-webhook $(B)/clang/otel-reconcile \
	  $(addprefix $(B)/clang/obj/tests/,$(TESTS))
	@echo "clang: every binary and test suite builds"

# valgrind (memcheck) over the Check suites, on a build valgrind 3.19 can
# read (gcc 12 writes DWARF 5 by default).
VG_OPT := -O1 -gdwarf-4
$(B)/vg/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(VG_OPT) -MMD -MP -c $< -o $@

$(B)/vg/tests/%: $(B)/vg/tests/%.o $(call obj,$(B)/vg,$(TEST_SUPPORT) $(LIB_SRC))
	$(CC) $(VG_OPT) -o $@ $^ $(CHECK_LIBS) $(LIBS)

VG_TESTS ?= $(TESTS)
valgrind: $(addprefix $(B)/vg/tests/,$(VG_TESTS))
	@set -e; for t in $(VG_TESTS); do echo "== valgrind $$t"; \
	  CK_FORK=no valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
	    $(B)/vg/tests/$$t > $(B)/vg/$$t.log 2>&1 || { tail -40 $(B)/vg/$$t.log; exit 1; }; tail -n 1 $(B)/vg/$$t.log; done

# Unit suites run under ASan+UBSan and record every engine case; the patch
# round trip replays those cases with an independent RFC 6902 applier; the
# CLI tests drive the sanitized binary. The last line sums all counts.
RESULTS := $(B)/test-results.txt
CASES   := $(B)/cases
export ASAN_OPTIONS := detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1

test:
	@sh scripts/deps.sh test
	@rm -f $(RESULTS)
	@$(MAKE) --no-print-directory clang-build check-unit valgrind roundtrip cli server-test live-test reconcile-test parity-test deploy-test
	@sh tests/summary.sh $(RESULTS)

check-unit: $(addprefix $(B)/asan/tests/,$(TESTS))
	@rm -rf $(CASES) && mkdir -p $(CASES)
	@set -e; for t in $(TESTS); do echo "== $$t"; \
	  OTEL_CASES_DIR=$(CASES) sh tests/run_check.sh $(B)/asan/tests/$$t $(RESULTS); done

roundtrip:
	@/usr/bin/python3 tests/roundtrip.py $(CASES) $(RESULTS)

cli: $(B)/asan/otel-webhook
	@/usr/bin/python3 tests/cli_test.py $(B)/asan/otel-webhook $(RESULTS)

# The server over real TLS on loopback (sanitized binary).
server-test: $(B)/asan/otel-webhook
	@/usr/bin/python3 tests/server_test.py $(B)/asan/otel-webhook $(RESULTS)

# The live cluster source against the fake API server (tests/fakeapi.py).
live-test: $(B)/asan/otel-webhook
	@if [ -f tests/live_test.py ]; then /usr/bin/python3 tests/live_test.py $(B)/asan/otel-webhook $(RESULTS); fi

# otel-reconcile from the outside (golden renders, runs against the fake API server).
reconcile-test:
	@if [ -f tests/reconcile_test.py ]; then $(MAKE) --no-print-directory $(B)/asan/otel-reconcile && \
	  /usr/bin/python3 tests/reconcile_test.py $(B)/asan/otel-reconcile $(RESULTS); fi

# The sidecar and the workload of one collector: one container (collector/container.c).
parity-test: $(B)/asan/otel-webhook $(B)/asan/otel-reconcile
	@/usr/bin/python3 tests/parity_test.py $(B)/asan/otel-webhook $(B)/asan/otel-reconcile $(RESULTS)

# deploy/: rendering, schema validation, safety properties, and RBAC coverage
# against the requests live-test and reconcile-test recorded (so it runs last).
deploy-test: $(B)/otel-webhook
	@if [ -f tests/deploy/run.sh ]; then sh tests/deploy/run.sh $(RESULTS); fi

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# Benchmarks: CPU time per operation, compare figures within one run.
BENCH_OPT := -O2 -g -DNDEBUG
$(B)/bench/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/bench/bench_engine: $(B)/bench/tests/bench/bench_engine.o $(call obj,$(B)/obj,$(LIB_SRC) server/review.c server/log.c server/metrics.c)
	$(CC) $(OPT) -o $@ $^ $(LIBS)

bench: deps $(B)/bench/bench_engine $(B)/otel-webhook $(B)/otel-reconcile
	@sh scripts/deps.sh bench
	@$(B)/bench/bench_engine tests/bench
	@/usr/bin/python3 tests/bench/server_bench.py $(B)/otel-webhook
	@/usr/bin/python3 tests/live_test.py --rss $(B)/otel-webhook
	@/usr/bin/python3 tests/bench/reconcile_bench.py $(B)/otel-reconcile

# Fuzzing with clang's libFuzzer: the engine on arbitrary pods (JSON, YAML
# and annotation/env fields; see tests/fuzz/fuzz_engine.c) under ASan, UBSan
# and leak detection. Runs FUZZ_SECONDS on a copy of the seed corpus in
# build/fuzz/corpus; a crash, leak or broken invariant fails the target and
# leaves the input in build/fuzz/artifacts/.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer -D_GNU_SOURCE -I.
FUZZ_LIB      = $(sort $(wildcard base/*.c kube/*.c collector/*.c mutate/*.c))
# kube/ also holds the API client (libcurl, OpenSSL), so those link too.
FUZZ_PKGS     = json-c yaml-0.1 libcurl openssl
.PHONY: fuzz
$(B)/fuzz/fuzz_engine: tests/fuzz/fuzz_engine.c $(FUZZ_LIB) $(wildcard kube/*.h mutate/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags $(FUZZ_PKGS)) -o $@ tests/fuzz/fuzz_engine.c $(FUZZ_LIB) \
	  $(shell pkg-config --libs $(FUZZ_PKGS)) -lpthread -lm

# The AdmissionReview decoder and everything behind it.
$(B)/fuzz/fuzz_review: tests/fuzz/fuzz_review.c server/review.c server/log.c server/metrics.c $(FUZZ_LIB) \
                       $(wildcard kube/*.h mutate/*.h server/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DH2O_USE_LIBUV=0 $(shell pkg-config --cflags $(FUZZ_PKGS) openssl) -o $@ \
	  tests/fuzz/fuzz_review.c server/review.c server/log.c server/metrics.c $(FUZZ_LIB) \
	  $(shell pkg-config --libs $(FUZZ_PKGS) openssl) -lpthread -lm

# Each target runs FUZZ_SECONDS on a copy of its seed corpus.
fuzz: $(B)/fuzz/fuzz_engine $(B)/fuzz/fuzz_review
	@set -e; for t in engine:corpus review:review-corpus; do name=$${t%%:*}; seeds=$${t#*:}; \
	  rm -rf $(B)/fuzz/$$name-corpus && mkdir -p $(B)/fuzz/$$name-corpus $(B)/fuzz/artifacts && \
	  cp tests/fuzz/$$seeds/* $(B)/fuzz/$$name-corpus/ && \
	  echo "== fuzz_$$name for $(FUZZ_SECONDS) s" && \
	  ASAN_OPTIONS=detect_leaks=1 $(B)/fuzz/fuzz_$$name -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(B)/fuzz/artifacts/ $(B)/fuzz/$$name-corpus; done

# make install [DESTDIR=/staging] [PREFIX=/usr/local]: the binaries, nothing
# else. deploy/Dockerfile copies exactly this tree into the image
# (tests/deploy checks the layout).
PREFIX ?= /usr/local
INSTALL_BINS := otel-webhook $(if $(wildcard reconcile/main.c),otel-reconcile)
install: $(addprefix $(B)/,$(INSTALL_BINS))
	install -d $(DESTDIR)$(PREFIX)/bin
	@set -e; for b in $(INSTALL_BINS); do \
	  echo "install -m 0755 $(B)/$$b $(DESTDIR)$(PREFIX)/bin/$$b"; \
	  install -m 0755 $(B)/$$b $(DESTDIR)$(PREFIX)/bin/$$b; done
