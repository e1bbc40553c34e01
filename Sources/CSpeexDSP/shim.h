// System-library module for speexdsp (libspeexdsp-dev): the preprocessor the
// capture front end runs (noise suppression, automatic gain; its echo
// canceller plugs into the same stage).
#pragma once
#include <speex/speex_preprocess.h>
#include <speex/speex_echo.h>
