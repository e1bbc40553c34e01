// System-library module for pocketsphinx; the Debian -dev package provides the header.
#pragma once
#include <pocketsphinx.h>
