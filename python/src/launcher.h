// tawa._tawa.Launcher, the C++ hot path of a Python launch (launcher.cpp).
#pragma once

#include <nanobind/nanobind.h>

void bindLauncher(nanobind::module_& m);
