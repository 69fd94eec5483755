#!/usr/bin/env bash
# Captures tools/list from the pinned MCP servers of corpus class 27 ("schemas from MCP
# servers") into target/mcp-corpus/<server>/ (tools as tools/NAME.json and one case per tool,
# written by `tooltape mcp --cases`; the verdicts of `tooltape mcp --format json`), then writes
# the corpus: every tool to cases/tools/NAME.json and one case per server,
# cases/c27_mcp_<server>.toml, declaring all its tools, with the simulated call of one of them
# (arguments built by `tooltape mcp --cases` and valid against its schema). Then record its
# synthetic cassettes and snapshots as for any case:
#   tooltape record c27_ --simulate && make snapshots
#
# Servers are installed into ~/.cache/tooltape/mcp/<name>-<version> (npm packages with `npm
# install`, PyPI packages into a virtualenv), never into the repository. Each server is started
# without network (`unshare -n`, root or user namespaces needed): listing tools must not need it.
#
# Usage: scripts/capture-mcp-corpus.sh [install|capture|cases|all]   (default: all)
# Needs: node + npm, python3 (venv), unshare, and a built tooltape (TOOLTAPE=path to override).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${HOME}/.cache/tooltape/mcp"
OUT="${OUT:-${ROOT}/target/mcp-corpus}"
TOOLTAPE="${TOOLTAPE:-${CARGO_TARGET_DIR:-${ROOT}/target}/debug/tooltape}"
MODE="${1:-all}"

# name|registry|package|version|licence|entry (relative to the install folder)|args
SERVERS=(
  "everything|npm|@modelcontextprotocol/server-everything|2026.8.31|MIT|node_modules/@modelcontextprotocol/server-everything/dist/index.js|stdio"
  "filesystem|npm|@modelcontextprotocol/server-filesystem|2026.8.31|MIT|node_modules/@modelcontextprotocol/server-filesystem/dist/index.js|/tmp"
  "memory|npm|@modelcontextprotocol/server-memory|2026.8.31|MIT|node_modules/@modelcontextprotocol/server-memory/dist/index.js|"
  "sequential_thinking|npm|@modelcontextprotocol/server-sequential-thinking|2026.8.31|MIT|node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js|"
  "playwright|npm|@playwright/mcp|0.0.83|Apache-2.0|node_modules/@playwright/mcp/cli.js|--headless"
  "notion|npm|@notionhq/notion-mcp-server|2.5.2|MIT|node_modules/@notionhq/notion-mcp-server/bin/cli.mjs|"
  "fetch|pypi|mcp-server-fetch|2026.10.24|MIT|venv/bin/mcp-server-fetch|"
  "git|pypi|mcp-server-git|2026.10.19|MIT|venv/bin/mcp-server-git|"
  "time|pypi|mcp-server-time|2026.10.19|MIT|venv/bin/mcp-server-time|--local-timezone=UTC"
)

install_one() {
  local name=$1 registry=$2 package=$3 version=$4
  local dir="${CACHE}/${name}-${version}"
  mkdir -p "$dir"
  case "$registry" in
    npm)
      [ -d "$dir/node_modules/$package" ] && return 0
      printf '{"name":"tooltape-mcp-%s","private":true,"dependencies":{"%s":"%s"}}\n' \
        "$name" "$package" "$version" >"$dir/package.json"
      (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --silent)
      ;;
    pypi)
      [ -x "$dir/venv/bin/python" ] && "$dir/venv/bin/python" -m pip show "$package" >/dev/null 2>&1 && return 0
      python3 -m venv "$dir/venv"
      "$dir/venv/bin/python" -m pip install --quiet "${package}==${version}"
      ;;
  esac
}

capture_one() {
  local name=$1 registry=$2 package=$3 version=$4 licence=$5 entry=$6 args=$7
  local dir="${CACHE}/${name}-${version}"
  local run=("$dir/$entry")
  [ "$registry" = npm ] && run=(node "$dir/$entry")
  # shellcheck disable=SC2206
  [ -n "$args" ] && run+=($args)
  rm -rf "${OUT:?}/${name}"
  mkdir -p "${OUT}/${name}"
  echo "capture ${package}@${version} (${licence})" >&2
  unshare -n "$TOOLTAPE" mcp --format json -- "${run[@]}" >"${OUT}/${name}/verdicts.json" || true
  unshare -n "$TOOLTAPE" mcp --cases "${OUT}/${name}" --force -- "${run[@]}"
  printf '{"server":"%s","package":"%s","registry":"%s","version":"%s","licence":"%s"}\n' \
    "$name" "$package" "$registry" "$version" "$licence" >"${OUT}/${name}/provenance.json"
}

# One case per server from what `capture` wrote (python3: reads the generated TOML).
write_case() {
  local name=$1 package=$2 registry=$3 version=$4 licence=$5
  python3 - "$OUT/$name" "$ROOT/cases" "$name" "$package" "$registry" "$version" "$licence" <<'PY'
import json, os, shutil, sys, tomllib
src, cases, name, package, registry, version, licence = sys.argv[1:]
listed = [t["name"] for t in json.load(open(os.path.join(src, "verdicts.json")))["tools"]]
written = {}
for f in sorted(os.listdir(src)):
    if f.startswith("mcp_") and f.endswith(".toml"):
        case = tomllib.load(open(os.path.join(src, f), "rb"))
        written[case["tools"][0]] = case
tools = [t for t in listed if t in written]
providers = [p for p in written[tools[0]]["providers"]
             if all(p in written[t]["providers"] for t in tools)]
# The simulated call: the first tool (in listing order) whose generated call has arguments.
def args(t):
    c = written[t].get("simulate", {}).get("calls", [{}])[0]
    return c.get("arguments") if "raw_arguments" not in c else None
called = next((t for t in tools if args(t)), tools[0])
for t in tools:
    shutil.copy(os.path.join(src, "tools", t + ".json"), os.path.join(cases, "tools", t + ".json"))
def toml(v):
    """A TOML inline value (the arguments hold no null: those cases use raw_arguments)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(toml(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v, ensure_ascii=False)
left_out = [t for t in listed if t not in written]
with open(os.path.join(cases, f"c27_mcp_{name}.toml"), "w") as out:
    out.write(f"# Provenance: {package} {version} from {registry} (licence {licence}), tools/list captured\n")
    out.write("# offline by scripts/capture-mcp-corpus.sh with `tooltape mcp --cases`; regenerate with it.\n")
    if left_out:
        out.write(f"# Left out by `tooltape mcp --cases`: {', '.join(left_out)}.\n")
    n = f"{len(tools)} tool" + ("s" if len(tools) != 1 else "")
    out.write(f'description = "Class 27 (schemas from MCP servers): the MCP server {package} {version} ({licence}), its {n} as its tools/list sends them, declared together; one simulated call to {called} with arguments valid against its schema"\n')
    out.write(f"tools = {toml(tools)}\n")
    out.write(f"providers = {toml(providers)}\n")
    # A server whose tools total over 100 KB is sent in one trial per provider (forced,
    # buffered): every trial stores the whole request in its cassette and snapshot.
    size = sum(os.path.getsize(os.path.join(src, "tools", t + ".json")) for t in tools)
    if size > 100_000:
        out.write(f'choices = ["forced-{called}"]\nmodes = ["buffered"]\n\n')
    else:
        out.write(f'choices = ["auto", "forced-{called}"]\n\n')
    out.write(f'[[messages]]\nrole = "user"\ncontent = "Use the {called} tool."\n\n')
    out.write(f'[simulate]\ncalls = [{{ name = "{called}", arguments = {toml(args(called) or {})} }}]\n\n')
    out.write(f'[[expect]]\ntrials = "*::forced-{called}"\ncalls = ["{called}"]\n')
print(f"c27_mcp_{name}: {len(tools)} tools, providers {', '.join(providers)}, call {called}", file=sys.stderr)
PY
}

for s in "${SERVERS[@]}"; do
  IFS='|' read -r name registry package version licence entry args <<<"$s"
  case "$MODE" in
    install) install_one "$name" "$registry" "$package" "$version" ;;
    capture) capture_one "$name" "$registry" "$package" "$version" "$licence" "$entry" "$args" ;;
    cases) write_case "$name" "$package" "$registry" "$version" "$licence" ;;
    all)
      install_one "$name" "$registry" "$package" "$version"
      capture_one "$name" "$registry" "$package" "$version" "$licence" "$entry" "$args"
      write_case "$name" "$package" "$registry" "$version" "$licence"
      ;;
    *) echo "usage: $0 [install|capture|cases|all]" >&2; exit 2 ;;
  esac
done
