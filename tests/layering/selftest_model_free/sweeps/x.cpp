// A sweeps file whose include reaches the model through options/: check_layers.py must
// reject it although each include alone goes to a lower layer.
#include "options/y.h"
