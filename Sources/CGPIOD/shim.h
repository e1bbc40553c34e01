// System-library module for libgpiod (Debian's libgpiod-dev, v1 API 1.6).
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
