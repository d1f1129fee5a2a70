// Intentionally empty: the module only declares LLVMFuzzerRunDriver (CFuzzDriver.h).
#include "CFuzzDriver.h"
