#!/usr/bin/env bash
# Issue 49: the ask rule retuned on denoised audio, one unsure slot asked
# back alone, and the SNR bypass of the neural front end, each chosen on 5
# folds of the 111 coffee-maker development recordings (folded by
# recording: they carry no speaker label) and reported on the fold left out
# (training/parley_training/ask_neural.py states the rules). The decodes are
# training/bin/eval-neural.sh's (none and neural, clean and kitchen 18, 12, 6 dB),
# kept in WORK and reused when there.
#
#   WORK=/tmp/evalneural training/bin/eval-ask-neural.sh
#   PARLEY_BIN=.build/debug PARLEY_SKIP_BUILD=1 WORK=... training/bin/eval-ask-neural.sh
#   ASK_POSTERIORS=1 ...     the ask rule may read word posteriors too (the
#                            daemon does not compute them: their cost)
#   CORROBORATE=0 ...        without corroboration (an app intent the plain
#                            decode agrees with is not asked: on, as the daemon;
#                            the neural decodes run with --corroborate always,
#                            so every order's agreement is the daemon's own)
#
# The decisions do not depend on the build (release or debug).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
work_folder
export WORK=$work
for snr in clean 18 12 6; do
  [ -s "$work/$snr.none.jsonl" ] && [ -s "$work/$snr.neural.jsonl" ] \
    || SNRS=$snr FRONT_ENDS="none neural" training/bin/eval-neural.sh --word-posteriors on --corroborate always
done
python3 -m parley_training.ask_neural "$PARLEY_SHARED_DATA/coffee-maker/labels.json" "$work"
