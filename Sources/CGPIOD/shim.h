// System-library module for libgpiod (Debian's libgpiod-dev): the v1 API
// (Debian 12, 1.6) or the v2 API (Debian 13, 2.2); the Swift side picks one
// with the package trait LibgpiodV2.
// The event loop in ParleyHardware also needs poll() and eventfd(), whose
// headers the Glibc module does not export on every toolchain; they are
// included here so that one module brings everything the GPIO layer calls.
#pragma once
#include <gpiod.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
