# Retarget — the one-command entry points. Every target installs what is missing first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
FUZZ_SECONDS ?= 60
# fuzz-diff starts here; a later session continues with new seeds by raising it.
FUZZ_FIRST_SEED ?= 1
# Let ccache share hits between checkouts in different folders (CI clones into a new one).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: deps build test test-asan demo bench fuzz fuzz-diff python-example clean

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The suite runs where hand-installed packages are out of sight (scripts/test-env.sh,
# docs/testing.md): a missing install step fails here as it would on a fresh machine.
test: build
	scripts/test-env.sh $(BUILD_DIR) ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The whole suite built with ASan+UBSan by clang in build-asan/ (docs/testing.md: how long it
# takes, what it found). It shares the main build's Python environment, but not the Python
# extension (an ASan-built module would need ASan preloaded into Python). ASan's fake stacks for
# use-after-return stay off: SystemC switches its threads' stacks without telling ASan, and a
# frame on a fake stack then faults when the kernel returns.
ASAN_DIR ?= build-asan
test-asan: build
	@scripts/install-deps.sh --fuzz
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
	  -DRETARGET_SANITIZE=address,undefined -DRETARGET_BENCH=OFF -DRETARGET_PYTHON_MODULE=OFF \
	  -DRETARGET_PYTHON=$(CURDIR)/$(BUILD_DIR)/venv/bin/python3
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_stack_use_after_return=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  scripts/test-env.sh $(BUILD_DIR) ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS)

# The Python package from the build tree, with the build's Python (jax, pandas): the example
# script of docs/python.md. `pip install .` installs the same package elsewhere.
python-example: build
	PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/python RETARGET=$(CURDIR)/$(BUILD_DIR)/bin/retarget \
	  $(BUILD_DIR)/venv/bin/python3 examples/python_quickstart.py $(BUILD_DIR)/python-quickstart

demo: build
	scripts/demo.sh $(BUILD_DIR)

bench: build
	scripts/bench.sh $(BUILD_DIR)

fuzz:
	@scripts/install-deps.sh --fuzz
	scripts/fuzz.sh $(FUZZ_SECONDS)

# Random programs on every target against the interpreter for FUZZ_SECONDS; findings are shrunk
# into build/fuzz-diff/findings (fuzz/fuzz_diff.py, docs/testing.md).
fuzz-diff: build
	$(BUILD_DIR)/venv/bin/python3 fuzz/fuzz_diff.py --retarget $(BUILD_DIR)/bin/retarget \
	  --seconds $(FUZZ_SECONDS) --first-seed $(FUZZ_FIRST_SEED) --out $(BUILD_DIR)/fuzz-diff

clean:
	rm -rf $(BUILD_DIR) build-fuzz $(ASAN_DIR)
