// A low layer including a higher one: check_layers.py must reject it.
#include "high/b.h"
