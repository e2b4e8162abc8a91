#!/usr/bin/env bash
# Make the checkout fit a lent GPU machine and pack the data its training run needs.
#
#     bash benchmarks/gpu_pack.sh pack latin      # or: pack greek
#     # device run, carry [".gpu"]:  OUT=$OUT TRAIN=latin bash benchmarks/gpu_session.sh 540
#     bash benchmarks/gpu_pack.sh unpack          # at once after the run
#
# The device machine gets a copy of the working tree (tracked files, untracked ones git does not
# ignore, and what `carry` names): at most 64 MiB, and the tracked tree is about 132 MiB. `pack`
# leaves behind what a training run and the suite's CUDA paths do without -- the memories of the
# builtins (the models load and decode without them) and benchmarks/results -- by untracking them
# and naming them in .git/info/exclude, and writes the run's data into .gpu/ (ignored). It prints
# what will travel. `unpack` tracks them again; nothing in the working tree is deleted by either.
# Never commit between the two: the index holds the left-behind files as removed.
set -euo pipefail
DATA=${DATA:-../shared/data}
LEAVE=(data/models/english/memory.safetensors data/models/latin/phrases.safetensors
       data/models/latin/shapes.safetensors data/models/greek/gate.json
       data/models/greek/sources benchmarks/results)
MARK="# gpu_pack.sh: left behind on the device machine"
EXCLUDE=.git/info/exclude

usage() { echo "usage: bash benchmarks/gpu_pack.sh pack latin|greek | unpack" >&2; exit 2; }

pack_data() {
  rm -rf .gpu && mkdir -p .gpu
  case "$1" in
    latin) cp "$DATA/latin/edh_epidoc.tar.xz" "$DATA/latin/perseus_lat.txt.xz" .gpu/ ;;
    greek) tar czf .gpu/iospe.tgz -C "$DATA/greek" iospe
           tar czf .gpu/iaph.tgz -C "$DATA/greek" iaph
           gzip -c "$DATA/greek/perseus_grc.txt" > .gpu/perseus_grc.txt.gz ;;
    *) usage ;;
  esac
}

case "${1:-}" in
  pack)
    [ $# -eq 2 ] && { [ "$2" = latin ] || [ "$2" = greek ]; } || usage
    grep -qxF "$MARK" "$EXCLUDE" 2>/dev/null && { echo "already packed: unpack first" >&2; exit 2; }
    pack_data "$2"
    git rm -r -q --cached -- "${LEAVE[@]}"
    mkdir -p "$(dirname "$EXCLUDE")"
    { echo "$MARK"; printf '/%s\n' "${LEAVE[@]}"; echo "$MARK end"; } >> "$EXCLUDE"
    tracked=$(git ls-files -z | xargs -0 cat | wc -c)
    carried=$(cat .gpu/* | wc -c)
    echo "travels: tracked $((tracked / 1048576)) MiB + .gpu $((carried / 1048576)) MiB" \
         "(limit 64 MiB); carry [\".gpu\"], then: bash benchmarks/gpu_pack.sh unpack"
    ;;
  unpack)
    [ $# -eq 1 ] || usage
    git reset -q -- "${LEAVE[@]}"
    if [ -f "$EXCLUDE" ]; then
      sed -i "/^$MARK\$/,/^$MARK end\$/d" "$EXCLUDE"
    fi
    git status --short -- "${LEAVE[@]}" | head -5
    echo "unpacked: the left-behind files are tracked again"
    ;;
  *) usage ;;
esac
