# Toamaisutaa: meeting recorder bot + local identity service.
# `make run` starts the service (installing what is missing); `make test` runs every check.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NODE := node --import tsx
APT_PACKAGES := chromium pulseaudio ffmpeg sox flac espeak-ng postgresql
TEST_FILES ?= $(shell find test -name '*.test.ts' | sort)
TEST_CONCURRENCY ?= 2

.PHONY: help deps generate run demo test test-only lint typecheck bench bench-auth bench-bot bench-mic db-diff clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: node_modules/.deps-stamp prisma/generated/.stamp ## Install npm and Debian packages, generate the Prisma clients
	@missing=""; for p in chromium pulseaudio ffmpeg sox flac espeak-ng; do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	[ -n "$$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null)" ] || missing="$$missing postgresql"; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES) >/dev/null; fi

node_modules/.deps-stamp: package.json package-lock.json
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
	@export TEST_DATABASE_URL=$$(scripts/test-postgres.sh) && \
	$(NODE) --test --test-concurrency=$(TEST_CONCURRENCY) --test-timeout=600000 $(TEST_FILES)

bench: bench-auth bench-bot bench-mic ## Every benchmark (prints figures; asserts nothing)

bench-auth: deps ## Login, refresh and event-loop figures on SQLite and PostgreSQL
	@# wrk (Debian) drives the refresh load from a second process; without it that line is skipped.
	@command -v wrk >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null 2>&1 || \
	  (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null 2>&1) || true
	@export TEST_DATABASE_URL=$$(scripts/test-postgres.sh) && $(NODE) bench/auth.ts

bench-bot: deps ## Concurrent bots against the fixture: CPU, PSS, join time, audio gaps
	$(NODE) bench/bot.ts

bench-mic: deps ## Ingest-to-ear latency and CPU per stream
	$(NODE) bench/mic.ts

db-diff: deps ## New migration SQL for both providers from prisma/models.prisma (NAME=...)
	$(NODE) scripts/db/diff.ts $(or $(NAME),change)

clean: ## Remove generated files and local data
	rm -rf prisma/generated .tmp
