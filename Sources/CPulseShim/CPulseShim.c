// Shim translation unit: SwiftPM needs one for the target; the libpulse helpers are static inline in the header.
#include "CPulseShim.h"
