#!/usr/bin/env bash
# Prints the path of a Python >= 3.12, preferring 3.12 (the version requirements/*.lock is compiled
# for): $PYTHON if set, then python3.12 on PATH, pyenv's 3.12, then any newer Python found.
# Prints nothing when none is found.
ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
candidates=("${PYTHON:-}" python3.12)
candidates+=($(ls -d "$root"/versions/3.12*/bin/python3.12 2>/dev/null | sort -rV))
candidates+=(python3.13 python3 $(ls -d "$root"/versions/3.1[3-9]*/bin/python3 2>/dev/null | sort -rV))
for candidate in "${candidates[@]}"; do
  [ -n "$candidate" ] || continue
  path=$(command -v "$candidate" 2>/dev/null) || continue
  if ok "$path"; then echo "$path"; exit 0; fi
done
