# tilewise — quick start: `make demo` (install + main job on the bundled example), `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
JOBS ?= auto

.PHONY: install demo test bench clean sysdeps

sysdeps:
	@command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || \
	  (echo "installing a C compiler (gcc, make) with apt-get"; apt-get update -q && apt-get install -y -q gcc make)
	@cc --version | head -1
	@command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 && [ -e /usr/lib/picolibc/riscv64-unknown-elf/lib/release/rv32im/ilp32/libc.a ] || \
	  (echo "installing the RISC-V cross compiler and picolibc (pulp-open firmware) with apt-get"; \
	   apt-get update -q && apt-get install -y -q gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)
	@riscv64-unknown-elf-gcc --version | head -1
	@command -v arm-none-eabi-gcc >/dev/null 2>&1 && [ -e /usr/lib/arm-none-eabi/newlib/thumb/v7e-m/nofp/libc_nano.a ] && command -v qemu-system-arm >/dev/null 2>&1 || \
	  (echo "installing the Arm cross compiler, newlib and QEMU (Cortex-M firmware) with apt-get"; \
	   apt-get update -q && apt-get install -y -q --no-install-recommends gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)
	@arm-none-eabi-gcc --version | head -1
	@command -v llvm-mca >/dev/null 2>&1 || \
	  (echo "installing LLVM (llvm-mca: the Cortex-M7 cycle estimate of validate --on count) with apt-get"; \
	   apt-get update -q && apt-get install -y -q --no-install-recommends llvm)
	@llvm-mca --version | grep -i "llvm version" | head -1
	@command -v $${TILEWISE_CHROMIUM:-chromium} >/dev/null 2>&1 || \
	  (echo "installing Chromium (the tests screenshot report.html headless) with apt-get"; \
	   apt-get update -q && apt-get install -y -q --no-install-recommends chromium)
	@$${TILEWISE_CHROMIUM:-chromium} --version 2>/dev/null | head -1
	@command -v espeak-ng >/dev/null 2>&1 || \
	  (echo "installing espeak-ng (the tests synthesise keyword-spotting speech with it) with apt-get"; \
	   apt-get update -q && apt-get install -y -q --no-install-recommends espeak-ng)
	@espeak-ng --version | head -1

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory sysdeps
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

demo: sysdeps install
	$(BIN)/tilewise demo

test: sysdeps install
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal --durations=25

bench: install
	@command -v valgrind >/dev/null 2>&1 || \
	  (echo "installing valgrind (instruction counts) with apt-get"; apt-get update -q && apt-get install -y -q valgrind)
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
