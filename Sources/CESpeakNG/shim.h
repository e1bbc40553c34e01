// System-library module for espeak-ng; the Debian -dev package provides the header.
#pragma once
#include <espeak-ng/speak_lib.h>
#include <espeak-ng/espeak_ng.h>
