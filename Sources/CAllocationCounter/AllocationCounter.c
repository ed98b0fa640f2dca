// Placeholder: the interposer is written in its own step.
#include "CAllocationCounter.h"
