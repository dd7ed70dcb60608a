#!/usr/bin/env bash
# Builds and runs one libFuzzer target of LifeSync (see Tests/Fuzz/README.md).
#
#   Tests/Fuzz/run.sh TARGET [SECONDS] [LIBFUZZER_ARGS...]
#   TARGET: frame | session | session-nohello | entry | discovery | http     SECONDS: default 60
# One binary holds every target: .build-fuzz/fuzz, run as .build-fuzz/fuzz-TARGET (a link to it).
#
# Environment: FUZZ_BUILD (build folder, default <repo>/.build-fuzz), FUZZ_WORK (corpora and
# crashes, default /tmp/lifesync-fuzz), FUZZ_OPT (-O or -Onone, default -O), FUZZ_MAX_LEN,
# FUZZ_SOURCE (worktree, default, or head: build the committed core from `git archive HEAD`),
# FUZZ_BUILD_ONLY=1 (build the binary and stop: CI builds it beside the debug build).
# Exit status: 0 no crash, 1 a crash (its input under $FUZZ_WORK/crashes/TARGET/), 2 usage or build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${1:-}"
seconds="${2:-60}"
shift $(( $# >= 2 ? 2 : $# ))
build="${FUZZ_BUILD:-$repo/.build-fuzz}"
work="${FUZZ_WORK:-/tmp/lifesync-fuzz}"
opt="${FUZZ_OPT:--O}"

# Every target is compiled into one binary with all of these targets under Sources/ as one module
# (FuzzMain.swift picks the target by the name the binary runs under): one build serves them all.
modules=(LifeSync LifeSyncHTTP)
case "$target" in
    frame|session|session-nohello) max_len=65536 ;;
    entry)     max_len=16384 ;;
    discovery) max_len=256 ;;
    http)      max_len=8192 ;;
    *) echo "usage: $0 frame|session|session-nohello|entry|discovery|http [SECONDS] [LIBFUZZER_ARGS...]" >&2; exit 2 ;;
esac
sources=("$here"/Targets/*.swift)
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
max_len="${FUZZ_MAX_LEN:-$max_len}"

swiftc="$(command -v swiftc || true)"
[[ -n "$swiftc" ]] || swiftc=/opt/swift/usr/bin/swiftc
head_suffix="$([[ "${FUZZ_SOURCE:-worktree}" == head ]] && echo -head || true)"
binary="$build/fuzz$head_suffix"
link="$build/fuzz-$target$head_suffix"   # the name the binary runs this target under
corpus="$work/corpus-$target"
crashes="$work/crashes/$target"
mkdir -p "$build" "$corpus" "$crashes"

folders=("${modules[@]/#/Sources/}" Sources/CSQLite Sources/CCrypto)

# Build when the binary is missing or older than any source it is built from, the target or this script.
if [[ ! -x "$binary" ]] || [[ -n "$(find "${folders[@]/#/$repo/}" "${sources[@]}" "$here/run.sh" -newer "$binary" -print -quit)" ]]; then
    # Compile a snapshot: the core may be edited while swiftc runs.
    snapshot="$binary.src"
    rm -rf "$snapshot" && mkdir -p "$snapshot"
    touch "$binary.stamp"
    if [[ "${FUZZ_SOURCE:-worktree}" == head ]]; then   # the committed core (read-only git archive)
        git -C "$repo" archive HEAD "${folders[@]}" | tar -x -C "$snapshot" --strip-components=1
    else
        cp -rp "${folders[@]/#/$repo/}" "$snapshot/"
    fi
    # The targets become one module here: their imports of each other go.
    find "${modules[@]/#/$snapshot/}" -name '*.swift' -exec sed -i -E '/^import LifeSync[A-Za-z]*$/d' {} +
    mkdir -p "$snapshot/target"
    cp -p "${sources[@]}" "$snapshot/target/"
    mapfile -t core < <(find "${modules[@]/#/$snapshot/}" -name '*.swift' | sort)
    mapfile -t target_files < <(find "$snapshot/target" -name '*.swift' | sort)
    echo "building $binary, every target ($opt, ${#core[@]} core files + ${#target_files[@]} target files)…"
    start=$(date +%s)
    if ! "$swiftc" -sanitize=fuzzer,address -parse-as-library "$opt" -g -num-threads "$(nproc)" -module-name LifeSyncFuzz -package-name LifeSyncFuzz \
            -I "$snapshot/CSQLite" -I "$snapshot/CCrypto" \
            -module-cache-path "$build/module-cache" \
            "${core[@]}" "${target_files[@]}" -lsqlite3 -lcrypto -lm -o "$binary.tmp" 2> "$build/build$head_suffix.log"; then
        grep -v "Cannot export local symbol" "$build/build$head_suffix.log" | tail -40 >&2
        echo "build failed (the core may be mid-edit: retry in a minute); full log: $build/build$head_suffix.log" >&2
        exit 2
    fi
    mv "$binary.tmp" "$binary"
    touch -r "$binary.stamp" "$binary"   # sources edited during the build count as newer
    echo "built in $(( $(date +%s) - start )) s"
fi
ln -sfn "$(basename "$binary")" "$link"
[[ "${FUZZ_BUILD_ONLY:-}" == 1 ]] && exit 0

# Seeds: every protocol vector (and, for the sessions, sequences the binary builds with the real
# encoder). Re-writing them is harmless; the corpus keeps what the fuzzer found.
python3 "$here/seeds.py" "$target" "$repo/Protocol/vectors" "$corpus"
case "$target" in
    session|session-nohello)
        LIFESYNC_FUZZ_SEEDS="$corpus" "$link" ;;
    frame)
        # The session seeds have the same shape (control byte + stream): reuse them if built.
        for s in "$work/corpus-session"/gen-*; do [[ -e "$s" ]] && cp -n "$s" "$corpus/" ; done ;;
esac

# A Swift trap (precondition, fatalError) goes to ASan as SIGILL: a symbolised stack, no slow
# Swift backtracer; frame pointers are not kept, so unwind slowly on a crash.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-handle_sigill=1:handle_abort=1:fast_unwind_on_fatal=0:detect_leaks=0}"
symbolizer="$(command -v llvm-symbolizer || echo "$(dirname "$swiftc")/llvm-symbolizer")"
[[ -x "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

log="$work/$target-$(date +%Y%m%d-%H%M%S).log"
echo "fuzzing $target for ${seconds}s (max_len $max_len); log $log; crashes go to $crashes/"
set +e
"$link" "$corpus" -max_total_time="$seconds" -max_len="$max_len" -dict="$here/lifesync.dict" \
    -artifact_prefix="$crashes/" -print_final_stats=1 -detect_leaks=0 -timeout=20 -rss_limit_mb=3072 \
    "$@" > "$log" 2>&1
status=$?
set -e

grep -aE '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 || true
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
elapsed=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
if [[ -n "$runs" && -n "$elapsed" && "$elapsed" -gt 0 ]]; then
    echo "final: $runs runs in ${elapsed}s = $(( runs / elapsed )) exec/s"
fi
if [[ $status -ne 0 ]]; then
    echo "CRASH (libFuzzer exit $status):" >&2
    grep -aE 'FUZZ:|Fatal error|ERROR: AddressSanitizer|ERROR: libFuzzer|SUMMARY|Test unit written|^ +#[0-9] ' "$log" | head -20 >&2
    echo "full log: $log" >&2
    exit 1
fi
