#!/usr/bin/env bash
# scripts/build-and-run.sh: the README's first command. Installs what is
# missing (scripts/bootstrap.sh), builds everything in release mode into
# build/ (the `release` preset; programs in build/bin/), solves the example
# problem models/tutorial.json and checks the answer with `rackfit check`.
#   bash scripts/build-and-run.sh [PROBLEM.json]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
problem=${1:-models/tutorial.json}
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/bootstrap.sh

echo "== configure (release preset -> build/)"
cmake --preset release
echo "== build"
cmake --build --preset release -j "$jobs"

if [[ ! -f "$problem" ]]; then
    echo "build-and-run: error: $problem does not exist" >&2
    exit 1
fi
answer=build/$(basename "$problem" .json).answer.json
echo "== build/bin/rackfit solve $problem --pretty > $answer"
build/bin/rackfit solve "$problem" --pretty >"$answer"
cat "$answer"
echo "== build/bin/rackfit check $problem $answer"
build/bin/rackfit check "$problem" "$answer"
