#!/bin/bash
# o263: `--sim` writes the bundled simulated radio's module into a cache folder, checks its hash, then has
# libSoapySDR load it by path. Without HOME and XDG_CACHE_HOME the folder is `/tmp/rxnode-cache-$USER`, which
# another user may have made first (and so may replace the file between the check and the load: code run in
# rxnode's process). Here the folder belongs to `nobody` (uid 65534) and is writable by all: `--sim inventory`
# loaded the module from it. Expected: a folder of another user is refused, naming the owner. Needs root
# (to make a folder of another user). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "broken: (cannot check: needs root to make another user's folder)"; exit 0; }
L=$(mktemp -d /tmp/o1.simcache.XXXXXX); chmod 755 "$L"
mkdir -p "$L/cache/rxnode"; chown -R 65534:65534 "$L/cache"; chmod 777 "$L/cache/rxnode"
XDG_CACHE_HOME="$L/cache" HOME="$L/cache" "$RXN" --sim --json inventory > "$L/out" 2>&1; rc=$?
echo "inventory: rc=$rc $(head -c 300 "$L/out" | tr '\n' ' ')"
mods=$(find "$L/cache/rxnode" -name 'librxsim-*' | wc -l); echo "modules written into the foreign folder: $mods"
bad=""
[ "$rc" = 0 ] && bad="$bad loaded-from-foreign-folder(rc=0)"
[ "$rc" != 0 ] && ! grep -q "uid 65534" "$L/out" && bad="$bad refusal-does-not-name-owner"
panics "$L/out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: the simulated radio's module is loaded from a folder another user owns and anyone can write:$bad"; exit 0; }; echo held; exit 1
