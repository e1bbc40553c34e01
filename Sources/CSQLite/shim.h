// System-library module for sqlite3; the Debian -dev package provides the header.
#pragma once
#include <sqlite3.h>
