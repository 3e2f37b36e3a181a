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

LIB_SRC  := $(sort $(wildcard kube/*.c mutate/*.c certs/*.c))
SRV_SRC  := $(sort $(wildcard server/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TESTS    := $(patsubst tests/%.c,%,$(TEST_SRC))

# Normal build objects in build/obj, sanitizer build in build/asan.
obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps run test check-unit roundtrip bench fuzz clean install
all: deps $(B)/otel-webhook

deps:
	@sh scripts/deps.sh build

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

$(B)/asan/tests/%: $(B)/asan/tests/%.o $(B)/asan/tests/util.o $(call obj,$(B)/asan,$(LIB_SRC))
	$(CC) $(SAN) -o $@ $^ $(CHECK_LIBS) $(LIBS)

$(B)/obj/tests/%: $(B)/obj/tests/%.o $(B)/obj/tests/util.o $(call obj,$(B)/obj,$(LIB_SRC))
	$(CC) $(OPT) -o $@ $^ $(CHECK_LIBS) $(LIBS)

# Unit suites run under ASan+UBSan; the round trip uses the sanitized binary too.
test:
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory check-unit roundtrip
	@sh tests/summary.sh

check-unit: $(addprefix $(B)/asan/tests/,$(TESTS))
	@set -e; for t in $(TESTS); do echo "== $$t"; \
	  ASAN_OPTIONS=detect_leaks=1 CK_VERBOSITY=normal $(B)/asan/tests/$$t; done

roundtrip: $(B)/asan/otel-webhook
	@ASAN_OPTIONS=detect_leaks=1 /usr/bin/python3 tests/roundtrip.py $(B)/asan/otel-webhook

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
