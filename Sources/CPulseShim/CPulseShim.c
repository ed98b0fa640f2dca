// Shim translation unit: the helpers are static inline in the header.
#include "CPulseShim.h"
