# zot — the agent runtime that other programs embed.
# `make help` lists the targets.

GO          ?= go
BIN         ?= bin
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
TSC_VERSION ?= 5.9.3
TOOLS       := clients/node/.tools
TSC         := $(TOOLS)/node_modules/.bin/tsc
PYTHON      ?= python3
FUZZTIME    ?= 60s
SOAKTIME    ?= 10m
NODE        ?= node

# The version stamped into the binary (read through internal/buildinfo):
# `git describe` from the newest v* tag, without the v, or 0.0.0-dev+<commit>
# in a clone without tags. `make build VERSION=1.2.3` overrides it.
GIT_DESCRIBE = $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)
GIT_COMMIT   = $(shell git describe --always --dirty --abbrev=12 2>/dev/null)
VERSION     ?= $(or $(patsubst v%,%,$(GIT_DESCRIBE)),$(if $(GIT_COMMIT),0.0.0-dev+$(GIT_COMMIT),0.0.0-dev))
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null)
# -s -w leave out the symbol table and the DWARF debugging information (a
# third of the file; panics keep their stack traces, which come from the
# runtime's own tables). CGO_ENABLED=0 makes a static binary: no dynamic
# loader and no C library to map and start, and DNS through Go's own
# resolver. `make build` and `make install` build the same binary.
GO_LDFLAGS  := -s -w -X zot.dev/zot/internal/buildinfo.Stamp=$(VERSION) -X zot.dev/zot/internal/buildinfo.Commit=$(COMMIT)
# urfave_cli_no_template renders the CLI's help without text/template, whose
# calls of methods by name make the linker keep every exported method of
# every type: the binary is 1.7 MB smaller, and zot touches nearly all of
# its pages, so it is that much less resident (docs/performance.md). The help
# reads the same either way (a test in cmd/zot compares the two builds).
GO_TAGS     := urfave_cli_no_template
GO_BUILD    := CGO_ENABLED=0 $(GO) build -tags '$(GO_TAGS)' -ldflags '$(GO_LDFLAGS)'
# zot is one program built twice (docs/architecture.md, One program): the
# full build, installed as zot-full, and the lean one (the zotlean tag),
# installed as zot, without the terminal client, the WebSocket listeners
# and the inspector, whose code a spawned `zot rpc` would otherwise carry
# in memory. The lean zot runs zot-full in its place when asked for those.
GO_LEAN     := CGO_ENABLED=0 $(GO) build -tags '$(GO_TAGS) zotlean' -ldflags '$(GO_LDFLAGS)'

# Where `make install` puts zot: $GOBIN when set, else $(PREFIX)/bin.
PREFIX      ?= $(HOME)/.local
GOBIN       ?= $(shell $(GO) env GOBIN)
INSTALL_DIR  = $(if $(GOBIN),$(GOBIN),$(PREFIX)/bin)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: generate
generate: ## regenerate Go types, docs tables and client types from schema/
	$(GO) generate ./...

.PHONY: check-generated
check-generated: ## fail when a generated file differs from a fresh generation
	$(GO) run ./gen/cmd/zot-gen -root . -check

.PHONY: build
build: ## build bin/zot (the lean build) and bin/zot-full (everything; the lean zot runs it for the terminal, attach, --listen and --inspect)
	$(GO_BUILD) -o $(BIN)/zot-full ./cmd/zot
	$(GO_LEAN) -o $(BIN)/zot ./cmd/zot

.PHONY: build-fleet
build-fleet: build ## build bin/zot-fleet beside zot: the Temporal worker and client (a module of its own, with the Temporal SDK; docs/fleet.md)
	cd cmd/zot-fleet && $(GO_BUILD) -o '$(abspath $(BIN))/zot-fleet' .

.PHONY: install
install: ## install zot and zot-full into GOBIN when set, else PREFIX/bin (PREFIX defaults to ~/.local); make install-fleet adds zot-fleet
	mkdir -p '$(INSTALL_DIR)'
	$(GO_BUILD) -o '$(INSTALL_DIR)/.zot-full.new' ./cmd/zot
	$(GO_LEAN) -o '$(INSTALL_DIR)/.zot.new' ./cmd/zot
	mv -f '$(INSTALL_DIR)/.zot-full.new' '$(INSTALL_DIR)/zot-full'
	mv -f '$(INSTALL_DIR)/.zot.new' '$(INSTALL_DIR)/zot'
	@echo 'installed $(INSTALL_DIR)/zot (zot-full beside it), version $(VERSION)'
	@case ":$$PATH:" in *':$(INSTALL_DIR):'*|*':$(INSTALL_DIR)/:'*) \
		found=$$(command -v zot); if [ -n "$$found" ] && ! [ "$$found" -ef '$(INSTALL_DIR)/zot' ]; then \
		echo "$$found comes before $(INSTALL_DIR) on your PATH, so a plain \`zot\` runs that one:"; \
		echo "remove it, or put $(INSTALL_DIR) earlier on PATH."; fi;; *) \
		echo '$(INSTALL_DIR) is not on your PATH, so a plain `zot` is not found. Add it:'; \
		echo '  export PATH="$(INSTALL_DIR):$$PATH"'; \
		echo 'for this shell; put that line in ~/.bashrc or ~/.zshrc (fish: fish_add_path $(INSTALL_DIR)) to keep it.';; esac


.PHONY: install-fleet
install-fleet: install ## install zot-fleet beside zot: the Temporal worker and client (docs/fleet.md)
	cd cmd/zot-fleet && $(GO_BUILD) -o '$(abspath $(INSTALL_DIR))/.zot-fleet.new' .
	mv -f '$(INSTALL_DIR)/.zot-fleet.new' '$(INSTALL_DIR)/zot-fleet'
	@echo 'installed $(INSTALL_DIR)/zot-fleet'

.PHONY: bench-build
bench-build: ## build the benchmark programs bin/zot-floor and bin/zot-bench from bench/, and the extension and MCP server of its user setup
	$(GO) build -o $(BIN)/zot-floor ./bench/cmd/zot-floor
	$(GO) build -o $(BIN)/zot-bench ./bench/cmd/zot-bench
	for e in todo hello; do mkdir -p $(BIN)/bench-ext/$$e && cp examples/extensions/$$e/extension.json $(BIN)/bench-ext/$$e/ && \
		$(GO) build -o $(BIN)/bench-ext/$$e/$$e ./examples/extensions/$$e || exit 1; done
	$(GO) build -o $(BIN)/zot-bench-mcp ./internal/mcphost/testdata/mcpserver

.PHONY: test
test: check-generated build testtools test-go test-python test-node test-acp test-shell test-sdk-outside ## run every test (Go with -race, Python, Node, shell, TypeScript)
	@$(MAKE) --no-print-directory test-home-check

# Tests never touch the user's home. Every test target runs with HOME and
# the XDG directories in a scratch folder, TEST_HOME, emptied first; the go
# command's own caches stay where they are. A test that forgets its own
# ZOT_HOME writes into TEST_HOME's zot home, and test-home-check (the last
# step of make test) fails naming what it wrote.
TEST_HOME   := $(CURDIR)/.tmp/test-home
GO_ENV_KEEP  = $(foreach k,GOCACHE GOMODCACHE GOPATH GOENV,$(k)='$(shell $(GO) env $(k) 2>/dev/null)')
NPM_CACHE    = $(shell npm config get cache 2>/dev/null)
TEST_ENV     = HOME='$(TEST_HOME)' XDG_STATE_HOME='$(TEST_HOME)/.local/state' \
	XDG_CONFIG_HOME='$(TEST_HOME)/.config' XDG_CACHE_HOME='$(TEST_HOME)/.cache' \
	XDG_DATA_HOME='$(TEST_HOME)/.local/share' ZOT_HOME= $(GO_ENV_KEEP) \
	$(if $(NPM_CACHE),npm_config_cache='$(NPM_CACHE)')

.PHONY: test-home
test-home:
	@rm -rf '$(TEST_HOME)' && mkdir -p '$(TEST_HOME)'

.PHONY: test-home-check
test-home-check: ## fail when a test wrote into the zot home of the scratch HOME the tests run with
	@left=$$(cd '$(TEST_HOME)' 2>/dev/null && find .local/state/zot .zot -type f 2>/dev/null); \
	if [ -n "$$left" ]; then \
		echo "a test wrote into the zot home of HOME (it would be the user's): set ZOT_HOME to a temp dir in it"; \
		echo "$$left" | sed 's|^|  $(TEST_HOME)/|'; exit 1; fi

.PHONY: test-go
test-go: testtools test-home
	$(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot ZOT_E2E_REQUIRED=1 $(GO) test -race -count=1 -timeout 20m ./...

# testtools/ holds the npm packages only tests use (the LLM API mock the
# end-to-end tests of internal/e2e run zot against), pinned by its
# lockfile; later test-only packages join it.
TESTTOOLS := testtools/node_modules/.package-lock.json

.PHONY: testtools
testtools: $(TESTTOOLS) ## install the test-only npm packages of testtools/ from its lockfile

$(TESTTOOLS): testtools/package.json testtools/package-lock.json
	cd testtools && npm ci --no-audit --no-fund

.PHONY: test-python
test-python: build python-venv test-home
	cd clients/python && $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot $(PYTHON) -m unittest discover -s tests
	cd clients/python-ext && $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot $(PYTHON) -m unittest discover -s tests

# The packaging test installs the client into a fresh venv. Debian and Ubuntu
# ship python3 without venv and ensurepip; add python3-venv there, only when
# they are missing.
.PHONY: python-venv
python-venv:
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { 		echo "$(PYTHON) lacks venv/ensurepip: installing python3-venv"; 		apt='apt-get update && apt-get install -y python3-venv'; \
		if [ "$$(id -u)" = 0 ]; then sh -c "$$apt"; else sudo sh -c "$$apt"; fi; }

# A module outside this repository builds against the SDK through a replace
# line and through go work, as docs/sdk.md shows.
.PHONY: test-sdk-outside
test-sdk-outside: build test-home
	$(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot scripts/test-sdk-outside.sh

.PHONY: test-node
test-node: build $(TSC) test-home
	cd clients/node && ../../$(TSC) -p tsconfig.json
	@if [ -d clients/node/test ] && ls clients/node/test/*.test.mjs >/dev/null 2>&1; then \
		cd clients/node && $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot $(NODE) --test test/; fi
	cd clients/node-ext && ../../$(TSC) -p tsconfig.json
	cd clients/node-ext && $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot $(NODE) --test test/

# The official ACP TypeScript SDK (pinned in testtools/) drives zot daemon.
.PHONY: test-acp
test-acp: build testtools test-home
	cd testtools && $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot $(NODE) --test acp/

.PHONY: test-shell
test-shell: build jq test-home
	@if [ -x clients/shell/test.sh ]; then $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot clients/shell/test.sh; fi

# The terminal client end to end: the real binary in tmux panes (the
# tuie2e build tag keeps these tests out of test-go).
.PHONY: test-tui
test-tui: build tmux test-home ## the terminal client end to end: zot in tmux at 80x24 and 200x50, driven by keys, read from the screen
	$(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot ZOT_E2E_REQUIRED=1 $(GO) test -tags tuie2e -count=1 -timeout 15m -run '^TestTUI' ./cmd/zot/

# The inspector's page (internal/inspect) in real browsers: Debian's
# chromium driven by chromedp, and firefox-esr over Marionette, against
# bin/zot. The test is a module of
# its own (internal/inspect/browsertest), so chromedp stays out of zot's
# module and binary. A screenshot of each view lands in .tmp/browser;
# `make inspect-shots` writes them into docs/images as well.
BROWSER_OUT := $(CURDIR)/.tmp/browser
BROWSER_ARGS ?=

.PHONY: test-browser
test-browser: build chromium firefox test-home ## the inspector's page in Chromium and Firefox through the binary (screenshots in .tmp/browser)
	rm -rf '$(BROWSER_OUT)' && mkdir -p '$(BROWSER_OUT)/_artifacts'
	cd internal/inspect/browsertest && $(TEST_ENV) ZOT_BIN=$(CURDIR)/$(BIN)/zot ZOT_E2E_REQUIRED=1 \
		$(GO) test -count=1 -timeout 10m -artifacts -outputdir '$(BROWSER_OUT)' ./... $(BROWSER_ARGS)
	@echo "screenshots: $$(find '$(BROWSER_OUT)' -name '*.png' | head -1 | xargs -r dirname)"

# The fleet (cmd/zot-fleet, docs/fleet.md) against the Temporal CLI's dev
# server: the CLI is built once into bin/tools from the Go module proxy
# (about five minutes on a clean machine) and again only when
# TEMPORAL_CLI_VERSION changes. The tests start the dev server on
# loopback (its state in a file), zot-fleet workers and zot daemon
# --executor temporal, and kill them mid-turn.
TEMPORAL_CLI_VERSION ?= v1.5.1
TEMPORAL_TOOLS       := $(CURDIR)/bin/tools
TEMPORAL             := $(TEMPORAL_TOOLS)/temporal
TEMPORAL_STAMP       := $(TEMPORAL_TOOLS)/.temporal-$(TEMPORAL_CLI_VERSION)

$(TEMPORAL_STAMP):
	mkdir -p '$(TEMPORAL_TOOLS)'
	GOBIN='$(TEMPORAL_TOOLS)' $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_CLI_VERSION)
	rm -f '$(TEMPORAL_TOOLS)'/.temporal-* && touch '$@'

.PHONY: temporal
temporal: $(TEMPORAL_STAMP) ## build the Temporal CLI (its dev server) into bin/tools, once per TEMPORAL_CLI_VERSION

.PHONY: test-fleet
test-fleet: build-fleet temporal test-home ## the fleet end to end: dev server, workers and zot daemon --executor temporal, killed mid-turn
	cd cmd/zot-fleet && $(TEST_ENV) ZOT_TEMPORAL='$(TEMPORAL)' ZOT_BIN='$(abspath $(BIN))/zot' \
		ZOT_FLEET_BIN='$(abspath $(BIN))/zot-fleet' ZOT_E2E_REQUIRED=1 $(GO) test -race -count=1 -timeout 20m ./...

.PHONY: bench-fleet
bench-fleet: build-fleet temporal ## the fleet against in-process: added ms per call, turns/s of 100 sessions with 1 and 2 workers, history per turn, where a turn's time goes
	cd cmd/zot-fleet && ZOT_TEMPORAL='$(TEMPORAL)' ZOT_BIN='$(abspath $(BIN))/zot' ZOT_FLEET_BIN='$(abspath $(BIN))/zot-fleet' \
		$(GO) test -run '^$$' -bench '^BenchmarkFleet' -benchtime 1x -timeout 20m .

.PHONY: fleet-demo
fleet-demo: build-fleet temporal ## a dev server, two workers and a daemon on this machine; prints where to look (Ctrl-C stops them)
	ZOT_TEMPORAL='$(TEMPORAL)' ZOT_BIN='$(abspath $(BIN))/zot' ZOT_FLEET_BIN='$(abspath $(BIN))/zot-fleet' \
		bash cmd/zot-fleet/demo.sh '$(CURDIR)/.tmp/fleet-demo'

.PHONY: inspect-shots
inspect-shots: ## rewrite docs/images/inspect-*.png from the browser test
	$(MAKE) --no-print-directory test-browser BROWSER_ARGS='-args -docs $(CURDIR)/docs/images'

# The browser tests need chromium; install it from Debian's packages when
# it is missing (the test drives the system browser, never a downloaded
# build).
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "chromium is missing: installing it"; \
		apt='apt-get update && apt-get install -y chromium'; \
		if [ "$$(id -u)" = 0 ]; then sh -c "$$apt"; else sudo sh -c "$$apt"; fi; }

# The page is checked in Firefox too (Debian's firefox-esr, driven over
# its Marionette protocol): install it when it is missing.
.PHONY: firefox
firefox:
	@command -v firefox-esr >/dev/null 2>&1 || { echo "firefox-esr is missing: installing it"; \
		apt='apt-get update && apt-get install -y firefox-esr'; \
		if [ "$$(id -u)" = 0 ]; then sh -c "$$apt"; else sudo sh -c "$$apt"; fi; }

# The terminal tests need tmux; install it from Debian's packages when it
# is missing.
.PHONY: tmux
tmux:
	@command -v tmux >/dev/null 2>&1 || { echo "tmux is missing: installing it"; \
		apt='apt-get update && apt-get install -y tmux'; \
		if [ "$$(id -u)" = 0 ]; then sh -c "$$apt"; else sudo sh -c "$$apt"; fi; }

# The shell client and its test need jq; fresh Debian and Ubuntu machines
# lack it: install it there, only when it is missing.
.PHONY: jq
jq:
	@command -v jq >/dev/null 2>&1 || { echo "jq is missing: installing it"; \
		apt='apt-get update && apt-get install -y jq'; \
		if [ "$$(id -u)" = 0 ]; then sh -c "$$apt"; else sudo sh -c "$$apt"; fi; }

$(TSC):
	npm install --no-save --no-audit --no-fund --prefix $(TOOLS) typescript@$(TSC_VERSION)

.PHONY: lint
lint: ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

.PHONY: bench
bench: build bench-build tmux ## time bin/zot against the floor program, then the Go micro-benchmarks, then the terminal client through tmux
	$(BIN)/zot-bench --zot $(BIN)/zot --floor $(BIN)/zot-floor $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./sdk ./sdk/wire ./internal/engine ./internal/provider/... ./internal/tools ./internal/ndjson ./internal/jsonrpc ./internal/tap ./internal/tui/... ./internal/sandbox
	ZOT_BIN=$(CURDIR)/$(BIN)/zot $(GO) test -run '^$$' -bench '^BenchmarkClientToolRoundTrip$$' -benchtime 300x ./cmd/zot
	ZOT_BIN=$(CURDIR)/$(BIN)/zot $(GO) test -run '^$$' -bench '^BenchmarkRemote$$' -benchtime 1x ./cmd/zot
	$(MAKE) --no-print-directory bench-tui

# The terminal client through the real binary in tmux: keystroke to screen
# (200 keys, beside cat's echo), an answer of 10,000 chunks, and memory
# over 1,000 turns.
.PHONY: bench-tui
bench-tui: build tmux
	ZOT_BIN=$(CURDIR)/$(BIN)/zot $(GO) test -tags tuie2e -run '^$$' -bench '^BenchmarkTUIKeystroke$$' -benchtime 200x -timeout 30m ./cmd/zot
	ZOT_BIN=$(CURDIR)/$(BIN)/zot $(GO) test -tags tuie2e -run '^$$' -bench '^BenchmarkTUI(Stream|Memory1000Turns)$$' -benchtime 1x -timeout 30m ./cmd/zot

.PHONY: fuzz
fuzz: ## run every Go fuzzer for FUZZTIME (60s) each, one after another; not part of test
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh

.PHONY: soak
soak: build ## soak bin/zot for SOAKTIME (10m) with random traffic, aborts and signals; make test runs 20 s of it
	ZOT_BIN=$(CURDIR)/$(BIN)/zot $(GO) test -count=1 -run '^TestSoak$$' -timeout 40m -v ./bench/soak -soak-duration $(SOAKTIME)

.PHONY: demo
demo: build ## run a real `zot rpc` session offline on the scripted provider
	@./scripts/demo.sh $(BIN)/zot

.PHONY: clean
clean: ## remove build outputs and locally installed tools
	rm -rf $(BIN) $(TOOLS) testtools/node_modules .tmp
