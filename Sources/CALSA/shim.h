// System-library module for alsa; the Debian -dev package provides the header.
#pragma once
#include <alsa/asoundlib.h>
