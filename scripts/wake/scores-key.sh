# Sourced by training/bin/eval-wake-cv.sh and training/bin/eval-wake-noise.sh (from the
# package root): sets `key`, the folder name under WORK/scores of the cached
# wake scores. The detector's source, so a change to stage 1 or stage 2
# scores everything again; with SET (decoder overrides, e.g.
# "hmm=.build/model/en-us-adapted") also a hash of SET and of the files of
# any model folder it names, so another model (or the same folder rebuilt)
# is never read from another's cache.
key=$(cat Sources/ParleySpeech/WakeDetector.swift Sources/ParleySpeech/WakeVerifier.swift | sha256sum | cut -c1-12)
if [ -n "${SET:-}" ]; then
  set_hash=$(for o in $SET; do
      echo "$o"
      v=${o#*=}
      if [ -d "$v" ]; then find "$v" -type f | LC_ALL=C sort | xargs cat; fi
    done | sha256sum | cut -c1-12)
  key="$key-set-$set_hash"
fi
