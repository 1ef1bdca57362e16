#!/usr/bin/env bash
# Set up .venv if needed, then run the sample job (no arguments), the test suite (`test`),
# a larvatus command (`show OUT`, `report OUT`, `evaluate`, `export`), or the pipeline with
# your own arguments (anything else: `./run_local.sh --input 'corpus/*.jsonl' --output out/`).
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate

install() {  # install once per change of setup.py, per set of extras
  local extras=$1 stamp=".venv/.larvatus-installed${1:+-$1}"
  if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ]; then
    echo "installing larvatus${extras:+[$extras]} into .venv (first run takes a few minutes)"
    python -m pip install -q --upgrade pip
    if [ -n "$extras" ]; then
      python -m pip install -q "torch==2.13.0"   # the CPU wheel; kept out of the runtime install
      python -m pip install -q -e ".[$extras]"
    else
      python -m pip install -q -e .
    fi
    touch "$stamp"
  fi
}

if [ "${1:-}" = "test" ]; then
  shift
  install "test,train"
  # The HTML report's rendering test draws it in headless Chromium (a Debian package).
  if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
      && [ "$(id -u)" = 0 ]; then
    echo "installing chromium (Debian package) for the report rendering test"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
      >/dev/null 2>&1 || echo "could not install chromium: the report rendering test will fail"
  fi
  # The Spark engine's tests start executor JVMs: a Java runtime (a Debian package).
  if ! command -v java >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
      && [ "$(id -u)" = 0 ]; then
    echo "installing a Java runtime (Debian package) for the Spark engine's tests"
    { apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless; } \
      >/dev/null 2>&1 || echo "could not install Java: the Spark engine's tests will fail"
  fi
  exec python -m pytest tests "$@"
fi

install ""
# The next step a finished run prints is a command that works from the user's shell.
export LARVATUS_COMMAND=./run_local.sh
case "${1:-}" in
  show|report|estimate|evaluate|export|train|help|--help|-h|--version|-V)
    exec python -m larvatus.cli "$@" ;;
  run) shift ;;
esac
if [ $# -gt 0 ]; then
  exec python -m larvatus.run "$@"
fi
OUT=output/sample
python -m larvatus.run --input pipeline/sample/news.jsonl --output "$OUT" --overwrite
python -m larvatus.show "$OUT"
echo
echo "next: ./run_local.sh report $OUT   (the HTML report), or in your shell:"
echo "      source .venv/bin/activate   then   larvatus show $OUT"
