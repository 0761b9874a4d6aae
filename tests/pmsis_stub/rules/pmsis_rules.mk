# STUB (tilewise tests) of the GAP SDK's rules/pmsis_rules.mk — not the SDK's build. A generated
# gap_sdk/Makefile includes it with RULES_DIR=tests/pmsis_stub/rules: `make all` compiles every
# APP_SRCS file with the host compiler (-c, no link: the FC/cluster runtime is the SDK's) with the
# application's APP_CFLAGS, -std=c99 -Werror and the PMSIS stub headers, at STUB_OPT (-O2, after
# APP_CFLAGS: the SDK's RISC-V gcc builds at the application's -O3, and x86-64 gcc 12 takes ~30 s
# over the pulp kernels' C path at -O3 for nothing this check needs); `make show` prints the
# application's variables.
STUB_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
BUILD_DIR ?= build_stub
STUB_OPT ?= -O2

all:
	mkdir -p $(BUILD_DIR)
	for f in $(APP_SRCS); do $(CC) -std=c99 -Werror $(APP_CFLAGS) $(STUB_OPT) -I$(STUB_DIR) -c $$f -o $(BUILD_DIR)/$$(echo $$f | tr ./ __).o || exit 1; done

show:
	@echo "APP=$(APP)"
	@echo "APP_SRCS=$(APP_SRCS)"
	@echo "READFS_FILES=$(READFS_FILES)"

clean:
	rm -rf $(BUILD_DIR)
