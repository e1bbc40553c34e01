// System-library module for libgpiod; the Debian -dev package provides the header.
#pragma once
#include <gpiod.h>
