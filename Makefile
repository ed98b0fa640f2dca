# A thin layer over SwiftPM: the targets a user runs are the targets CI runs.
#
#   make run          install what is missing, build, render Graphs/demo.json to demo.wav, plot demo.png
#   make test         the whole XCTest suite (debug build)
#   make test-without-shared  the tests that read ../shared, as on a fresh clone without it
#   make conformance  the black-box cases in ../shared/conformance against the release CLI
#   make tsan         the concurrency tests under ThreadSanitizer
#   make bench        per-kernel M samples/s against C floors; offline render speed: B1..B7 against sox,
#                     ffmpeg, gst, numpy, rubberband (../shared/bench), cost per node; convolution and
#                     compressor against ffmpeg afir, scipy fftconvolve, sox compand, ffmpeg acompressor;
#                     start-up against sox; then one table of it all with peak RSS and the load average
#   make fuzz         libFuzzer + AddressSanitizer on the graph loader and the WAV readers
#
# Works from a fresh clone as root on Debian 12 (`deps` uses apt-get and pip).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

# Swift lives in /opt/swift on the project's machines; use it when it is not on PATH yet.
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
PYTHON ?= python3
CLI := .build/release/audiograph
DEMO_GRAPH ?= Graphs/demo.json
DEMO_OUT ?= demo.wav
DEMO_PLOT ?= demo.png
CONFORMANCE_DIR ?= ../shared/conformance
# Extra flags for `swift test` (for example SWIFT_TEST_FLAGS=--parallel); serial by default
# because the PulseAudio tests start a real server each.
SWIFT_TEST_FLAGS ?=
# The tests that exercise threads; `make tsan` runs them under ThreadSanitizer.
CONCURRENCY_TESTS ?= PendingChange|RenderPlan|RealTime|Concurrency|LiveTap

# Debian packages: headers and libraries of the C wrappers, and a PulseAudio server and its
# tools for the live-I/O tests. libmysofa1 is named too because it ships the default HRTF set.
DEB_PACKAGES := libsndfile1-dev libsamplerate0-dev libsoxr-dev libpulse-dev pulseaudio pulseaudio-utils \
                libmysofa-dev libmysofa1 libfftw3-dev libebur128-dev libcairo2-dev liblilv-dev lv2-dev swh-lv2 \
                librubberband-dev gcc libc6-dev sox \
                libavformat-dev libavcodec-dev libavutil-dev ffmpeg \
                libfluidsynth-dev fluidsynth timgm6mb-soundfont synthv1-lv2 \
                libwebrtc-audio-processing-dev
# Only `make bench` needs the peer renderers: fluidsynth and timidity with the TimGM6mb SoundFont
# (scripts/bench/midi.sh), those ../shared/bench/interleaved.sh runs (sox,
# ffmpeg, GStreamer; numpy comes with deps-python), GNU time, which times them, and gcc with the C
# library headers for the C floors of scripts/bench-kernels.sh.
BENCH_DEB_PACKAGES := sox ffmpeg gstreamer1.0-tools gstreamer1.0-plugins-base \
                      gstreamer1.0-plugins-good time gcc libc6-dev fluidsynth timidity timgm6mb-soundfont rubberband-cli
# Rounds per benchmark case (interleaved: every round times every peer once).
BENCH_ROUNDS ?= 5
# The conformance runner's Python modules, and pyloudnorm, the tests' independent EBU R128
# reference (import names equal the pip names).
PY_MODULES := numpy scipy soundfile pyloudnorm
PY_IMPORTS := numpy, scipy, soundfile, pyloudnorm

.PHONY: all deps deps-debian deps-python deps-python-debian deps-bench build print-release-flags run test test-without-shared tsan conformance bench fuzz clean

all: build

# ---------------------------------------------------------------------------------------- deps

deps: deps-debian deps-python

# Installs only what is missing; apt-get update runs once, and only when something is missing.
define apt_install_missing
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else \
	  echo "deps: Debian packages present ($(strip $(1)))"; \
	fi
endef

deps-debian:
	$(call apt_install_missing,$(DEB_PACKAGES))

deps-python:
	@if $(PYTHON) -c 'import $(PY_IMPORTS)' 2>/dev/null; then \
	  echo "deps: Python modules present ($(PY_MODULES))"; \
	else \
	  echo "deps: installing Python modules: $(PY_MODULES)"; \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check $(PY_MODULES) \
	  || $(PYTHON) -m pip install --quiet --disable-pip-version-check --break-system-packages $(PY_MODULES) \
	  || { [ "$$(command -v $(PYTHON))" = /usr/bin/python3 ] \
	       && $(MAKE) --no-print-directory deps-python-debian; }; \
	  $(PYTHON) -c 'import $(PY_IMPORTS)' \
	  || { echo "deps: $(PYTHON) still cannot import $(PY_IMPORTS)" >&2; exit 1; }; \
	fi

# Debian's own python3 (no pip, or an externally managed environment): Debian's packages.
deps-python-debian:
	$(call apt_install_missing,python3-numpy python3-scipy python3-soundfile)

deps-bench: deps-python
	$(call apt_install_missing,$(BENCH_DEB_PACKAGES))

# --------------------------------------------------------------------------------------- build

# The command line is two executables (Docs/Architecture.md "Modules"): `audiograph` renders a plain
# `render` line without Foundation or swift-argument-parser, and execs `audiograph-tool`, built
# beside it, for every other command line; `make build` builds both.
# Both link the Swift runtime statically (`audiograph-tool` Foundation too; `audiograph` links
# none): 14 fewer shared libraries to load and relocate at every start (≈ 3 ms task-clock and
# 7-20 ms wall less per process, Docs/Performance.md), which offline renders of short files and
# the benchmark pay per run. More flags cut the start-up (Docs/Performance.md "Start-up: the
# render command line" and "Start-up: a render without Foundation"; a 0.1 s render):
# - libstdc++ linked statically (scripts/link/static-libstdc++ holds a linker script found
#   before libstdc++.so for the driver's -lstdc++): the dynamic loader no longer loads and
#   relocates libstdc++.so.6 nor looks up ~800 C++ runtime symbols (typeinfo vtables,
#   __cxa_pure_virtual) for the static Swift runtime and Foundation: 9.6 M -> 7.8 M instructions;
# - -disable-concrete-type-metadata-mangled-name-accessors: our modules ask for a concrete
#   generic type's metadata (Dictionary<String, NodeDescription>, Set<String>, ...) through its
#   accessor instead of demangling its name at run time, which also searched every protocol
#   conformance of the binary for its Hashable witness: 9.6 M -> 7.5 M instructions.
# - libgcc linked statically too (-static-libgcc): no libgcc_s.so.1 to load and relocate. (Its
#   constructor's CPUID probes, each a VM exit here, stayed until CVectorKernels stopped asking
#   libgcc for the CPU's features: see Docs/Performance.md "Start-up: at SoX's time".)
# scripts/bench-kernels.sh builds with the same flags (make print-release-flags), so the two do
# not rebuild each other.
# The CLI stays a position-independent executable (Debian's hardening default): linking it
# -no-pie would save about 65 more page faults and 0.2 ms of a 0.1 s render's start-up
# (Docs/Performance.md "Start-up: a render without Foundation") at the price of address-space
# randomisation for the executable's code; we keep the randomisation.
# - --disable-local-rpath: no RUNPATH $ORIGIN (there is no library of ours beside the executables),
#   so the dynamic loader does not look for libc and libm in 12 folders beside it first.
# - --no-export-dynamic: the executables export no symbols (nothing dlopened calls back into them
#   by name). The Swift runtime's backtrace set-up runs dladdr once at load, which searched
#   the ~6 700 exported symbols linearly.
# - -function-sections and --section-ordering-file: the ~1 250 functions a short render runs are
#   laid out together (scripts/link/order-functions.sh writes the list), so its code lies on
#   ~170 pages instead of ~380 and a render takes 20-30 fewer page faults (Docs/Performance.md
#   "Start-up: at SoX's time"). The output of every function is unchanged; only where it lies.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -L$(CURDIR)/scripts/link/static-libstdc++ \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xswiftc -Xclang-linker -Xswiftc -static-libgcc --disable-local-rpath -Xlinker --no-export-dynamic \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections \
	-Xlinker --section-ordering-file=$(CURDIR)/scripts/link/render-order.txt

print-release-flags:
	@echo $(RELEASE_FLAGS)

build:
	$(SWIFT) build $(RELEASE_FLAGS) --product audiograph
	$(SWIFT) build $(RELEASE_FLAGS) --product audiograph-tool

run: deps build
	@test -f $(DEMO_GRAPH) || { echo "run: $(DEMO_GRAPH) does not exist" >&2; exit 1; }
	rm -f $(DEMO_OUT)
	$(CLI) render $(DEMO_GRAPH) -o $(DEMO_OUT)
	@test -s $(DEMO_OUT) || { echo "run: $(CLI) exited 0 but wrote no $(DEMO_OUT)" >&2; exit 1; }
	@echo "run: wrote $(DEMO_OUT) ($$(stat -c %s $(DEMO_OUT)) bytes)"
	$(CLI) plot $(DEMO_OUT) -o $(DEMO_PLOT)
	@echo "run: wrote $(DEMO_PLOT) ($$(stat -c %s $(DEMO_PLOT)) bytes)"

# ---------------------------------------------------------------------------------------- test

# The release CLI is built first: the live performance tests play through it, as users do.
# `swift build --build-tests` first builds every target, the Examples/ programs included (ExamplesTests run them).
test: deps build
	$(SWIFT) build --build-tests
	@echo "$(SWIFT) test --disable-swift-testing $(SWIFT_TEST_FLAGS)  (log: .build/test.log)"
	@set -o pipefail; AG_REQUIRE_RELEASE_CLI=1 AG_REQUIRE_EXAMPLES=1 \
	  $(SWIFT) test --disable-swift-testing $(SWIFT_TEST_FLAGS) 2>&1 | tee .build/test.log || { \
	  echo "test: FAILED; the failing assertions and cases (whole log: .build/test.log):"; \
	  grep -E ': error: |^Test Case .* failed \(' .build/test.log; exit 1; }

# A fresh clone has no ../shared beside it (a user's machine): the tests that look for it run
# again as if it were not there (AG_WITHOUT_SHARED), after `make test` built them.
SHARED_READING_TESTS ?= GraphLoaderRulesTests
test-without-shared:
	AG_WITHOUT_SHARED=1 $(SWIFT) test --disable-swift-testing --skip-build --filter '$(SHARED_READING_TESTS)'

# A separate scratch path keeps the sanitized build from invalidating the normal one.
tsan: deps
	$(SWIFT) test --disable-swift-testing --sanitize=thread --scratch-path .build-tsan --filter '$(CONCURRENCY_TESTS)'

conformance: deps build
	@if [ -d "$(CONFORMANCE_DIR)" ]; then \
	  echo "conformance: $(CONFORMANCE_DIR) with $(CLI)"; \
	  $(PYTHON) $(CONFORMANCE_DIR)/run.py --cli $(CLI); \
	else \
	  echo "conformance: skipped ($(CONFORMANCE_DIR) does not exist)"; \
	fi

bench: deps deps-bench build
	bash scripts/bench/summary.sh start
	bash scripts/bench-kernels.sh
	bash scripts/bench.sh $(BENCH_ROUNDS)
	bash scripts/bench-effects.sh $(BENCH_ROUNDS)
	bash scripts/bench/summary.sh print

# ---------------------------------------------------------------------------------------- fuzz

# libFuzzer (the Swift toolchain's) with AddressSanitizer: the graph loader (bytes as a graph
# file, or — inputs that do not start like JSON — a graph built by Fuzz/FuzzGraphLoader/
# GraphGrammar.swift, loaded and rendered; the share of each that loads and renders is printed
# at the end; `make fuzz FUZZ_SECONDS=600` is the 30-minute run), the WAV readers (WAVFile, and WAVFileReader and libsndfile through AudioFileReader, the two compared sample for sample) and the SOFA reader
# (HRTFSet through libmysofa), FUZZ_SECONDS each, one after the other, seeded from Graphs/, the
# test fixtures, Fuzz/seed-wavs.py and Fuzz/seed-sofa.py (Debian's SOFA set is 1.1 MiB, over
# libFuzzer's default 1 MiB cap, hence -max_len for that target; libmysofa's own leaks on
# malformed files are suppressed, Fuzz/lsan-libmysofa.supp). The corpus grows in
# $(FUZZ_DIR)/corpus-*; a crashing input is saved as $(FUZZ_DIR)/crash-* and fails the target.
FUZZ_SECONDS ?= 90
FUZZ_DIR := .build-fuzz
# -sanitize=fuzzer would also link libFuzzer's main, which clashes with the Swift entry point
# SwiftPM links as `main`: instrument like it (coverage for libFuzzer, AddressSanitizer), link
# libFuzzer without its main, and let Fuzz/*/main.swift call LLVMFuzzerRunDriver.
FUZZER_LIB := $(firstword $(wildcard $(dir $(shell command -v $(SWIFT)))../lib/swift/clang/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a))
# The C targets are not built with AddressSanitizer here, so tell the tests' malloc interposer
# (CAllocationCounter, linked through AudioGraphTesting) to step aside, as it does under
# `--sanitize`: ASan owns malloc.
FUZZ_FLAGS := -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
              -Xcc -DAG_COUNTER_SANITIZED=1 -Xlinker $(FUZZER_LIB) -Xlinker -lstdc++
FUZZ_RUN = -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 -print_final_stats=1

fuzz: deps
	@test -n "$(FUZZER_LIB)" || { echo "fuzz: libclang_rt.fuzzer_no_main not found next to $(SWIFT)" >&2; exit 1; }
	AG_FUZZ=1 $(SWIFT) build --scratch-path $(FUZZ_DIR) $(FUZZ_FLAGS) --product FuzzGraphLoader
	AG_FUZZ=1 $(SWIFT) build --scratch-path $(FUZZ_DIR) $(FUZZ_FLAGS) --product FuzzWAVReader
	AG_FUZZ=1 $(SWIFT) build --scratch-path $(FUZZ_DIR) $(FUZZ_FLAGS) --product FuzzSOFAReader
	rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds/graph $(FUZZ_DIR)/seeds/wav $(FUZZ_DIR)/seeds/sofa \
	  $(FUZZ_DIR)/corpus-graph $(FUZZ_DIR)/corpus-wav $(FUZZ_DIR)/corpus-sofa
	cp Graphs/*.json Tests/AudioGraphKitTests/Fixtures/*.json $(FUZZ_DIR)/seeds/graph/
	# Grammar seeds (a first byte that is not JSON): FuzzGraphLoader builds and renders a graph from them.
	$(PYTHON) -c 'import random, sys; [open(f"{sys.argv[1]}/grammar-{i}", "wb").write(bytes([1]) + random.Random(i).randbytes(256)) for i in range(64)]' $(FUZZ_DIR)/seeds/graph
	$(PYTHON) Fuzz/seed-wavs.py $(FUZZ_DIR)/seeds/wav
	$(PYTHON) Fuzz/seed-sofa.py $(FUZZ_DIR)/seeds/sofa
	$(FUZZ_DIR)/debug/FuzzGraphLoader $(FUZZ_RUN) -artifact_prefix=$(FUZZ_DIR)/crash-graph- $(FUZZ_DIR)/corpus-graph $(FUZZ_DIR)/seeds/graph
	$(FUZZ_DIR)/debug/FuzzWAVReader $(FUZZ_RUN) -artifact_prefix=$(FUZZ_DIR)/crash-wav- $(FUZZ_DIR)/corpus-wav $(FUZZ_DIR)/seeds/wav
	LSAN_OPTIONS=suppressions=Fuzz/lsan-libmysofa.supp $(FUZZ_DIR)/debug/FuzzSOFAReader $(FUZZ_RUN) -max_len=2097152 -artifact_prefix=$(FUZZ_DIR)/crash-sofa- $(FUZZ_DIR)/corpus-sofa $(FUZZ_DIR)/seeds/sofa

# --------------------------------------------------------------------------------------- clean

clean:
	rm -rf .build .build-tsan .build-fuzz $(DEMO_OUT) $(DEMO_PLOT)
