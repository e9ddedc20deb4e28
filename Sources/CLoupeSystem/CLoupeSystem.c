// Every function of this module is inline, in include/CLoupeSystem.h; a C target needs one source file.
#include "CLoupeSystem.h"
