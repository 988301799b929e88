# Toamaisutaa: meeting recorder bot + local identity service.
# `make run` starts the service (installing what is missing); `make test` runs every check.
SHELL := /bin/bash
.DEFAULT_GOAL := help
# Node 24 (.node-version): the machine's node when it is new enough, else the npm registry's
# node-linux-<arch> package installed into .runtime/ (scripts/node-runtime.sh). Every recipe
# below, npm's native builds included, runs on it.
NODE_BIN := $(shell scripts/node-runtime.sh)
ifeq ($(NODE_BIN),)
$(error could not install Node $(shell cat .node-version): see scripts/node-runtime.sh)
endif
export PATH := $(NODE_BIN):$(PATH)
ifneq ($(findstring /.runtime/,$(NODE_BIN)),)
export npm_config_nodedir := $(abspath $(NODE_BIN)/..)
endif
NODE := node --import tsx
APT_PACKAGES := chromium chromium-l10n pulseaudio ffmpeg sox flac espeak-ng postgresql
TEST_FILES ?= $(shell find test -name '*.test.ts' | sort)
TEST_CONCURRENCY ?= 2
# `make image`: buildah (vfs storage, chroot isolation: works as root with no daemon) and the CA
# bundle npm in the build trusts (it holds the machine's own CAs, e.g. an intercepting proxy's).
IMAGE ?= localhost/toamaisutaa:latest
BUILDAH := buildah --storage-driver vfs
BUILD_CA ?= /etc/ssl/certs/ca-certificates.crt
comma := ,

.PHONY: help deps generate build image image-packages image-test unit-test run demo test test-only lint typecheck bench bench-auth bench-bot bench-mic bench-cluster bench-listen bench-listen-parts db-diff clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: node_modules/.deps-stamp prisma/generated/.stamp ## Install npm and Debian packages, generate the Prisma clients
	@missing=""; for p in chromium pulseaudio ffmpeg sox flac espeak-ng; do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	[ -n "$$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null)" ] || missing="$$missing postgresql"; \
	[ -e /usr/lib/chromium/locales/de.pak ] || missing="$$missing chromium-l10n"; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES) >/dev/null; fi

node_modules/.deps-stamp: package.json package-lock.json .node-version
	npm ci --strict-allow-scripts --no-audit --no-fund
	@touch $@

prisma/generated/.stamp: prisma/models.prisma prisma/sqlite/base.prisma prisma/postgresql/base.prisma node_modules/.deps-stamp
	@# Each provider's folder gets a copy of the shared models (a copy, not a symlink: archives
	@# and some checkouts flatten symlinks into text files).
	cp prisma/models.prisma prisma/sqlite/models.prisma && cp prisma/models.prisma prisma/postgresql/models.prisma
	@# The CLI wants a native schema engine it cannot download here; generation does not use it.
	PRISMA_SCHEMA_ENGINE_BINARY=/bin/true npx prisma generate --config prisma/sqlite.config.ts >/dev/null
	PRISMA_SCHEMA_ENGINE_BINARY=/bin/true npx prisma generate --config prisma/postgresql.config.ts >/dev/null
	@touch $@

generate: prisma/generated/.stamp ## Generate the Prisma clients

build: deps ## Production JavaScript under dist/ (control.js, worker.js): what `npm start` and the image run
	$(NODE) scripts/build.ts

image: ## The container image (IMAGE=localhost/toamaisutaa:latest) from deploy/Dockerfile with buildah, on a local bookworm + Node 24 base
	@command -v buildah >/dev/null && command -v debootstrap >/dev/null || \
	  (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q buildah debootstrap >/dev/null)
	base=$$(deploy/local-base.sh) && \
	$(BUILDAH) bud --isolation chroot --network host --format docker --layers \
	  $(if $(wildcard $(BUILD_CA)),--secret id=build_ca$(comma)src=$(BUILD_CA)) \
	  --build-arg BASE=$$base -f deploy/Dockerfile -t $(IMAGE) .

image-packages: ## Check that the image's Debian packages (and Node) exist for amd64 and arm64 in bookworm (apt --simulate)
	deploy/check-packages.sh

image-test: deps ## Start the image (buildah run): health, readiness, non-root, a bot recording the fixture's tone
	IMAGE=$(IMAGE) $(NODE) --test --test-timeout=900000 test/image/container.release.ts

unit-test: deps ## Boot systemd (systemd-nspawn) with deploy/toamaisutaa.service installed: hardening in force, a bot recording, a clean stop (after `make build`)
	@command -v systemd-nspawn >/dev/null || (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q systemd-container >/dev/null)
	$(NODE) --test --test-timeout=900000 test/deploy/systemd-unit.release.ts

run: deps ## Run the service on :8000 (creates data/config.json on first run)
	@$(NODE) scripts/dev-config.ts
	CONFIG_FILE=data/config.json $(NODE) control/main.ts

demo: deps ## Offline demo: fixture meeting, one bot, ten seconds recorded
	$(NODE) scripts/demo.ts

lint: deps ## ESLint over the sources
	npx eslint .

typecheck: deps ## TypeScript strict type check
	npx tsc --noEmit

test: deps lint typecheck test-only ## Lint, typecheck and every suite on SQLite and PostgreSQL

test-only: deps ## Only the suites (TEST_FILES=... to narrow)
	@# --test-force-exit: a file whose tests are done exits even if a failed cleanup left a server or
	@# a child open, so that one failure is reported, not a CI run that never ends.
	@export TEST_DATABASE_URL=$$(scripts/test-postgres.sh) && \
	$(NODE) --test --test-concurrency=$(TEST_CONCURRENCY) --test-timeout=600000 --test-force-exit $(TEST_FILES)

bench: bench-auth bench-bot bench-mic bench-listen bench-listen-parts bench-cluster ## Every benchmark (prints figures; asserts nothing)

bench-auth: deps ## Login, refresh and event-loop figures on SQLite and PostgreSQL
	@# wrk (Debian) drives the refresh load from a second process; without it that line is skipped.
	@command -v wrk >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null 2>&1 || \
	  (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null 2>&1) || true
	@export TEST_DATABASE_URL=$$(scripts/test-postgres.sh) && $(NODE) bench/auth.ts

bench-bot: deps ## Concurrent bots against the fixture: CPU, PSS, join time, audio gaps
	$(NODE) bench/bot.ts

bench-mic: deps ## Ingest-to-ear latency and CPU per stream
	$(NODE) bench/mic.ts

bench-cluster: deps ## Three instances on PostgreSQL: placement latency, forwarding overhead, takeover time
	@export TEST_DATABASE_URL=$$(scripts/test-postgres.sh) && $(NODE) bench/cluster.ts

bench-listen: deps ## Meeting-to-listener latency and CPU per live listener (WebSocket)
	$(NODE) bench/listen.ts

bench-listen-parts: deps ## Where the page tap's CPU goes: pacing, reading in the page, sending, each format
	$(NODE) bench/listen-parts.ts

db-diff: deps ## New migration SQL for both providers from prisma/models.prisma (NAME=...)
	$(NODE) scripts/db/diff.ts $(or $(NAME),change)

clean: ## Remove generated files and local data
	rm -rf prisma/generated .tmp dist
