# tooltape — every entry point. CI runs `make ci` (= .ci/run). Adding a case never touches this file.
GATEWAY ?= litellm
CLIENT ?= tooltape
.PHONY: publish-check wheel client server gateway gateway-compare import-vcr test review snapshots record record-synthetic bench lint fmt fmt-check ci scan status report report-png matrix-png conformance drift fuzz

# Offline, no keys: replays every trial from its cassette and checks its snapshot.
test:
	cargo test

# Review changed snapshots (needs cargo-insta: `cargo install cargo-insta`).
review:
	INSTA_UPDATE=new cargo test --test conformance || true
	cargo insta review

# Accept every new or changed snapshot without review (after re-recording synthetic cassettes).
snapshots:
	INSTA_UPDATE=always cargo test --test conformance

# Record with real keys: make record FILTER=weather::anthropic MODE=missing|stale|all PROVIDER=anthropic
MODE ?= missing
record:
	cargo run -- record $(FILTER) --$(MODE) $(if $(PROVIDER),--provider $(PROVIDER)) $(if $(DRY_RUN),--dry-run) $(if $(CONCURRENCY),--concurrency $(CONCURRENCY))

# Same, answered by the project's own simulator: cassettes are marked synthetic.
record-synthetic:
	cargo run -- record $(FILTER) --$(MODE) --simulate $(if $(PROVIDER),--provider $(PROVIDER))

# Speed figures against the targets (`cargo bench`, tests/bench/): make bench ONLY=textcall.
# glibc keeps the memory a run frees for the next run (BENCH_MALLOC=default for glibc's own
# thresholds; see docs/performance.md).
BENCH_MALLOC ?= glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432
bench:
	$(if $(filter default,$(BENCH_MALLOC)),,GLIBC_TUNABLES=$(BENCH_MALLOC)) cargo bench --bench bench -- $(foreach s,$(ONLY),--only $(s))

# clippy, then the client drivers: ruff (pinned, installed into the install cache outside the
# repository; rules in pyproject.toml) and `node --check` (.ci/lint-drivers).
lint:
	cargo clippy --all-targets -- -D warnings
	bash .ci/lint-drivers

fmt:
	cargo fmt --all

fmt-check:
	cargo fmt --all -- --check

ci:
	bash .ci/run

# The conformance matrix; a test fails when CONFORMANCE.md is out of date. Run after re-recording.
conformance:
	cargo run --quiet -- report --format md --out CONFORMANCE.md

# The matrix of the replayed suite in the terminal: make report FILTER=weather
report:
	cargo run --quiet -- report $(FILTER)

# HTML matrix screenshotted in headless Chromium to docs/conformance.png (apt-get install -y chromium).
report-png:
	bash tests/render_report.sh

# The whole field's page (tooltape matrix --html) screenshotted in headless Chromium to
# docs/matrix.png: make matrix-png SYSTEMS=gateway:tooltape,client:tooltape (default: every profile).
matrix-png:
	SYSTEMS=$(SYSTEMS) FILTER=$(FILTER) bash tests/render_matrix.sh

# What changed against DIR (offline), or against a fresh live recording (needs keys): make drift AGAINST=DIR
drift:
	cargo run --quiet -- drift $(FILTER) $(if $(AGAINST),--against $(AGAINST))

# Secret scan over committed cassettes (CI runs it): make scan CASSETTES=path
scan:
	cargo run --quiet -- scan $(CASSETTES)

# One line per trial: ok, missing, stale (why), synthetic; then orphans.
status:
	cargo run --quiet -- status $(FILTER)

# Bring a vcrpy / pytest-recording cassette: make import-vcr FILE=x.yaml PROVIDER=anthropic OUT=cassettes/imported/x.json
import-vcr:
	cargo run --quiet -- import-vcr $(FILE) --provider $(PROVIDER) --out $(OUT)

# Fuzz one decoder (FUZZ_TARGET: textcall, response, request_decoder, proxy_request, case,
# cassette, profile, mcp_tools; tests/fuzz/props.rs has each property; stream decoders: chunked =
# whole).
# Needs cargo-fuzz (cargo install cargo-fuzz). `-s none`: no sanitizer, so the stable toolchain
# builds it (safe Rust needs no AddressSanitizer; a panic is a crash). `cargo test` runs a bounded
# deterministic random-input version of each property (tests/it/fuzz.rs).
FUZZ_TARGET ?= textcall
FUZZ_SECONDS ?= 60
fuzz:
	cargo fuzz run -s none --fuzz-dir tests/fuzz $(FUZZ_TARGET) -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=1024

# The case suite through a real gateway (gateways/$(GATEWAY).toml): installs it into the user's
# cache when missing, starts it on loopback, prints the matrix, stops it; exit 1 on an unexpected
# result. Outside CI it also rewrites docs/gateways/$(GATEWAY).md.
gateway:
	cargo run --quiet -- gateway $(GATEWAY) $(FILTER) $(if $(URL),--url $(URL)) $(if $(CI),,$(if $(FILTER),,--md-out docs/gateways/$(GATEWAY).md))

# LiteLLM, Portkey, TensorZero, OGX and tooltape proxy side by side over the same trials, in one run (conformance,
# added latency p50/p99, streamed first tool-call delta, peak memory); rewrites the table between
# the compare markers of docs/gateways/README.md. COMPARE=names, FILTER to narrow. Release build:
# tooltape proxy is measured as users would run it.
COMPARE ?= litellm portkey tensorzero ogx tooltape
gateway-compare:
	cargo run --release --quiet -- gateway compare $(COMPARE) $(if $(FILTER),--filter $(FILTER)) $(if $(FILTER),,--md-out docs/gateways/README.md)

# The suite through a client library by its driver (clients/NAME.toml; the pinned install goes to
# the cache outside the repository): make client CLIENT=litellm FILTER=weather DOCS=1 rewrites
# docs/clients/NAME.md.
client:
	cargo run --quiet -- client $(CLIENT) $(FILTER) $(if $(DOCS),--md-out docs/clients/$(CLIENT).md)

# The suite against a server that runs the model (servers/NAME.toml; the pinned server and its
# model package go to the cache outside the repository): make server SERVER=llama-cpp DOCS=1
# rewrites docs/servers/NAME.md; SCHEMAS=1 forces every tool of the corpus instead.
server:
	cargo run --quiet -- server $(SERVER) $(FILTER) $(if $(SCHEMAS),--schemas) $(if $(DOCS),--md-out docs/servers/$(SERVER)$(if $(SCHEMAS),-schemas).md)

# `cargo publish --dry-run` in a target folder of its own: cargo gives the unpacked package's
# build script the same output folder as this checkout's, and the package has no gateways/ or
# clients/, so in the shared folder it left the dev build's built-in profiles empty until
# build.rs ran again (docs/ci.md).
publish-check:
	cargo publish --dry-run --target-dir target/publish-check

# The binary as a Python wheel (maturin, pinned, installed into a venv in the cache outside the
# repository): target/wheels/tooltape-VERSION-py3-none-PLATFORM.whl; `pip install` it and
# `tooltape` is on the PATH. Sizes and times: docs/ci.md.
MATURIN_VERSION ?= 1.16.0
MATURIN_VENV ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tooltape/maturin-$(MATURIN_VERSION)
wheel:
	test -x $(MATURIN_VENV)/bin/maturin || { python3 -m venv $(MATURIN_VENV) && $(MATURIN_VENV)/bin/pip install --quiet --disable-pip-version-check maturin==$(MATURIN_VERSION); }
	$(MATURIN_VENV)/bin/maturin build --release --out target/wheels
