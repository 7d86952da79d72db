// The plain-C DCQCN core of the module, for C++ (host tests and tools).
#pragma once

extern "C" {
#include "rxecc_dcqcn.h"
}
