#include "a.h"
#  include <sub/c.h>
/* #include "x.h" */
#include "missing.h"
